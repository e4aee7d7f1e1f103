#!/usr/bin/python3
"""The Pillow baseline of `shard-bench convert`: what a user's Python script
does to make the same shards' pixels: open, decode, convert to RGB, resize the
centre square (shorter side) to SIZE x SIZE with bilinear filtering, encode as
JPEG at QUALITY -- in PROCS worker processes. The JPEG bytes are kept in
memory, nothing is written, so this is a generous baseline.

With --draft, the script an experienced Pillow user writes: the same, after
`Image.draft("RGB", (SIZE, SIZE))`, so a JPEG is decoded with DCT scaling
(1/2, 1/4 or 1/8, the largest that keeps both sides >= SIZE) and the centre
square is cut from the smaller image. Other formats ignore draft().

Prints one line: "<images> <seconds> <images/s>". Timing starts after the
worker pool is up and has run one warm-up image per worker.
Usage: bench_pillow.py --procs 2 --size 224 --quality 90 --passes 3 [--draft] FILE...
"""
import argparse
import io
import multiprocessing as mp
import sys
import time

from PIL import Image

SIZE = 224
QUALITY = 90
DRAFT = False


def init(size, quality, draft):
    global SIZE, QUALITY, DRAFT
    SIZE, QUALITY, DRAFT = size, quality, draft


def convert(path):
    with Image.open(path) as im:
        if DRAFT:
            im.draft("RGB", (SIZE, SIZE))
        im = im.convert("RGB")
        w, h = im.size
        s = min(w, h)
        box = ((w - s) / 2, (h - s) / 2, (w + s) / 2, (h + s) / 2)
        out = im.resize((SIZE, SIZE), Image.BILINEAR, box=box)
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=QUALITY)
    return len(buf.getvalue())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--draft", action="store_true",
                    help='decode JPEGs with Image.draft("RGB", (SIZE, SIZE)) first')
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    work = a.files * a.passes
    with mp.Pool(a.procs, initializer=init, initargs=(a.size, a.quality, a.draft)) as pool:
        pool.map(convert, a.files[: a.procs], chunksize=1)  # warm-up
        t0 = time.perf_counter()
        pool.map(convert, work, chunksize=4)
        dt = time.perf_counter() - t0
    print(f"{len(work)} {dt:.6f} {len(work) / dt:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
