"""Batches handed over on a device (issue 29): ShardDataset(..., device=) decodes uint8 and converts on the device.
device="cpu" runs the same code path as device="cuda" (without streams), so here it is checked against the
Loader's own float conversion: float32 equal, float16 / bfloat16 within one rounding of the dtype; with
num_workers 0 and 2. python/tests/test_gpu_device.py checks device="cuda" on a GPU."""
import gc

import pytest

torch = pytest.importorskip("torch")
import libshard.torch  # noqa: E402
from shard_fixtures import write_mask_shard, write_two_shards  # noqa: E402
from tools_fixtures import make_image_folder  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

NORM = dict(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))


@pytest.fixture
def shards(tmp_path):
    return write_two_shards(tmp_path)


def make(shards, **kw):
    return libshard.torch.ShardDataset(shards, 3, image_size=(12, 16), shuffle=True, seed=7, rank=0, world_size=1,
                                       augment="random-resized-crop", **kw)


def batches(ds, workers=0):
    return [tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in b)
            for b in DataLoader(ds, batch_size=None, num_workers=workers)]


CASES = [  # (device-path dtype, layout, memory_format, the plain path's dtype to compare with, tolerance)
    ("uint8", "NHWC", None, "uint8", 0),
    ("uint8", "NCHW", None, "uint8", 0),
    ("float32", "NCHW", None, "float32", 0),
    ("float32", "NHWC", None, "float32", 0),
    ("float32", "NCHW", torch.channels_last, "float32", 0),
    ("float16", "NCHW", None, "float16", 2.0 ** -10),
    ("bfloat16", "NCHW", torch.channels_last, "float32", 2.0 ** -8),
]


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("dtype,layout,memory_format,plain_dtype,rtol", CASES)
def test_the_device_path_on_the_cpu_gives_the_loaders_pixels(shards, workers, dtype, layout, memory_format,
                                                               plain_dtype, rtol):
    norm = NORM if dtype != "uint8" else {}
    plain = batches(make(shards, layout=layout, dtype=plain_dtype, **norm))
    got = batches(make(shards, layout=layout, dtype=dtype, memory_format=memory_format, device="cpu", **norm),
                  workers)
    assert len(got) == len(plain) == 9
    for (x, y), (px, py) in zip(got, plain):
        assert x.device.type == "cpu" and x.dtype == getattr(torch, dtype) and x.shape == px.shape
        if memory_format is torch.channels_last:
            assert x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()
        else:
            assert x.is_contiguous()
        assert torch.equal(y, py)
        if rtol == 0:
            assert torch.equal(x, px)
        else:
            torch.testing.assert_close(x.float(), px.float(), rtol=rtol, atol=1e-6)


def test_masks_and_extras_come_along(tmp_path):
    write_mask_shard(tmp_path / "m.tfrecord", 4)
    ds = libshard.torch.ShardDataset(str(tmp_path / "m.tfrecord"), 2, image_size=8, masks=True, rank=0, world_size=1,
                                     extras=["image/class/label"], device="cpu", dtype="float32", layout="NCHW")
    for workers in (0, 1):
        b = list(DataLoader(ds, batch_size=None, num_workers=workers))[1]
        assert isinstance(b, libshard.KeyedSegmentationBatch)
        assert b.images.shape == (2, 3, 8, 8) and b.images.dtype == torch.float32
        assert float(b.images[1, 0, 0, 0]) == pytest.approx(30 / 255)
        assert b.masks[1, 0, 0] == 3 and b.keys["image/class/label"] == [2, 3]


def test_dataset_statistics_are_the_loaders(tmp_path):
    make_image_folder(str(tmp_path / "pets"), splits=("train",), bad=0)
    out = str(tmp_path / "out")
    libshard.convert(str(tmp_path / "pets" / "train"), out, size=16, format="png", no_sync=True)
    kw = dict(image_size=16, rank=0, world_size=1, dtype="float32", layout="NCHW", mean="dataset", std="dataset")
    plain = batches(libshard.torch.ShardDataset(out, 4, **kw))
    got = batches(libshard.torch.ShardDataset(out, 4, device="cpu", **kw))
    assert len(got) == len(plain) == 3
    for (x, y), (px, py) in zip(got, plain):
        assert torch.equal(x, px) and torch.equal(y, py)
    with libshard.Loader(out, 4, image_size=16, dtype="float32", mean="dataset", std="dataset") as loader:
        mean, std = loader.normalization
    assert len(mean) == len(std) == 3 and all(0 < v < 1 for v in mean + std)


def test_cuda_without_cuda_is_a_clear_error(shards, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for device in ("cuda", "cuda:0", torch.device("cuda")):
        with pytest.raises(ValueError, match=r"device: .*CUDA is not available here"):
            make(shards, device=device)


@pytest.mark.parametrize("kw,message", [
    (dict(memory_format=torch.channels_last), "memory_format: only with device="),
    (dict(device="cpu", memory_format=torch.channels_last, layout="NHWC"), 'layout="NHWC" contradicts it'),
    (dict(device="cpu", memory_format=torch.preserve_format), "memory_format: expected"),
    (dict(device="cpu", dtype="int32"), "dtype: with device=, expected uint8, float32, float16 or bfloat16"),
    (dict(device="cpu", dtype="float32", mean="average"), 'mean: expected a sequence of numbers'),
    (dict(device="cpu", dtype="float32", mean="dataset"), 'mean="dataset": the sources record no per-channel'),
    (dict(device="cpu", dtype="float32", mean=(0.5, 0.5)), "mean"),
    (dict(device="cpu", dtype="uint8", mean=(0.5, 0.5, 0.5)), "mean"),
    (dict(device="meta"), "only cuda and cpu devices"),
    (dict(device="nonsense"), "device: expected"),
])
def test_bad_device_options_are_named(shards, kw, message):
    with pytest.raises(ValueError, match=message):
        make(shards, **kw)


def test_the_device_feed_is_dropped_with_its_dataset(shards):
    ds = make(shards, device="cpu", dtype="float32")
    batches(ds)
    uid = ds._uid
    assert any(k[0] == uid for k in libshard._segments.TRAINER._feeds)
    del ds
    gc.collect()
    assert not any(k[0] == uid for k in libshard._segments.TRAINER._feeds)
