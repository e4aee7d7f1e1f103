"""Batches handed to Python without copies: the Loader's owned batches, ShardDataset's shared-memory slots
across DataLoader workers, epochs through persistent workers, and the resume loop of docs/reader.md."""
import gc
import glob
import os
import pickle
import warnings

import numpy as np
import pytest

import libshard

torch = pytest.importorskip("torch")
import libshard.torch  # noqa: E402
from shard_fixtures import write_mask_shard, write_two_shards  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402


@pytest.fixture
def shards(tmp_path):
    return write_two_shards(tmp_path)


def make(shards, **kw):
    kw.setdefault("rank", 0)
    kw.setdefault("world_size", 1)
    return libshard.torch.ShardDataset(shards, 3, image_size=(12, 16), shuffle=True, seed=7, **kw)


def equal(a, b):
    return all(torch.equal(torch.as_tensor(x), torch.as_tensor(y)) for x, y in zip(a, b))


def in_a_segment(tensor):
    """Whether `tensor`'s memory is one of the shared-memory slot segments mapped in this process."""
    p = tensor.data_ptr()
    for address, size in libshard._segments.TRAINER.mappings():
        if address <= p < address + size:
            return True
    return False


# --- the Loader ------------------------------------------------------------------------------------------


def test_loader_batches_are_named_tuples_that_own_their_memory(shards):
    with libshard.Loader(shards, 3, image_size=(12, 16)) as loader:
        batch = next(iter(loader))
        assert isinstance(batch, libshard.Batch) and batch._fields == ("images", "labels")
        images, labels = batch
        assert images is batch.images and labels is batch.labels
        assert isinstance(images.base, libshard._libshard._BatchOwner)  # no copy: the loader's block
        assert images.flags.writeable and images.flags.c_contiguous
    assert int(batch.images.sum()) > 0  # usable after the loader is closed


def test_twenty_batches_kept_across_an_epoch_equal_a_fresh_decode(shards):
    options = dict(image_size=(12, 16), shuffle=True, seed=3, layout="NCHW", dtype="float32",
                   mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3), threads=2)
    loader = libshard.Loader(shards, 1, **options)
    kept = [b for _ in range(3) for b in loader][:20]  # 25 batches an epoch: more than the ring and pool hold
    assert len(kept) == 20
    # Reference: a loader with caller buffers, each batch copied out at once.
    bufs = [(np.empty((1, 3, 12, 16), np.float32), np.empty(1, np.int64)) for _ in range(2)]
    ref = libshard.Loader(shards, 1, buffers=bufs, **options)
    fresh = [tuple(a.copy() for a in b) for b in ref][:20]
    for k, f in zip(kept, fresh):
        assert np.array_equal(k.images, f[0]) and np.array_equal(k.labels, f[1])
    loader.close()
    for k, f in zip(kept, fresh):  # still intact after the loader is gone
        assert np.array_equal(k.images, f[0])


def test_masks_come_as_a_segmentation_batch(tmp_path):
    write_mask_shard(tmp_path / "m.tfrecord", 4)
    with libshard.Loader(str(tmp_path / "m.tfrecord"), 2, image_size=8, masks=True) as loader:
        b = next(iter(loader))
        assert isinstance(b, libshard.SegmentationBatch) and b._fields == ("images", "labels", "masks")
        assert b.masks.shape == (2, 8, 8) and b.masks.base is b.images.base
        assert b.masks[1, 0, 0] == 1


# --- ShardDataset and DataLoader workers --------------------------------------------------------------------


@pytest.mark.parametrize("workers", [0, 2])
def test_batches_reach_the_loop_without_a_copy(shards, workers):
    ds = make(shards, layout="NCHW", dtype="float32")
    for batch in DataLoader(ds, batch_size=None, num_workers=workers):
        assert isinstance(batch, libshard.Batch) and isinstance(batch.images, torch.Tensor)
        # workers=0: torch.from_numpy of the Loader's owned arrays (test_loader_batches_... checks those).
        assert in_a_segment(batch.images) == in_a_segment(batch.labels) == bool(workers)


def test_a_loop_that_keeps_every_batch_never_sees_one_overwritten(shards):
    # Two slots per worker, nine batches kept: most come in fresh memory, none is overwritten.
    ds = make(shards, worker_slots=2, augment="random-resized-crop")
    kept = list(DataLoader(ds, batch_size=None, num_workers=2))
    reference = [tuple(t.clone() for t in b) for b in DataLoader(make(shards, augment="random-resized-crop"),
                                                                    batch_size=None, num_workers=0)]
    assert len(kept) == len(reference) == 9
    for k, r in zip(kept, reference):
        assert equal(k, r)


def test_slots_are_reused_once_the_loop_lets_go(shards):
    # The default 8 slots: the Loader's ring (3), DataLoader's prefetch (2) and two held by the loop.
    ds = make(shards)
    dl = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        ds.set_epoch(epoch)
        for batch in dl:
            assert in_a_segment(batch.images), "epoch %d: a batch outside the slots" % epoch


def test_abandoned_iterators_do_not_use_up_the_slots(shards):
    ds = make(shards)
    dl = DataLoader(ds, batch_size=None, num_workers=2, prefetch_factor=2)
    for _ in range(4):  # each leaves prefetched batches unread in the queue
        it = iter(dl)
        next(it)
        del it
        gc.collect()
    for batch in dl:
        assert in_a_segment(batch.images)


def test_set_epoch_reaches_persistent_workers(shards):
    ds = make(shards, augment="random-resized-crop")
    dl = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
    by_epoch = []
    for epoch in range(3):
        ds.set_epoch(epoch)
        by_epoch.append([tuple(t.clone() for t in b) for b in dl])
    for epoch in range(3):
        ref = make(shards, augment="random-resized-crop")
        ref.set_epoch(epoch)
        expected = list(DataLoader(ref, batch_size=None, num_workers=0))
        assert len(by_epoch[epoch]) == len(expected)
        assert all(equal(a, b) for a, b in zip(by_epoch[epoch], expected)), "epoch %d" % epoch
    assert [b[1].tolist() for b in by_epoch[0]] != [b[1].tolist() for b in by_epoch[1]]


def train(ds, dl, epochs, start_epoch=0, stop_at=None):
    """docs/reader.md's loop: set_epoch, enumerate, a checkpoint after every batch. Returns the labels seen
    and the checkpoints, stopping (as a killed job would) after `stop_at` = (epoch, step)."""
    seen, checkpoints = [], {}
    for epoch in range(start_epoch, epochs):
        ds.set_epoch(epoch)
        for step, (x, y) in enumerate(dl):
            seen.append((epoch, y.tolist(), float(x.float().sum())))
            checkpoints[(epoch, step)] = pickle.dumps(ds.state_dict(batch=step + 1))
            if stop_at == (epoch, step):
                return seen, checkpoints
    return seen, checkpoints


@pytest.mark.parametrize("workers", [0, 2])
def test_the_documented_resume_loop_resumes_exactly(shards, workers):
    kw = dict(augment="random-resized-crop")
    ds = make(shards, **kw)
    full, _ = train(ds, DataLoader(ds, batch_size=None, num_workers=workers), 3)
    assert len(full) == 3 * 9
    # Killed after epoch 1, step 3; resumed from its checkpoint; killed again at epoch 1, step 6 (a
    # checkpoint taken inside a resumed epoch) and resumed again.
    ds = make(shards, **kw)
    first, ck = train(ds, DataLoader(ds, batch_size=None, num_workers=workers), 3, stop_at=(1, 3))
    state = pickle.loads(ck[(1, 3)])
    assert (state["epoch"], state["consumed"]) == (1, 12)  # 4 batches of 3
    ds = make(shards, **kw)
    ds.load_state_dict(state)
    second, ck = train(ds, DataLoader(ds, batch_size=None, num_workers=workers), 3, start_epoch=state["epoch"],
                       stop_at=(1, 2))
    state = pickle.loads(ck[(1, 2)])
    assert (state["epoch"], state["consumed"]) == (1, 21), "the resumed pass counts from where it started"
    ds = make(shards, **kw)
    ds.load_state_dict(state)
    third, _ = train(ds, DataLoader(ds, batch_size=None, num_workers=workers), 3, start_epoch=state["epoch"])
    assert first + second + third == full


def test_a_checkpoint_at_an_epochs_end_resumes_at_the_next_epoch(shards):
    ds = make(shards)
    for _ in ds:
        pass
    state = ds.state_dict()
    assert state["consumed"] == ds.num_samples
    fresh = make(shards)
    fresh.load_state_dict(state)
    fresh.set_epoch(0)
    assert list(fresh) == []
    fresh.set_epoch(1)
    assert len(list(fresh)) == len(ds)


def test_state_dict_without_batch_refuses_to_guess_with_workers(shards):
    ds = make(shards)
    assert ds.state_dict()["consumed"] == 0
    it = iter(DataLoader(ds, batch_size=None, num_workers=2))
    next(it)
    with pytest.raises(ValueError, match="pass batch="):
        ds.state_dict()
    assert ds.state_dict(batch=1)["consumed"] == 3
    with pytest.raises(ValueError, match="outside the epoch"):
        ds.state_dict(batch=10)
    del it


def test_pin_memory_without_cuda_warns_and_gives_ordinary_batches(shards):
    if torch.cuda.is_available():
        ds = make(shards, pin_memory=True)
        for b in DataLoader(ds, batch_size=None, num_workers=0):
            assert b.images.is_pinned()
        return
    with pytest.warns(UserWarning, match="pin_memory=True but CUDA is not available"):
        ds = make(shards, pin_memory=True)
    got = [tuple(t.clone() for t in b) for b in DataLoader(ds, batch_size=None, num_workers=2)]
    ref = list(DataLoader(make(shards), batch_size=None, num_workers=0))
    assert all(equal(a, b) for a, b in zip(got, ref))


def test_slot_segments_are_removed_with_the_dataset(shards):
    ds = make(shards)
    uid = ds._uid
    for _ in DataLoader(ds, batch_size=None, num_workers=2):
        pass
    pattern = os.path.join(libshard._segments.SEGMENT_DIR, "libshard-%d-%s-*" % (os.getpid(), uid))
    assert len(glob.glob(pattern)) == 2
    del ds
    gc.collect()
    assert glob.glob(pattern) == []


def test_worker_slots_is_bounded(shards):
    for bad in (0, 1025, 2.0, True):
        with pytest.raises(ValueError, match="worker_slots"):
            make(shards, worker_slots=bad)


@pytest.mark.parametrize("workers", [0, 2])
def test_extras_cross_to_the_loop(shards, workers):
    ds = make(shards, extras=["image/class/label"])
    for batch in DataLoader(ds, batch_size=None, num_workers=workers):
        assert isinstance(batch, libshard.KeyedBatch)
        assert batch.keys["image/class/label"] == batch.labels.tolist()
        assert in_a_segment(batch.images) == bool(workers)


def test_slot_sets_refuse_what_they_cannot_use(shards, tmp_path):
    not_a_segment = tmp_path / "x.slots"
    not_a_segment.write_bytes(b"\0" * 4096)
    with pytest.raises(ValueError, match="not a libshard batch-slot segment"):
        libshard._libshard._SlotSet.open(str(not_a_segment))
    with pytest.raises(FileNotFoundError):
        libshard._libshard._SlotSet.open(str(tmp_path / "missing.slots"))
    with pytest.raises(ValueError, match=r"slots: 0 is not in 1\.\.1024"):
        libshard._libshard._SlotSet.create(str(tmp_path / "y.slots"), 0, 64, 1, 0)
    slots = libshard._libshard._SlotSet.from_buffers([np.zeros(8192, np.uint8)], 12 * 16 * 3 * 3, 3, 0)
    bufs = [(np.empty((3, 12, 16, 3), np.uint8), np.empty(3, np.int64))]
    with pytest.raises(ValueError, match="buffers and slots: give one or the other"):
        libshard.Loader(shards, 3, image_size=(12, 16), buffers=bufs, slots=slots)
    with pytest.raises(ValueError, match="holds fewer than"):
        libshard._libshard._SlotSet.from_buffers([np.zeros(16, np.uint8)], 12 * 16 * 3 * 3, 3, 0)
