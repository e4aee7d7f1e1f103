"""Shared by test_tools.py, test_docs.py, test_samples.py and python/engine_tests: a small image folder, the `shard`
program to compare with, and comparisons of converted folders."""
import filecmp
import json
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


def shard_files(folder):
    """The shards and their companions (.idx, .labels) in a folder, sorted."""
    return sorted(f for f in os.listdir(folder) if ".tfrecord" in f)


def assert_same_shards(want, got):
    """Every shard, .idx and .labels of `want` is in `got`, byte for byte, and nothing else."""
    names = shard_files(want)
    assert names and names == shard_files(got)
    for n in names:
        assert filecmp.cmp(os.path.join(want, n), os.path.join(got, n), shallow=False), n


def manifest_apart_from_place(folder):
    """manifest.json less what names the run and the input's place (options.input; the plan ids, which hash it):
    what a conversion of the same samples from another input (a sample pack, a copy) must equal."""
    m = json.load(open(os.path.join(folder, "manifest.json")))
    m.pop("run")
    m["options"].pop("input")

    def drop(x):
        if isinstance(x, dict):
            return {k: drop(v) for k, v in x.items() if k != "plan_id"}
        return [drop(v) for v in x] if isinstance(x, list) else x
    return drop(m)


def folder_rows(root):
    """A SPLIT/CLASS/... folder's files as rows a table would hold: key (the path from the root), the file's path,
    class, split; sorted by key."""
    rows = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            split, cls = rel.split("/")[:2]
            rows.append({"key": rel, "path": os.path.join(dirpath, f), "label": cls, "split": split})
    return sorted(rows, key=lambda r: r["key"])


def sample_of(row):
    """A folder_rows row as libshard.write_samples takes it: the image's bytes read from its path."""
    with open(row["path"], "rb") as f:
        return {"key": row["key"], "image": f.read(), "label": row["label"], "split": row["split"]}
