#!/usr/bin/python3
"""Makes the bundled sample image folder from Debian's dataset-fashion-mnist
(MIT licence, Zalando Research): images/<split>/<class>/<n>.png, 28x28 gray.

Run once with /usr/bin/python3 (needs python3-pil and the
dataset-fashion-mnist package); the output is committed.
"""
import gzip
import os
import struct

from PIL import Image

SRC = "/usr/share/datasets/fashion-mnist"
CLASSES = ["t-shirt_top", "trouser", "pullover", "dress", "coat",
           "sandal", "shirt", "sneaker", "bag", "ankle_boot"]
PER_CLASS = {"train": 8, "val": 2}


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    if magic == 2051:
        rows, cols = struct.unpack(">II", data[8:16])
        return [data[16 + i * rows * cols:16 + (i + 1) * rows * cols] for i in range(n)], (cols, rows)
    return list(data[8:8 + n]), None


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "images")
    images, size = read_idx(os.path.join(SRC, "t10k-images-idx3-ubyte.gz"))
    labels, _ = read_idx(os.path.join(SRC, "t10k-labels-idx1-ubyte.gz"))
    taken = {}
    for i, label in enumerate(labels):
        n = taken.get(label, 0)
        split = "train" if n < PER_CLASS["train"] else "val" if n < sum(PER_CLASS.values()) else None
        if split is None:
            continue
        taken[label] = n + 1
        d = os.path.join(out, split, CLASSES[label])
        os.makedirs(d, exist_ok=True)
        Image.frombytes("L", size, images[i]).save(os.path.join(d, "%05d.png" % i), optimize=True)


if __name__ == "__main__":
    main()
