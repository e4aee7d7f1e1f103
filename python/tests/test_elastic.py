"""Elastic resume (issue 34): a state saved on one shape (world_size, rank, batch_size, DataLoader workers)
continues on another, the rest of the epoch cut anew, each sample once; skips survive a resume."""
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import libshard
from shard_fixtures import write_shard

N = 197  # samples: 100 + 97


@pytest.fixture
def shards(tmp_path):
    write_shard(tmp_path / "d-0.tfrecord", 100, 0)
    write_shard(tmp_path / "d-1.tfrecord", 97, 100)
    return str(tmp_path / "d-*.tfrecord")


def ranks(shards, world, batch, **kw):
    return [libshard.Loader(shards, batch, image_size=(12, 16), shuffle=True, seed=5, rank=r, world_size=world,
                            threads=1, prefetch=1, extras=["image/class/label"], **kw) for r in range(world)]


def step(loaders):
    """One global batch: each rank's next batch, in rank order, as (labels, images, extras' labels)."""
    out = [next(L) for L in loaders]
    labels = np.concatenate([b.labels for b in out]).tolist()
    assert labels == sum((b.keys["image/class/label"] for b in out), [])  # extras= names the same records
    return labels, np.concatenate([b.images for b in out])


def position(loaders):
    """The state every rank saved at this step: the same global position on each."""
    states = [L.state_dict() for L in loaders]
    for s in states:
        assert (s["epoch"], s["consumed"]) == (states[0]["epoch"], states[0]["consumed"])
    return states[0]


def test_eight_four_six_one_ranks_cover_the_epoch_once(shards):
    seen = []
    state = None
    for world, batch, steps in ((8, 4, 2), (4, 4, 3), (6, 3, 2), (1, 5, None)):
        loaders = ranks(shards, world, batch)
        if state is not None:
            for L in loaders:
                L.load_state_dict(state)
        before = state["consumed"] if state else 0
        if steps is None:  # world size 1 to the epoch's end: no padding
            for b in loaders[0]:
                seen += b.labels.tolist()
        else:
            for _ in range(steps):
                seen += step(loaders)[0]
        state = position(loaders)
        if steps is not None:
            assert state["consumed"] == before + steps * world * batch
            assert (state["world_size"], state["batch_size"]) == (world, batch)
    assert (state["epoch"], state["consumed"]) == (1, 0)  # the next epoch, from its start
    assert len(seen) == N and sorted(seen) == list(range(N))  # every sample once, none repeated


def test_the_same_global_batch_gives_the_same_batches_on_any_world_size(shards):
    # 8 x 4, 4 x 8 and 2 x 16: global batches of 32 samples (197 padded to 200 on each: the same end too).
    kw = dict(augment="random-resized-crop")
    eight = ranks(shards, 8, 4, **kw)
    full = [step(eight) for _ in range(2 * len(eight[0]))]  # two epochs
    assert sorted(sum((lb for lb, _ in full[:7]), [])) == sorted(list(range(N)) + [lb for lb in full[0][0][:3]])
    for world, batch in ((4, 8), (2, 16)):
        other = ranks(shards, world, batch, **kw)
        assert len(other[0]) == 7
        for k in range(3):
            labels, images = step(other)
            assert labels == full[k][0]
            np.testing.assert_array_equal(images, full[k][1])  # the same crops: per sample, not per rank
    # Saved on 8 x 4 after 3 global batches, resumed on 4 x 8: the uninterrupted run's batches from there,
    # to the end of the epoch and through the next one.
    eight = ranks(shards, 8, 4, **kw)
    for _ in range(3):
        step(eight)
    state = position(eight)
    assert state["consumed"] == 96
    four = ranks(shards, 4, 8, **kw)
    for L in four:
        L.load_state_dict(state)
    assert len(four[0]) == 7  # an epoch is still 7 batches; this one has 4 left
    for k in range(3, 14):
        labels, images = step(four)
        assert labels == full[k][0], k
        np.testing.assert_array_equal(images, full[k][1])


def test_epoch_end_rules(shards):
    # drop_last=False: 197 padded to 198 for 3 ranks (sample order[0] again), the last global batch of
    # 198 - 3 * 60 = 18 cut 6 + 6 + 6.
    three = ranks(shards, 3, 20)
    got = [step(three)[0] for _ in range(len(three[0]))]
    assert [len(g) for g in got] == [60, 60, 60, 18]
    flat = sum(got, [])
    assert sorted(flat[:N]) == list(range(N)) and flat[N] == flat[0]
    # drop_last=True: the incomplete global batch (17 samples) is dropped.
    three = ranks(shards, 3, 20, drop_last=True)
    got = [step(three)[0] for _ in range(len(three[0]))]
    assert [len(g) for g in got] == [60, 60, 60] and len(set(sum(got, []))) == 180
    # Resumed near the end on another shape: the rest is cut with this shape's rule.
    three = ranks(shards, 3, 20)
    for _ in range(3):
        step(three)
    state = position(three)
    assert state["consumed"] == 180
    two = ranks(shards, 2, 4)
    for L in two:
        L.load_state_dict(state)
    rest = [step(two)[0] for _ in range(3)]  # 17 left, padded to 18: 8, 8, then 1 + 1
    assert [len(r) for r in rest] == [8, 8, 2]
    assert sum(rest, [])[:17] == flat[180:N]
    assert position(two)["epoch"] == 1


def test_a_state_of_another_dataset_seed_or_order_is_refused_by_name(shards, tmp_path):
    state = ranks(shards, 1, 4)[0].state_dict()
    with pytest.raises(ValueError, match=r'state\["seed"\]'):
        libshard.Loader(shards, 4, image_size=(12, 16), shuffle=True, seed=6).load_state_dict(state)
    with pytest.raises(ValueError, match=r'state\["order"\]'):
        libshard.Loader(shards, 4, image_size=(12, 16), order="block-shuffle", seed=5).load_state_dict(state)
    with pytest.raises(ValueError, match=r'state\["dataset"\]'):
        libshard.Loader(str(tmp_path / "d-0.tfrecord"), 4, image_size=(12, 16), shuffle=True,
                        seed=5).load_state_dict(state)
    with pytest.raises(ValueError, match=r'state\["consumed"\] must be an integer in 0..197'):
        ranks(shards, 2, 4)[1].load_state_dict(dict(state, consumed=198))
    with pytest.raises(ValueError, match="num_workers > 1"):
        libshard.Loader(shards, 4, image_size=(12, 16), worker=1, num_workers=2).state_dict()


def test_a_state_of_an_earlier_shuffle_is_refused_and_file_order_still_loads(shards):
    # Releases before issue 44 drew the shuffles by Fisher-Yates: their positions index another order, so a state
    # without "permutation" (or with another one) must not continue silently in this one.
    state = ranks(shards, 1, 4)[0].state_dict()
    assert state["permutation"] == "feistel8/1"
    old = {k: v for k, v in state.items() if k != "permutation"}
    for saved in (old, dict(state, permutation="fisher-yates")):
        with pytest.raises(ValueError, match=r'state\["permutation"\].*another permutation.*consumed 0'):
            libshard.Loader(shards, 4, image_size=(12, 16), shuffle=True, seed=5).load_state_dict(saved)
    # The torch dataset checks it too, before any worker starts.
    import libshard.torch as lt
    ds = lt.ShardDataset(shards, 4, image_size=(12, 16), shuffle=True, seed=5)
    with pytest.raises(ValueError, match="permutation"):
        ds.load_state_dict(dict(old, rank=0, world_size=1, batch_size=4))
    # File order is the same in every release: a sequential state without it still continues.
    seq = libshard.Loader(shards, 4, image_size=(12, 16))
    first = [next(seq).labels.tolist() for _ in range(2)]
    saved = {k: v for k, v in seq.state_dict().items() if k != "permutation"}
    again = libshard.Loader(shards, 4, image_size=(12, 16))
    again.load_state_dict(saved)
    whole = [b.labels.tolist() for b in libshard.Loader(shards, 4, image_size=(12, 16))]
    assert whole[:2] == first and next(again).labels.tolist() == whole[2]


def test_skips_survive_a_resume(tmp_path):
    write_shard(tmp_path / "a.tfrecord", 9, 0)
    with libshard.ShardWriter(str(tmp_path / "b.tfrecord")) as w:
        for _ in range(3):
            w.write({"image/encoded": b"definitely not an image", "image/class/label": 99})
    write_shard(tmp_path / "c.tfrecord", 9, 9)
    files = [str(tmp_path / f) for f in ("a.tfrecord", "b.tfrecord", "c.tfrecord")]

    def make(world=1, rank=0, batch=3):
        return libshard.Loader(files, batch, image_size=(12, 16), shuffle=True, seed=2, on_error="skip",
                               world_size=world, rank=rank, prefetch=1)

    full = make()
    uninterrupted = [b.labels.tolist() for b in full]
    skips = sorted((os.path.basename(s["file"]), s["record"]) for s in full.skipped)
    assert skips == [("b.tfrecord", 0), ("b.tfrecord", 1), ("b.tfrecord", 2)]
    assert 99 not in sum(uninterrupted, [])
    for cut in range(1, len(uninterrupted)):
        first = make()
        for _ in range(cut):
            next(first)
        state = first.state_dict()
        # The same shape, and 3 ranks x 1 (the same global batch of 3).
        again = make()
        again.load_state_dict(state)
        assert [b.labels.tolist() for b in again] == uninterrupted[cut:], cut
        names = [(os.path.basename(s["file"]), s["record"]) for s in again.skipped]
        assert sorted(names) == skips and len(set(names)) == len(names), cut  # every skip, each once
        three = [make(3, r, 1) for r in range(3)]
        for L in three:
            L.load_state_dict(state)
        rest = [sum((next(L).labels.tolist() for L in three), []) for _ in range(len(uninterrupted) - cut)]
        assert rest == uninterrupted[cut:], cut


def test_a_skip_in_a_file_whose_name_is_not_utf8_survives_a_resume(tmp_path):
    # The reason names the file: it came back as ValueError('') before.
    name = os.fsencode(str(tmp_path)) + b"/bad-\xff.tfrecord"
    with libshard.ShardWriter(name) as w:
        for _ in range(2):
            w.write({"image/encoded": b"definitely not an image", "image/class/label": 99})
    write_shard(tmp_path / "good.tfrecord", 4, 0)
    files = [name, str(tmp_path / "good.tfrecord")]

    def make():
        return libshard.Loader(files, 2, image_size=(12, 16), on_error="skip", prefetch=1)

    uninterrupted = [b.labels.tolist() for b in make()]
    first = make()
    next(first)  # the two bad records come first: both skipped
    state = first.state_dict()
    assert [os.fsencode(s["file"]) for s in state["skipped"]] == [name, name]
    assert "\udcff" in state["skipped"][0]["reason"]  # the byte, surrogate-escaped
    again = make()
    again.load_state_dict(state)
    assert again.state_dict()["skipped"] == state["skipped"]
    assert [b.labels.tolist() for b in again] == uninterrupted[1:]


def test_a_bad_state_is_refused_naming_the_field_and_the_entry(shards):
    L = libshard.Loader(shards, 4, image_size=(12, 16), shuffle=True, seed=5)
    next(L)
    state = L.state_dict()
    # numpy integers (a state passed through np.savez or a tensor's .item() dance) are integers.
    again = libshard.Loader(shards, 4, image_size=(12, 16), shuffle=True, seed=5)
    again.load_state_dict(dict(state, consumed=np.int64(state["consumed"]), epoch=np.uint32(0)))
    assert again.state_dict()["consumed"] == state["consumed"]
    with pytest.raises(ValueError, match=r'state\["consumed"\] must be an integer in 0..197, got a float \(4.0\)'):
        again.load_state_dict(dict(state, consumed=4.0))
    with pytest.raises(ValueError, match=r'state\["skipped"\]\[0\] lacks "sample"'):
        again.load_state_dict(dict(state, skipped=[{}]))
    entry = {"sample": 1, "file": "x.tfrecord", "record": 0, "offset": 0, "reason": "bad"}
    with pytest.raises(ValueError, match=r'state\["skipped"\]\[1\]\["offset"\] must be an integer'):
        again.load_state_dict(dict(state, skipped=[entry, dict(entry, offset="0")]))
    with pytest.raises(ValueError, match=r'state\["skipped"\]\[1\] must be a dict, got a list'):
        again.load_state_dict(dict(state, skipped=[entry, []]))
    with pytest.raises(TypeError, match=r'state\["skipped"\]\[0\]\["file"\]: expected str, bytes'):
        again.load_state_dict(dict(state, skipped=[dict(entry, file=3)]))
    with pytest.raises(ValueError, match=r'state\["skipped"\]\[0\]\["reason"\] must be a str, got a bytes'):
        again.load_state_dict(dict(state, skipped=[dict(entry, reason=b"bad")]))
    # A lone high surrogate is no byte, escaped or not.
    with pytest.raises(ValueError, match=r'state\["skipped"\]\[0\]\["reason"\]: not text'):
        again.load_state_dict(dict(state, skipped=[dict(entry, reason="bad \ud800")]))
    with pytest.raises(ValueError, match=r'state\["skipped"\] must be a list, got a tuple'):
        again.load_state_dict(dict(state, skipped=(entry,)))


@pytest.mark.filterwarnings("ignore:This DataLoader will create 4 worker processes")
def test_shard_dataset_saved_with_two_workers_resumes_with_none_or_four(shards):
    pytest.importorskip("torch")
    import libshard.torch
    from torch.utils.data import DataLoader

    def make(**kw):
        return libshard.torch.ShardDataset(shards, 6, rank=0, world_size=1, shuffle=True, seed=3,
                                           image_size=(12, 16), **kw)

    def labels(ds, workers, **kw):
        return [b[1].tolist() for b in DataLoader(ds, batch_size=None, num_workers=workers, **kw)]

    full = labels(make(), 0)
    assert len(full) == 33 and sorted(sum(full, [])) == list(range(N))
    ds = make()
    dl = DataLoader(ds, batch_size=None, num_workers=2)
    got = []
    for step, b in enumerate(dl):  # the workers decode ahead: the state counts what the loop received
        got.append(b[1].tolist())
        if step + 1 == 5:
            state = ds.state_dict(batch=step + 1)
            break
    assert got == full[:5] and state["consumed"] == 30
    for workers in (0, 4):
        fresh = make()
        fresh.load_state_dict(state)
        assert labels(fresh, workers) == full[5:], workers
    # Persistent workers reach the loaded position too.
    ds = make()
    dl = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
    assert [b[1].tolist() for b in dl] == full
    ds.load_state_dict(state)
    assert [b[1].tolist() for b in dl] == full[5:]
    # On 3 ranks x 2 (the same global batch of 6), rank by rank: the same global batches.
    parts = []
    for r in range(3):
        part = libshard.torch.ShardDataset(shards, 2, rank=r, world_size=3, shuffle=True, seed=3,
                                           image_size=(12, 16))
        part.load_state_dict(state)
        parts.append(labels(part, 2))
    together = [sum(g, []) for g in zip(*parts)]
    # 167 left, padded to 168 for 3 ranks: the last global batch ends with the epoch's first sample.
    assert together[:-1] == full[5:-1] and together[-1][:5] == full[-1] and together[-1][5] == full[0][0]


@pytest.mark.filterwarnings("ignore:This DataLoader will create 4 worker processes")
def test_shard_images_with_the_elastic_sampler_resumes_on_another_shape(shards):
    pytest.importorskip("torch")
    import libshard.torch
    from torch.utils.data import DataLoader
    images = libshard.torch.ShardImages(shards, seed=5, image_size=(12, 16))

    def labels(world, batch, workers, state=None):
        """Global batches (ranks' batches side by side) of the rest of the epoch, and each rank's sampler."""
        samplers = [libshard.torch.ElasticSampler(images, batch, rank=r, world_size=world, shuffle=True)
                    for r in range(world)]
        for s in samplers:
            if state is not None:
                s.load_state_dict(state)
        per_rank = [[y.tolist() for _, y in DataLoader(images, batch_size=batch, sampler=s, num_workers=workers)]
                    for s in samplers]
        return [sum(g, []) for g in zip(*per_rank)], samplers

    # The sampler's order is the batch Loader's: the same global batches.
    full, _ = labels(1, 8, 0)
    loader = ranks(shards, 1, 8)
    assert full == [step(loader)[0] for _ in range(len(loader[0]))]
    # Saved on 2 ranks x 4 with 2 workers after 3 batches (the workers fetch ahead: the loop's count is what
    # counts); resumed on 1 x 8 without workers and on 4 x 2 with 4.
    _, samplers = labels(2, 4, 2)
    state = samplers[1].state_dict(batch=3)
    assert state["consumed"] == 24 and state == dict(samplers[0].state_dict(batch=3), rank=1)
    rest, _ = labels(1, 8, 0, state)
    assert rest == full[3:]
    rest, _ = labels(4, 2, 4, state)
    # 173 left, padded to 176 for 4 ranks: the last global batch ends with 3 of the epoch's first samples.
    assert rest[:-1] == full[3:-1] and rest[-1] == full[-1] + full[0][:3]
    with pytest.raises(ValueError, match=r'state\["seed"\]'):
        libshard.torch.ElasticSampler(libshard.torch.ShardImages(shards, seed=6, image_size=(12, 16)), 8, rank=0,
                                      world_size=1, shuffle=True).load_state_dict(state)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


WORKER = textwrap.dedent("""
    import json, os, sys
    import torch, torch.distributed as dist
    import libshard.torch
    shards, out, phase, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ds = libshard.torch.ShardDataset(shards, 24 // world, shuffle=True, seed=9, image_size=(12, 16))
    assert (ds.rank, ds.world_size) == (rank, world)
    state_file = os.path.join(out, "state.json")
    if phase == "resume":
        with open(state_file) as f:
            ds.load_state_dict(json.load(f))
    seen = []
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1)
    for step, (images, labels) in enumerate(dl):
        seen += labels.tolist()
        if step + 1 == steps:
            state = ds.state_dict(batch=step + 1)
            consumed = [None] * world
            dist.all_gather_object(consumed, state["consumed"])
            assert len(set(consumed)) == 1, consumed  # every rank saves the same position
            if rank == 0:
                with open(state_file, "w") as f:
                    json.dump(state, f)
            break
    with open(os.path.join(out, "%s-%d.json" % (phase, rank)), "w") as f:
        json.dump(seen, f)
    dist.destroy_process_group()
""")


def run_ranks(shards, out, phase, world, steps):
    port = str(free_port())
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, "-c", WORKER, shards, str(out), phase, str(steps)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for p in procs:
        try:
            output, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a rank hung")
        assert p.returncode == 0, output


def test_torch_distributed_saves_on_two_ranks_and_resumes_on_three(shards, tmp_path):
    pytest.importorskip("torch")
    import json
    run_ranks(shards, tmp_path, "save", 2, 3)  # 2 ranks x 12: 3 global batches of 24
    with open(tmp_path / "state.json") as f:
        assert json.load(f)["consumed"] == 72
    run_ranks(shards, tmp_path, "resume", 3, 0)  # 3 ranks x 8 to the epoch's end
    seen = []
    for name in ("save-0", "save-1", "resume-0", "resume-1", "resume-2"):
        with open(tmp_path / ("%s.json" % name)) as f:
            seen += json.load(f)
    # 197 - 72 = 125 left, padded to 126 for 3 ranks: one sample (the epoch's first) twice.
    assert len(seen) == N + 1 and sorted(set(seen)) == list(range(N))
