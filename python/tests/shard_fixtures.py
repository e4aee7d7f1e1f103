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
