"""libshard.torch.ShardDataset with torch's DataLoader: worker and rank splits, epochs, resume."""
import os
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import libshard  # noqa: E402
import libshard.torch  # noqa: E402
from shard_fixtures import write_shard  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402


@pytest.fixture
def shards(tmp_path):
    write_shard(tmp_path / "d-0.tfrecord", 6, 0)
    write_shard(tmp_path / "d-1.tfrecord", 5, 6)
    return str(tmp_path / "d-*.tfrecord")


def make(shards, **kw):
    kw.setdefault("rank", 0)
    kw.setdefault("world_size", 1)
    return libshard.torch.ShardDataset(shards, 3, image_size=(12, 16), shuffle=True, seed=7, **kw)


def labels_of(batches):
    return [b[1].tolist() for b in batches]


def run(ds, workers):
    return [tuple(t.clone() for t in b) for b in DataLoader(ds, batch_size=None, num_workers=workers)]


def test_yields_torch_tensors_without_a_copy(shards):
    ds = make(shards, layout="NCHW", dtype="float32", mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    images, labels = next(iter(ds))
    assert isinstance(images, torch.Tensor) and images.dtype == torch.float32
    assert images.shape == (3, 3, 12, 16) and labels.dtype == torch.int64
    assert -1.0 <= images.min() and images.max() <= 1.0
    assert len(ds) == 4 and ds.num_samples == 11


def test_threads_zero_is_one_per_core(shards):
    # The Loader's threads=0 (one per core, as convert and verify take it) passes through ShardDataset.
    assert labels_of(run(make(shards, threads=0), 0)) == labels_of(run(make(shards, threads=1), 0))


def test_each_sample_once_per_epoch_across_two_workers(shards):
    ds = make(shards)
    got = run(ds, 2)
    assert len(got) == len(ds) == 4
    assert sorted(sum(labels_of(got), [])) == list(range(11))
    # The DataLoader takes the workers' batches in turn: the same batches as in one process, in order.
    single = run(make(shards), 0)
    assert labels_of(got) == labels_of(single)
    for a, b in zip(got, single):
        assert torch.equal(a[0], b[0])


def test_two_ranks_with_drop_last_get_disjoint_equal_parts(shards):
    parts = [sum(labels_of(run(make(shards, rank=r, world_size=2, drop_last=True), 2)), []) for r in range(2)]
    assert len(parts[0]) == len(parts[1]) == 3  # floor(11 / 2) = 5 samples each, the short batch dropped
    assert not set(parts[0]) & set(parts[1])
    assert len(make(shards, rank=1, world_size=2, drop_last=True)) == 1


def test_rank_and_world_size_default_to_the_environment(shards, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    ds = libshard.torch.ShardDataset(shards, 3, image_size=(12, 16), shuffle=True, seed=7, drop_last=True)
    assert (ds.rank, ds.world_size) == (1, 2)
    assert labels_of(run(ds, 0)) == labels_of(run(make(shards, rank=1, world_size=2, drop_last=True), 0))
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ValueError, match="RANK='x'"):
        libshard.torch.ShardDataset(shards, 3)
    with pytest.raises(ValueError, match="rank and world_size: give both or neither"):
        libshard.torch.ShardDataset(shards, 3, rank=0)
    with pytest.raises(ValueError, match="worker: not a Loader option here"):
        libshard.torch.ShardDataset(shards, 3, rank=0, world_size=1, worker=1)


def test_set_epoch_changes_the_order_not_the_contents(shards):
    ds = make(shards)
    e0 = labels_of(run(ds, 2))
    assert labels_of(run(ds, 2)) == e0  # no set_epoch: the same epoch again, as DistributedSampler
    ds.set_epoch(1)
    e1 = labels_of(run(ds, 2))
    assert e1 != e0 and sorted(sum(e1, [])) == sorted(sum(e0, []))
    ds.set_epoch(0)
    assert labels_of(run(ds, 0)) == e0


@pytest.mark.parametrize("workers", [0, 2])
def test_state_dict_resume_gives_identical_remaining_batches(shards, workers):
    ds = make(shards, augment="random-resized-crop")
    ds.set_epoch(3)
    full = run(ds, workers)
    if workers == 0:
        it = iter(ds)
        next(it)
        next(it)
        state = ds.state_dict()  # counted in this process
    else:
        state = ds.state_dict(batch=2)  # the training loop's step
    assert state["epoch"] == 3 and state["consumed"] == 6  # 2 batches of 3
    fresh = make(shards, augment="random-resized-crop")
    fresh.load_state_dict(pickle.loads(pickle.dumps(state)))
    rest = run(fresh, workers)
    assert len(rest) == len(full) - 2
    for a, b in zip(rest, full[2:]):
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    with pytest.raises(ValueError, match=r'state\["seed"\]: saved by a dataset with another seed'):
        libshard.torch.ShardDataset(shards, 3, rank=0, world_size=1, seed=8, image_size=(12, 16)).load_state_dict(state)


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
def test_resume_at_any_batch_with_three_workers(shards):
    full = run(make(shards), 3)
    for n in range(len(full) + 1):
        ds = make(shards)
        ds.load_state_dict(make(shards).state_dict(batch=n))
        assert labels_of(run(ds, 3)) == labels_of(full[n:])


def test_pickles_for_spawned_workers(shards):
    ds = make(shards)
    next(iter(ds))
    copy = pickle.loads(pickle.dumps(ds))
    assert labels_of(run(copy, 0)) == labels_of(run(make(shards), 0))


@pytest.mark.parametrize("workers", [0, 2])
def test_skipped_records_reach_the_dataset_from_workers_with_one_warning_per_file(tmp_path, workers):
    """on_error="skip": what was skipped is in ds.skipped, gathered from DataLoader workers too, and each file
    warns once (issue 32: no .skipped, no warning, and with workers the list stayed in the workers)."""
    import warnings
    write_shard(tmp_path / "a.tfrecord", 7, 0)
    with libshard.ShardWriter(str(tmp_path / "b.tfrecord")) as w:
        for _ in range(2):
            w.write({"image/encoded": b"definitely not an image", "image/class/label": 99})
    ds = libshard.torch.ShardDataset([str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")], 3,
                                     image_size=(12, 16), on_error="skip", rank=0, world_size=1)
    assert ds.skipped == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            labels = [y for _, ys in DataLoader(ds, batch_size=None, num_workers=workers) for y in ys.tolist()]
            assert 99 not in labels and len(labels) == 9
    assert sorted((os.path.basename(s["file"]), s["record"]) for s in ds.skipped) == [("b.tfrecord", 0),
                                                                                      ("b.tfrecord", 1)]
    assert all(s["reason"] for s in ds.skipped)
    said = [str(w.message) for w in caught if "skipped" in str(w.message)]
    assert len(said) == 1 and "b.tfrecord" in said[0], said


@pytest.mark.parametrize("workers", [0, 2])
def test_auto_collation_over_whole_batches_says_to_write_batch_size_none(shards, workers):
    """DataLoader(ds) collates by default (batch_size=1): over ShardDataset's whole batches that gave
    [1, 3, H, W, C] silently (issue 32); now a TypeError says what to write."""
    ds = make(shards)
    with pytest.raises(TypeError, match=r"DataLoader\(ds, batch_size=None"):
        next(iter(DataLoader(ds, num_workers=workers)))
    images, labels = next(iter(DataLoader(ds, batch_size=None, num_workers=workers)))
    assert images.shape[0] == 3 and labels.shape == (3,)
