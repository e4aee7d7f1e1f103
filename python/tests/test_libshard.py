"""Tests of the libshard Python module (run by ctest with PYTHONPATH set to
the build tree's python/ folder)."""
import io
import os

import numpy as np
import pytest
from PIL import Image

import libshard


def pattern(w, h, seed):
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([(x * 3 + y * 5 + seed * 37) % 256,
                    (x * 7 + y * 2 + seed * 11) % 256,
                    (x * y + seed * 53) % 256], axis=-1)
    return rgb.astype(np.uint8)


def jpeg_bytes(arr, quality=90):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def write_shard(path, n, first_label=0, size=(32, 24), index=True):
    """Writes n JPEG Examples with the converter's keys; returns their bytes."""
    w, h = size
    out = []
    with libshard.ShardWriter(str(path), index=index) as wr:
        for i in range(n):
            data = jpeg_bytes(pattern(w, h, first_label + i))
            wr.write({"image/encoded": data, "image/format": "jpeg", "image/height": h,
                      "image/width": w, "image/class/label": first_label + i,
                      "image/class/text": "c%d" % (first_label + i), "image/score": [0.5, 0.25]})
            out.append(data)
    return out


def test_shard_reader_len_bytes_and_example(tmp_path):
    path = tmp_path / "a.tfrecord"
    jpegs = write_shard(path, 5)
    r = libshard.ShardReader(str(path))
    assert len(r) == 5 and r.index_used
    ex = r.example(2)
    assert ex["image/encoded"] == [jpegs[2]]
    assert ex["image/class/label"] == [2]
    assert ex["image/class/text"] == [b"c2"]
    assert ex["image/score"] == [0.5, 0.25]
    assert r.example(-1)["image/class/label"] == [4]
    assert isinstance(r[0], bytes) and len(r[0]) > len(jpegs[0])
    assert libshard.ShardReader(str(path), io="pread")[3] == r[3]
    with pytest.raises(IndexError):
        r[5]


def test_shard_reader_errors_are_python_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError):
        libshard.ShardReader(str(tmp_path / "missing.tfrecord"))
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(b"this is not a tfrecord file at all")
    with pytest.raises(OSError, match="bad.tfrecord"):
        libshard.ShardReader(str(bad))
    with pytest.raises(ValueError):
        libshard.ShardReader(str(bad), io="carrier-pigeon")


def test_loader_pixels_equal_pillow(tmp_path):
    jpegs = write_shard(tmp_path / "a.tfrecord", 7)
    loader = libshard.Loader([str(tmp_path / "a.tfrecord")], batch_size=3, image_size=(24, 32), threads=2)
    assert len(loader) == 3
    seen = 0
    for images, labels in loader:
        assert images.dtype == np.uint8 and labels.dtype == np.int64
        assert images.shape[1:] == (24, 32, 3)
        for i in range(images.shape[0]):
            ref = np.asarray(Image.open(io.BytesIO(jpegs[seen])).convert("RGB"))
            np.testing.assert_array_equal(images[i], ref)
            assert labels[i] == seen
            seen += 1
    assert seen == 7
    assert loader.state_dict()["epoch"] == 1


def test_loader_shuffle_resume_and_ranks(tmp_path):
    write_shard(tmp_path / "a-0.tfrecord", 10, 0)
    write_shard(tmp_path / "a-1.tfrecord", 10, 10)
    files = str(tmp_path / "a-*.tfrecord")

    def make(rank=0, world=1, batch_size=4, seed=3, **kw):
        return libshard.Loader(files, batch_size=batch_size, image_size=(16, 16), shuffle=True, seed=seed, rank=rank,
                               world_size=world, augment="random-resized-crop", **kw)

    loader = make()
    epoch0 = [(im.copy(), lb.copy()) for im, lb in loader]
    assert sorted(np.concatenate([lb for _, lb in epoch0]).tolist()) == list(range(20))
    it = iter(loader)
    next(it)
    saved = loader.state_dict()
    rest = [(im.copy(), lb.copy()) for im, lb in it]
    fresh = make(threads=1)
    fresh.load_state_dict(saved)
    again = [(im.copy(), lb.copy()) for im, lb in fresh]
    assert len(again) == len(rest) == 4
    for (a, la), (b, lb) in zip(rest, again):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(la, lb)
    # Two ranks of batch 2 (the same global batch of 4) continue it: the rest, cut between them.
    halves = [make(rank=r, world=2, batch_size=2) for r in range(2)]
    for h in halves:
        h.load_state_dict(saved)
    for _, lb in rest:
        np.testing.assert_array_equal(np.concatenate([next(h)[1] for h in halves]), lb)
    with pytest.raises(ValueError, match=r'state\["seed"\]'):
        make(seed=4).load_state_dict(saved)

    # drop_last: 3 ranks x 4, global batches of 12: one, the 8 samples left over dropped.
    parts = [np.concatenate([lb for _, lb in make(rank=r, world=3, drop_last=True)]) for r in range(3)]
    assert all(len(p) == 4 for p in parts)
    union = np.concatenate(parts)
    assert len(set(union.tolist())) == len(union)


def test_loader_caller_buffers(tmp_path):
    write_shard(tmp_path / "a.tfrecord", 5)
    bufs = [(np.zeros((2, 24, 32, 3), np.uint8), np.zeros(2, np.int64)) for _ in range(3)]
    loader = libshard.Loader(str(tmp_path / "a.tfrecord"), batch_size=2, image_size=(24, 32), buffers=bufs)
    got = [lb.tolist() for _, lb in loader]
    assert got == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError):
        libshard.Loader(str(tmp_path / "a.tfrecord"), batch_size=2, image_size=(24, 32),
                        buffers=[(np.zeros(5, np.uint8), np.zeros(2, np.int64))])


def test_loader_key_mapping_for_tf_written_files(tmp_path):
    path = tmp_path / "tf.tfrecord"
    data = jpeg_bytes(pattern(8, 8, 1))
    with libshard.ShardWriter(str(path)) as wr:
        wr.write({"image_raw": data, "label": 7})
    loader = libshard.Loader(str(path), batch_size=1, image_size=(8, 8), keys={"image": "image_raw", "label": "label"})
    (images, labels), = list(loader)
    assert labels.tolist() == [7]
    with pytest.raises(OSError, match="image/encoded"):
        list(libshard.Loader(str(path), batch_size=1, image_size=(8, 8)))


def shared_path(rel):
    root = os.environ.get("LIBSHARD_SHARED_DIR",
                          os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
    p = os.path.join(root, rel)
    return p if os.path.exists(p) else None


def test_tensorflow_written_cifar10_pixels_equal_pillow():
    path = shared_path("interop/tfrecord/tfx_cifar10_train.tfrecord")
    if path is None:
        pytest.skip("shared interop data not found")
    reader = libshard.ShardReader(path)
    assert len(reader) == 128
    loader = libshard.Loader(path, batch_size=32, image_size=(32, 32), keys={"image": "image", "label": "label"})
    n = 0
    for images, labels in loader:
        for i in range(len(labels)):
            ex = reader.example(n)
            ref = np.asarray(Image.open(io.BytesIO(ex["image"][0])).convert("RGB"))
            np.testing.assert_array_equal(images[i], ref)
            assert labels[i] == ex["label"][0]
            n += 1
    assert n == 128


def png_bytes(arr):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_loader_masks_and_worker_split(tmp_path):
    path = tmp_path / "seg.tfrecord"
    with libshard.ShardWriter(str(path)) as wr:
        for i in range(6):
            mask = ((np.arange(24)[:, None] // 4 + np.arange(32)[None, :] // 4 + i) % 5).astype(np.uint8)
            wr.write({"image/encoded": png_bytes(pattern(32, 24, i)), "image/class/label": i,
                      "image/segmentation/class/encoded": png_bytes(mask),
                      "image/segmentation/class/format": "png"})
    loader = libshard.Loader(str(path), batch_size=3, image_size=(24, 32), masks=True)
    (im0, lb0, m0), (im1, lb1, m1) = list(loader)
    assert m0.shape == (3, 24, 32) and m0.dtype == np.uint8
    assert m1[2, 5, 9] == (5 // 4 + 9 // 4 + 5) % 5
    np.testing.assert_array_equal(im0[1], pattern(32, 24, 1))  # PNG: lossless
    # Two workers split the batches round-robin and together see every sample once.
    seen = []
    for w in range(2):
        part = libshard.Loader(str(path), batch_size=2, image_size=(24, 32), worker=w, num_workers=2)
        seen += [lb.tolist() for _, lb in part]
    assert sorted(sum(seen, [])) == list(range(6))
    assert seen == [[0, 1], [4, 5], [2, 3]]
