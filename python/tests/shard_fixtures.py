"""Shared by the loader tests: a shard of small PNG Examples whose pixels and labels differ per record."""
import io

import numpy as np
from PIL import Image

import libshard


def write_shard(path, n, first=0):
    """Records first..first+n-1: a 16x12 RGB PNG (its pattern depends on the record) and that number as label."""
    with libshard.ShardWriter(str(path)) as w:
        for i in range(first, first + n):
            buf = io.BytesIO()
            y, x = np.mgrid[0:12, 0:16]
            Image.fromarray(np.stack([(x * 5 + i * 31) % 256, (y * 9 + i) % 256, (x * y + i) % 256],
                                     -1).astype(np.uint8)).save(buf, format="PNG")
            w.write({"image/encoded": buf.getvalue(), "image/class/label": i})


def write_two_shards(folder):
    """d-0.tfrecord (records 0..13) and d-1.tfrecord (14..24) in `folder`; returns their glob."""
    write_shard(folder / "d-0.tfrecord", 14, 0)
    write_shard(folder / "d-1.tfrecord", 11, 14)
    return str(folder / "d-*.tfrecord")


def write_mask_shard(path, n):
    """Records 0..n-1: an 8x8 RGB PNG of value 10 i, an 8x8 mask PNG of value i, label i."""
    with libshard.ShardWriter(str(path)) as w:
        for i in range(n):
            img, mask = io.BytesIO(), io.BytesIO()
            Image.fromarray(np.full((8, 8, 3), i * 10, np.uint8)).save(img, format="PNG")
            Image.fromarray(np.full((8, 8), i, np.uint8)).save(mask, format="PNG")
            w.write({"image/encoded": img.getvalue(), "image/class/label": i,
                     "image/segmentation/class/encoded": mask.getvalue()})
