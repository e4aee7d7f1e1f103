"""Weighted mixtures of datasets through libshard.Loader, ShardDataset and ShardImages (docs/reader.md)."""
import json

import numpy as np
import pytest

import libshard
from shard_fixtures import write_shard


def make_dataset(folder, n, first, names):
    """A folder with one shard of n records labelled first..first+n-1 and a manifest naming labels 0.. by
    `names`."""
    folder.mkdir()
    write_shard(folder / "train-00000-of-00001.tfrecord", n, first)
    labels = [{"label": str(i), "name": name} for i, name in enumerate(names)]
    shards = [{"file": "train-00000-of-00001.tfrecord", "records": str(n)}]
    (folder / "manifest.json").write_text(json.dumps({
        "format": "libshard.manifest/1", "complete": True, "labels": labels,
        "splits": [{"name": "train", "records": str(n), "shards": shards}]}))
    return str(folder)


@pytest.fixture
def three(tmp_path):
    names = ["c%d" % i for i in range(200)]
    return [make_dataset(tmp_path / "a", 60, 0, names), make_dataset(tmp_path / "b", 30, 100, names),
            make_dataset(tmp_path / "c", 8, 150, names)]


def source_of(label):
    return 0 if label < 100 else 1 if label < 150 else 2


def run(loader, batches):
    out = []
    for _ in range(batches):
        b = next(loader)
        out.append((b.labels.tolist(), b.keys["source"]))
    return out


def test_weights_interleave_the_sources_in_every_window(three):
    loader = libshard.Loader(three, 10, image_size=8, shuffle=True, seed=3, weights=[0.6, 0.3, 0.1],
                             extras=["source"])
    assert len(loader) == 10  # 98 samples, the sum of the sizes
    seen = run(loader, 10)
    order = [s for _, sources in seen for s in sources]
    assert order == [source_of(label) for labels, _ in seen for label in labels]
    for a in range(len(order) - 10):  # every window of 10 is 5..7 / 2..4 / 0..2
        window = order[a:a + 10]
        assert 5 <= window.count(0) <= 7 and 2 <= window.count(1) <= 4 and window.count(2) <= 2
    # c (8 samples, ~10 picks) is upsampled: its first 8 picks are 8 different samples.
    c_labels = [label for labels, _ in seen for label in labels if label >= 150]
    assert len(set(c_labels[:8])) == 8 and len(c_labels) > 8


def test_mixture_resumes_exactly_from_a_state_dict(three):
    options = dict(image_size=8, shuffle=True, seed=9, weights=[0.5, 0.3, 0.2], samples_per_epoch=50,
                   extras=["source"])
    first = libshard.Loader(three, 8, **options)
    assert len(first) == 7
    run(first, 4)
    state = first.state_dict()
    rest = run(first, 9)  # into the next epoch
    second = libshard.Loader(three, 8, **options)
    second.load_state_dict(state)
    assert run(second, 9) == rest


def test_label_maps_error_merge_keep(tmp_path):
    a = make_dataset(tmp_path / "a", 2, 0, ["cat", "dog"])
    b = make_dataset(tmp_path / "b", 2, 0, ["dog", "emu"])
    with pytest.raises(ValueError, match=r"source 0 \(.*/a\) and source 1 \(.*/b\) have different label maps: "
                                         r"label 0 is \"cat\" in source 0 and \"dog\" in source 1"):
        libshard.Loader([a, b], 4, image_size=8, weights=[1, 1])
    merged = libshard.Loader([a, b], 4, image_size=8, weights=[1, 1], label_maps="merge", extras=["source"])
    assert merged.labels == [(0, "cat"), (1, "dog"), (2, "emu")]
    batch = next(merged)
    want = {(0, 0): 0, (0, 1): 1, (1, 0): 1, (1, 1): 2}  # (source, stored label) -> merged label
    order = [int(x) for x in merged.global_order(0)]
    stored = [x % 2 for x in order]
    assert batch.labels.tolist() == [want[(s, l)] for s, l in zip(batch.keys["source"], stored)]
    kept = libshard.Loader([a, b], 4, image_size=8, weights=[1, 1], label_maps="keep")
    assert kept.labels == []
    assert sorted(next(kept).labels.tolist()) == [0, 0, 1, 1]


def test_mixture_arguments_are_checked(three):
    with pytest.raises(ValueError, match="samples_per_epoch: only with weights="):
        libshard.Loader(three, 4, image_size=8, samples_per_epoch=10)
    with pytest.raises(ValueError, match="2 weights for 3 sources"):
        libshard.Loader(three, 4, image_size=8, weights=[1, 1])
    with pytest.raises(ValueError, match="the weight of source 1"):
        libshard.Loader(three, 4, image_size=8, weights=[1, -1, 1])
    with pytest.raises(ValueError, match="label_maps"):
        libshard.Loader(three, 4, image_size=8, weights=[1, 1, 1], label_maps="union")
    with pytest.raises(TypeError, match="weights"):
        libshard.Loader(three, 4, image_size=8, weights="1,1,1")
    # A source may be a list of datasets: a and b together, then c.
    two = libshard.Loader([[three[0], three[1]], three[2]], 10, image_size=8, weights=[0.5, 0.5],
                          extras=["source"])
    sources = [s for _, ss in run(two, 9) for s in ss]
    assert abs(sources.count(0) - sources.count(1)) <= 3


def test_mixture_file(three, tmp_path):
    mix = tmp_path / "mix.json"
    mix.write_text(json.dumps({"format": "libshard.mixture/1", "samples_per_epoch": 40,
                               "sources": [{"path": "a", "weight": 3}, {"path": three[2], "weight": 1}]}))
    from_file = libshard.Loader(str(mix), 10, image_size=8, shuffle=True, seed=1)
    direct = libshard.Loader([three[0], three[2]], 10, image_size=8, shuffle=True, seed=1, weights=[0.75, 0.25],
                             samples_per_epoch=40)
    assert len(from_file) == 4
    assert from_file.global_order(2).tolist() == direct.global_order(2).tolist()
    assert next(from_file).labels.tolist() == next(direct).labels.tolist()


def test_an_epoch_past_the_limit_is_refused_naming_the_field_and_the_file(three, tmp_path):
    # 2**32 passed the check and then asked for ~64 GB (a MemoryError naming nothing).
    with pytest.raises(ValueError, match=r"samples_per_epoch: expected an integer in 1\.\.134217728, got 4294967296"):
        libshard.Loader(three, 4, image_size=8, weights=[1, 1, 1], samples_per_epoch=2**32)
    mix = tmp_path / "long.json"
    mix.write_text(json.dumps({"format": "libshard.mixture/1", "samples_per_epoch": 2**32,
                               "sources": [{"path": three[0], "weight": 1}]}))
    with pytest.raises(ValueError) as refused:
        libshard.Loader(str(mix), 4, image_size=8)
    assert str(mix) in str(refused.value)
    assert "samples_per_epoch 4294967296 is more than 134217728" in str(refused.value)


def test_torch_shard_dataset_and_shard_images_take_weights(three):
    torch = pytest.importorskip("torch")
    import libshard.torch as lt
    ds = lt.ShardDataset(three, 10, image_size=8, shuffle=True, seed=2, weights=[0.6, 0.3, 0.1],
                         extras=["source"])
    loader = libshard.Loader(three, 10, image_size=8, shuffle=True, seed=2, weights=[0.6, 0.3, 0.1])
    got = [b[1].tolist() for b in torch.utils.data.DataLoader(ds, batch_size=None)]
    assert got == [b.labels.tolist() for b in loader]
    images = lt.ShardImages(three, image_size=8, seed=2, weights=[0.6, 0.3, 0.1])
    sampler = lt.MixtureSampler(images, shuffle=True)
    sampler.set_epoch(1)
    order = list(sampler)
    assert order == [int(x) for x in loader.global_order(1)]
    labels = [int(images[i][1]) for i in order[:12]]
    assert [source_of(x) for x in labels].count(0) in (6, 7, 8)
    # Two ranks: DistributedSampler's strided cut of the epoch's order (libshard.Order with batch_size=1),
    # padded from the order's start.
    halves = [list(lt.MixtureSampler(images, rank=r, world_size=2)) for r in (0, 1)]
    g = [int(x) for x in loader.global_order(0)]
    assert halves == [[g[i] for i in torch.utils.data.DistributedSampler(range(len(g)), num_replicas=2, rank=r,
                                                                         shuffle=False)] for r in (0, 1)]
    assert sorted(halves[0] + halves[1]) == sorted(g + g[:len(g) % 2])


def test_mixture_resumes_on_another_number_of_ranks(three):
    """A mixture's state saved on 2 ranks continues on 3: the rest of the epoch's mixed order, each place once."""
    options = dict(image_size=8, shuffle=True, seed=4, weights=[0.5, 0.3, 0.2], samples_per_epoch=60,
                   extras=["source"], threads=1, prefetch=1)
    two = [libshard.Loader(three, 5, rank=r, world_size=2, **options) for r in range(2)]
    order = two[0].global_order(0).tolist()
    labels_of = {}  # global sample number -> label, from the sources' numbering (a 0..59, b 60..89, c 90..97)
    for g in range(98):
        labels_of[g] = g if g < 60 else 100 + g - 60 if g < 90 else 150 + g - 90
    seen = []
    for _ in range(3):  # three global batches of 10
        for L in two:
            seen += next(L).labels.tolist()
    state = two[0].state_dict()
    other = two[1].state_dict()
    assert (state["epoch"], state["consumed"]) == (other["epoch"], other["consumed"]) == (0, 30)
    three_ranks = [libshard.Loader(three, 4, rank=r, world_size=3, **options) for r in range(3)]
    for L in three_ranks:
        L.load_state_dict(state)
    rest = [[b.labels.tolist() for b in L] for L in three_ranks]
    for k in range(max(len(r) for r in rest)):  # global-batch-major: batch k of rank 0, 1, 2
        for r in rest:
            if k < len(r):
                seen += r[k]
    want = [labels_of[g] for g in order]
    assert seen[:60] == want  # the uninterrupted order, place for place (padding only after the 60th)
