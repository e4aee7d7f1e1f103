"""libshard.torch.ShardImages: map-style access with the Loader's decode, for samplers of the user's own."""
import pickle

import numpy as np
import pytest

import libshard

torch = pytest.importorskip("torch")
import libshard.torch  # noqa: E402
from shard_fixtures import write_shard  # noqa: E402
from torch.utils.data import DataLoader, Subset, WeightedRandomSampler  # noqa: E402


@pytest.fixture
def shards(tmp_path):
    write_shard(tmp_path / "d-0.tfrecord", 7, 0)
    write_shard(tmp_path / "d-1.tfrecord", 5, 7)
    return [str(tmp_path / "d-0.tfrecord"), str(tmp_path / "d-1.tfrecord")]


OPTIONS = dict(image_size=(12, 16), layout="NCHW", dtype="float32", mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))


def test_items_equal_the_batch_loaders_samples(shards):
    ds = libshard.torch.ShardImages(shards, **OPTIONS)
    assert len(ds) == 12
    batches = list(libshard.Loader(shards, 12, **OPTIONS))
    images, labels = batches[0]
    for i in range(12):
        image, label = ds[i]
        assert image.shape == (3, 12, 16) and image.dtype == torch.float32
        assert int(label) == i == labels[i]
        assert np.array_equal(image.numpy(), images[i])
    assert torch.equal(ds[-1][0], ds[11][0])
    with pytest.raises(IndexError):
        ds[12]
    assert len(list(iter(ds))) == 12  # the sequence protocol stops at IndexError


def test_own_samplers_and_workers(shards):
    ds = libshard.torch.ShardImages(shards, **OPTIONS)
    weights = [10.0 if i % 2 else 0.0 for i in range(len(ds))]  # only odd samples
    sampler = WeightedRandomSampler(weights, num_samples=20, replacement=True, generator=torch.Generator().manual_seed(1))
    seen = [int(y) for _, ys in DataLoader(ds, batch_size=4, sampler=sampler, num_workers=2) for y in ys]
    assert len(seen) == 20 and all(y % 2 for y in seen)
    sub = [int(y) for _, ys in DataLoader(Subset(ds, [3, 5, 8]), batch_size=3) for y in ys]
    assert sub == [3, 5, 8]
    copy = pickle.loads(pickle.dumps(ds))
    assert torch.equal(copy[4][0], ds[4][0])


def test_augmentation_follows_the_epoch(shards):
    ds = libshard.torch.ShardImages(shards, augment="random-resized-crop", seed=3, **OPTIONS)
    a = ds[2][0]
    assert torch.equal(ds[2][0], a)
    ds.set_epoch(1)
    assert not torch.equal(ds[2][0], a)
    with pytest.raises(ValueError, match="shuffle: not an option of ShardImages"):
        libshard.torch.ShardImages(shards, shuffle=True, **OPTIONS)


def test_extras_and_skipping_are_refused_not_ignored(shards):
    """ShardImages reads one sample by number: it has no batch to carry extras= and no next sample to put in a
    bad one's place, so both are refused by name (issue 32: they were accepted and ignored)."""
    with pytest.raises(ValueError, match="extras: not an option of ShardImages .*libshard.torch.ShardDataset"):
        libshard.torch.ShardImages(shards, extras=["image/class/label"], **OPTIONS)
    with pytest.raises(ValueError, match='on_error: not an option of ShardImages .*a corrupt record raises'):
        libshard.torch.ShardImages(shards, on_error="skip", **OPTIONS)
    assert len(libshard.torch.ShardImages(shards, on_error="raise", **OPTIONS)) > 0


def test_dct_scale_reaches_the_loader_and_false_is_the_full_scale_decode(tmp_path):
    # 320x240 JPEGs to 32x32 crops: nearly every crop covers twice the output, so DCT scaling applies by
    # default; dct_scale=False decodes at full scale (C++ tests check those pixels against DecodeImage +
    # Transform byte for byte). The crops and flips are the same either way; the difference stays small.
    import io
    from PIL import Image
    y, x = np.mgrid[0:240, 0:320]
    path = str(tmp_path / "big.tfrecord")
    with libshard.ShardWriter(path) as w:
        for i in range(8):
            arr = np.stack([(x * 3 + y * (5 + i)) % 256, (x * y // 7 + i * 40) % 256, (x ^ y) % 256], -1)
            buf = io.BytesIO()
            Image.fromarray(arr.astype(np.uint8)).save(buf, format="JPEG", quality=90)
            w.write({"image/encoded": buf.getvalue(), "image/format": "jpeg", "image/class/label": i})
    opts = dict(image_size=32, augment="random-resized-crop", seed=4)
    scaled = next(libshard.Loader(path, 8, **opts))[0].copy()
    exact = next(libshard.Loader(path, 8, dct_scale=False, **opts))[0].copy()
    diff = np.abs(scaled.astype(np.int32) - exact.astype(np.int32)).reshape(8, -1)
    assert (diff.max(axis=1) > 0).sum() >= 4
    assert diff.mean() < 12
    for dct_scale, want in ((False, exact), (True, scaled)):
        ds = libshard.torch.ShardImages(path, dct_scale=dct_scale, **opts)
        for i in range(8):
            assert np.array_equal(ds[i][0].numpy(), want[i]), (dct_scale, i)
        batch = next(iter(DataLoader(libshard.torch.ShardDataset(path, 8, dct_scale=dct_scale, **opts),
                                     batch_size=None)))
        assert np.array_equal(batch[0].numpy(), want)
    with pytest.raises(TypeError, match="dct_scale"):
        libshard.Loader(path, 8, dct_scale="no", **opts)
