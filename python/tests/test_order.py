"""libshard.Dataset and libshard.Order (issue 45): the read side's stages without a Loader. ds[i] is the sample a
Loader's batch holds; Order is the Loader's partition rule, checked against the rule as docs/reader.md states it
and against every sampler built on it."""
import pickle

import numpy as np
import pytest

import libshard
from shard_fixtures import write_shard

N = 23


@pytest.fixture
def shards(tmp_path):
    write_shard(tmp_path / "d-0.tfrecord", 13, 0)
    write_shard(tmp_path / "d-1.tfrecord", 10, 13)
    return str(tmp_path / "d-*.tfrecord")


def documented_cut(order, start, batch, world, rank, drop_last):
    """This rank's samples by docs/reader.md's rule: the rest of the order from `start` in global batches of
    batch * world, rank r taking the r-th batch-sized slice; without drop_last the rest is padded to a multiple
    of world from the epoch's start and a short last global batch is cut evenly; with it that batch is dropped."""
    n = len(order)
    rest = max(0, n - start)
    gb = batch * world
    if drop_last:
        length = rest // gb * gb
    else:
        length = -(-rest // world) * world
    positions = list(range(start, start + length))
    mine = []
    for k in range(0, length, gb):
        chunk = positions[k:k + gb]
        share = batch if len(chunk) == gb else len(chunk) // world
        mine += chunk[rank * share:(rank + 1) * share]
    return [int(order[p % n]) for p in mine]


@pytest.mark.parametrize("n", [1, 7, 23, 64])
@pytest.mark.parametrize("batch", [1, 3, 8])
@pytest.mark.parametrize("world", [1, 2, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_order_cuts_as_documented(n, batch, world, drop_last):
    if drop_last and n < batch * world:
        with pytest.raises(ValueError):
            libshard.Order(n, batch, world_size=world, drop_last=drop_last)
        return
    for rank in range(world):
        o = libshard.Order(n, batch, rank=rank, world_size=world, shuffle=True, seed=3, drop_last=drop_last)
        g = o.global_order(2)
        assert sorted(g.tolist()) == list(range(n))
        for start in sorted({0, 1, n // 2, n}):
            want = documented_cut(g, start, batch, world, rank, drop_last)
            assert o.epoch_samples(2, start).tolist() == want, (rank, start)
            assert o.samples_per_rank(start) == len(want)
            assert o.rank_batches(start) == -(-len(want) // batch)
            batches = o.rank_batches(start)
            assert o.consumed(start, 0) == start
            assert o.consumed(start, batches) == (n if not drop_last else start + len(want) * world)
            for b in range(batches + 1):
                assert o.consumed(start, b) == start + min(n - start, b * batch * world)
            with pytest.raises(ValueError, match="batch: %d batches consumed is outside the epoch's %d batches "
                               "from sample %d" % (batches + 1, batches, start)):
                o.consumed(start, batches + 1)


def test_order_is_the_loaders_order(shards):
    for kw in (dict(), dict(shuffle=True, seed=9), dict(order="block-shuffle", block_size=4, window_blocks=2),
               dict(shuffle=True, drop_last=True)):
        for world, batch in ((1, 4), (2, 3), (3, 5)):
            for rank in range(world):
                loader = libshard.Loader(shards, batch, image_size=8, rank=rank, world_size=world, threads=1,
                                         prefetch=1, **kw)
                order = libshard.Order(N, batch, rank=rank, world_size=world, **kw)
                for start in (0, 5):
                    assert order.epoch_samples(1, start).tolist() == loader.epoch_samples(1, start).tolist()
                assert order.global_order(1).tolist() == loader.global_order(1).tolist()
                assert order.batches_per_epoch() == len(loader)
                state = loader.state_dict()
                assert {k: state[k] for k in order.identity} == order.identity


def test_worker_split(shards):
    loader = libshard.Loader(shards, 2, image_size=8, worker=1, num_workers=3, threads=1, prefetch=1)
    order = libshard.Order(N, 2, worker=1, num_workers=3)
    assert order.batches_per_epoch() == len(loader) == 4  # batches 1, 4, 7, 10 of 12
    assert order.rank_batches() == 12


def test_dataset_gives_the_loaders_samples(shards):
    options = dict(image_size=(10, 14), augment="random-resized-crop", seed=4, layout="NCHW", dtype="float32",
                   mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25])
    ds = libshard.Dataset(shards, **options)
    assert len(ds) == ds.num_samples == N
    assert ds.image_shape == (3, 10, 14)
    loader = libshard.Loader(shards, 5, shuffle=True, threads=2, **options)
    assert ds.identity == loader.state_dict()["dataset"]
    order = libshard.Order(ds, 5, shuffle=True)
    assert order.identity == {k: v for k, v in loader.state_dict().items() if k in order.identity}
    for epoch in (0, 1):
        samples = order.epoch_samples(epoch).tolist()
        got = []
        for _ in range(len(loader)):
            b = next(loader)
            got.append((b.images, b.labels))
        images = np.concatenate([g[0] for g in got])
        labels = np.concatenate([g[1] for g in got])
        for k, i in enumerate(samples):
            image, label = ds.sample(i, epoch)
            assert label == labels[k] == i
            np.testing.assert_array_equal(image, images[k])
            np.testing.assert_array_equal(image, loader.sample(i, epoch)[0])
    np.testing.assert_array_equal(ds[-1][0], ds.sample(N - 1)[0])
    assert ds.sample_labels.tolist() == list(range(N))
    with pytest.raises(IndexError):
        ds[N]
    with pytest.raises(IndexError):
        ds[-N - 1]
    with pytest.raises(TypeError):
        ds["0"]


def test_dataset_refuses_the_orders_and_the_batchs_keywords(shards):
    for k, v in (("shuffle", True), ("rank", 0), ("batch_size", 4), ("buffers", []), ("on_error", "skip")):
        with pytest.raises(ValueError, match="%s: not an option of libshard.Dataset" % k):
            libshard.Dataset(shards, image_size=8, **{k: v})
    with pytest.raises(TypeError, match="imagesize"):
        libshard.Dataset(shards, imagesize=8)
    with pytest.raises(TypeError, match="unexpected keyword argument 'image_size'"):
        libshard.Order(N, image_size=8)
    with pytest.raises(ValueError, match="world_size"):
        libshard.Order(N, 1, world_size=0)
    with pytest.raises(ValueError, match="start"):
        libshard.Order(N).epoch_samples(0, N + 1)


def test_order_pickles_and_takes_the_datasets_seed(shards):
    ds = libshard.Dataset(shards, image_size=8, seed=11)
    o = libshard.Order(ds, 4, shuffle=True, rank=1, world_size=2)
    assert o.identity["seed"] == 11
    again = pickle.loads(pickle.dumps(o))
    assert again.identity == o.identity
    assert again.epoch_samples(3).tolist() == o.epoch_samples(3).tolist()
    assert libshard.Order(N, 4, shuffle=True, rank=1, world_size=2, seed=11).epoch_samples(3).tolist() == \
        o.epoch_samples(3).tolist()


def test_samplers_are_the_order(shards):
    pytest.importorskip("torch")
    import libshard.torch as lt
    images = lt.ShardImages(shards, image_size=8, seed=6)
    for world in (1, 2, 4):
        for batch in (1, 3, 7):
            for drop_last in (False, True):
                if drop_last and N < batch * world:
                    continue
                for rank in range(world):
                    s = lt.ElasticSampler(images, batch, rank=rank, world_size=world, shuffle=True,
                                          drop_last=drop_last)
                    o = libshard.Order(N, batch, rank=rank, world_size=world, shuffle=True, seed=6,
                                       drop_last=drop_last)
                    for epoch in (0, 2):
                        s.set_epoch(epoch)
                        assert list(s) == o.epoch_samples(epoch).tolist()
                        assert len(s) == len(o)
                    for b in range(o.rank_batches() + 1):
                        assert s.state_dict(batch=b)["consumed"] == o.consumed(0, b)
                    m = lt.MixtureSampler(images, rank=rank, world_size=world)
                    assert list(m) == libshard.Order(N, 1, rank=rank, world_size=world, shuffle=True,
                                                     seed=6).epoch_samples(0).tolist()
                    assert len(m) == -(-N // world)
        sd = lt.ShardDataset(shards, 3, rank=0, world_size=world, shuffle=True, seed=6, image_size=8)
        o = libshard.Order(N, 3, world_size=world, shuffle=True, seed=6)
        assert len(sd) == o.batches_per_epoch()
        assert sd.state_dict(batch=2)["consumed"] == o.consumed(0, 2)
