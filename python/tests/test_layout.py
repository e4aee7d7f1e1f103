"""Loader output layouts and dtypes (done in the decode threads) against a numpy reference."""
import re
import io

import numpy as np
import pytest
from PIL import Image

import libshard

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def png(arr):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def pattern(w, h, seed):
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([(x * 9 + y * 5 + seed * 37) % 256, (x * 7 + y * 11 + seed * 11) % 256,
                     (x * y + seed * 53) % 256], axis=-1).astype(np.uint8)


@pytest.fixture
def shard(tmp_path):
    path = tmp_path / "a.tfrecord"
    with libshard.ShardWriter(str(path)) as w:
        for i in range(5):
            mask = ((np.arange(24)[:, None] + np.arange(32)[None, :] + i) % 4).astype(np.uint8)
            w.write({"image/encoded": png(pattern(32, 24, i)), "image/class/label": i,
                     "image/segmentation/class/encoded": png(mask), "image/segmentation/class/format": "png"})
    return str(path)


def batches(shard, **kw):
    kw.setdefault("image_size", (20, 28))  # a resize, so the pixels come from the transform path
    return [tuple(a.copy() for a in b) for b in libshard.Loader(shard, 2, **kw)]


def reference(u8_nhwc, layout, dtype, mean, std):
    """(x / 255 - mean) / std in float64, rounded once to dtype, in layout."""  # noqa: D401
    if dtype == "uint8":
        out = u8_nhwc
    else:
        m = np.zeros(3) if mean is None else np.asarray(mean, np.float64)
        s = np.ones(3) if std is None else np.asarray(std, np.float64)
        out = ((u8_nhwc.astype(np.float64) / 255.0 - m) / s).astype(dtype)
    return out.transpose(0, 3, 1, 2) if layout == "NCHW" else out


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dtype,mean,std", [("uint8", None, None), ("float32", None, None),
                                            ("float32", MEAN, STD), ("float16", MEAN, STD),
                                            ("float16", None, None)])
@pytest.mark.parametrize("augment", ["none", "random-resized-crop"])
def test_layout_and_dtype_equal_the_numpy_reference(shard, layout, dtype, mean, std, augment):
    common = dict(augment=augment, shuffle=True, seed=5)
    base = batches(shard, **common)
    got = batches(shard, layout=layout, dtype=dtype, mean=mean, std=std, threads=1, **common)
    assert len(got) == len(base) == 3
    for (im_u8, lb_u8), (im, lb) in zip(base, got):
        np.testing.assert_array_equal(lb, lb_u8)
        want = reference(im_u8, layout, dtype, mean, std)
        assert im.dtype == np.dtype(dtype) and im.shape == want.shape
        assert im.flags.c_contiguous
        if dtype == "float32":  # x * scale + bias in float: within a few ulp
            np.testing.assert_allclose(im, want, atol=1e-6, rtol=0)
        else:  # uint8 as decoded; float16 rounded once from the exact value
            np.testing.assert_array_equal(im, want)


def test_float_values_are_torchvision_normalize(shard):
    (im_u8, _), = batches(shard, image_size=(24, 32))[:1]
    (im, _), = batches(shard, image_size=(24, 32), layout="NCHW", dtype="float32", mean=MEAN, std=STD)[:1]
    # torchvision: ToTensor() (x / 255 as float32) then Normalize(mean, std) in float32.
    t = im_u8.transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255)
    t = (t - np.asarray(MEAN, np.float32)[:, None, None]) / np.asarray(STD, np.float32)[:, None, None]
    np.testing.assert_allclose(im, t, atol=1e-4, rtol=0)
    assert im.min() < -1.5 and im.max() > 2.0


def test_gray_nchw(shard):
    (u8, _), = batches(shard, channels=1)[:1]
    (f, _), = batches(shard, channels=1, layout="NCHW", dtype="float32", mean=[0.5], std=[0.25])[:1]
    assert f.shape == (2, 1, 20, 28)
    np.testing.assert_allclose(f, reference(u8, "NCHW", "float32", [0.5], [0.25]), atol=1e-6, rtol=0)


def test_masks_stay_uint8_nhw(shard):
    plain = batches(shard, masks=True)
    nchw = batches(shard, masks=True, layout="NCHW", dtype="float16")
    for (_, _, m0), (im, _, m1) in zip(plain, nchw):
        assert m1.dtype == np.uint8 and m1.shape == (m0.shape[0], 20, 28) and im.shape[1] == 3
        np.testing.assert_array_equal(m0, m1)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dtype", ["uint8", "float32", "float16"])
def test_caller_buffers_for_every_layout_and_dtype(shard, layout, dtype):
    shape = (2, 3, 20, 28) if layout == "NCHW" else (2, 20, 28, 3)
    bufs = [(np.full(shape, 7, dtype), np.zeros(2, np.int64)) for _ in range(2)]
    want = batches(shard, layout=layout, dtype=dtype)
    loader = libshard.Loader(shard, 2, image_size=(20, 28), layout=layout, dtype=dtype, buffers=bufs)
    got = []
    for im, lb in loader:
        assert any(np.shares_memory(im, b[0]) for b in bufs)  # a view, no copy
        got.append((im.copy(), lb.copy()))
    for (a, la), (b, lb) in zip(got, want):
        assert a.dtype == np.dtype(dtype) and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(la, lb)


def test_caller_buffers_are_checked_by_dtype(shard):
    def make(images):
        return libshard.Loader(shard, 2, image_size=(20, 28), dtype="float32",
                               buffers=[(images, np.zeros(2, np.int64))])
    with pytest.raises(ValueError, match=re.escape("buffers[0] images must be a writable C-contiguous array of 3360 float32")):
        make(np.zeros((2, 20, 28, 3), np.uint8))
    with pytest.raises(ValueError, match="3360 float32"):
        make(np.zeros((2, 20, 28, 2), np.float32))
    make(np.zeros(3360, np.float32))  # any shape of the right size


@pytest.mark.parametrize("kw,message", [
    (dict(layout="CHW"), 'layout: unknown layout "CHW" \\(expected NHWC or NCHW\\)'),
    (dict(dtype="int8"), 'dtype: unknown dtype "int8" \\(expected uint8, float32 or float16\\)'),
    (dict(mean=MEAN, std=STD), "mean/std: normalisation needs dtype float32 or float16, not uint8"),
    (dict(dtype="float32", mean=(0.5, 0.5)), "mean: 2 values for 3 channel\\(s\\)"),
    (dict(dtype="float32", std=(1, 0, 1)), "std: 0.000000 \\(values must be finite and non-zero\\)"),
    (dict(dtype="float32", mean="abc"), "mean: expected a sequence of numbers"),
])
def test_bad_layout_arguments_are_value_errors_naming_the_argument(shard, kw, message):
    with pytest.raises(ValueError, match=message):
        libshard.Loader(shard, 2, **kw)
