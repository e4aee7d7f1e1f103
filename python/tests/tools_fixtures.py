"""Shared by test_tools.py and test_docs.py: a small image folder, and the `shard` program to compare with."""
import os
import shutil
import sys

import numpy as np
from PIL import Image


def shard_program():
    """The `shard` the installed package brought (VENV/bin/shard beside this interpreter), else the CMake build
    tree's (LIBSHARD_BUILD_DIR/tools/shard), else the one on PATH; None when there is none."""
    beside = os.path.join(os.path.dirname(sys.executable), "shard")
    if os.access(beside, os.X_OK):
        return beside
    build = os.environ.get("LIBSHARD_BUILD_DIR")
    if build and os.access(os.path.join(build, "tools", "shard"), os.X_OK):
        return os.path.join(build, "tools", "shard")
    return shutil.which("shard")


def pattern(w, h, seed):
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([(x * 3 + y * 5 + seed * 37) % 256, (x * 7 + y * 2 + seed * 11) % 256,
                    (x * y + seed * 53) % 256], axis=-1)
    return rgb.astype(np.uint8)


def make_image_folder(root, classes=("cat", "dog", "eel"), per_class=4, splits=("train", "val"), bad=1):
    """ROOT/SPLIT/CLASS/*.{jpg,png} of varied sizes, and `bad` files that are not images (rejected)."""
    n = 0
    for split in splits:
        for c in classes:
            d = os.path.join(root, split, c)
            os.makedirs(d, exist_ok=True)
            for i in range(per_class):
                img = Image.fromarray(pattern(40 + 3 * i, 30 + 2 * n % 7, n))
                if i % 2:
                    img.save(os.path.join(d, "%s%d.png" % (c, i)))
                else:
                    img.save(os.path.join(d, "%s%d.jpg" % (c, i)), quality=90)
                n += 1
    for i in range(bad):
        with open(os.path.join(root, splits[0], classes[0], "broken%d.jpg" % i), "wb") as f:
            f.write(b"not an image at all")
    return root
