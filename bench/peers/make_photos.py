"""Makes an ImageNet-like photo folder for bench/peers/run.sh when no corpus is at hand.

    python3 bench/peers/make_photos.py OUT [--count 3000] [--classes 20] [--source /usr/share/wallpapers]

Each image is a random crop (10-100 % of the area, aspect 3/4-4/3) of a real
photo found under --source (Debian's plasma-workspace-wallpapers: some 40
photos of 1-14 MP), scaled so its longer side is 400-500 pixels (ImageNet's
typical 500x375), saved as JPEG q90 in a folder per class (CLASS/NNNNNN.jpg).
Deterministic for a given --seed. Needs only Pillow.
"""
import argparse
import os
import random
from multiprocessing import Pool

from PIL import Image

_SOURCES = []  # each worker's photos, loaded once at a working size


def find_sources(root):
    """The largest image of each wallpaper folder (they ship several sizes of one photo)."""
    best = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.lower().endswith((".jpg", ".jpeg", ".png")):
                path = os.path.join(d, n)
                key = os.path.relpath(path, root).split(os.sep)[0]
                size = os.path.getsize(path)
                if key not in best or size > best[key][0]:
                    best[key] = (size, path)
    return sorted(p for _, p in best.values())


def _load(paths):
    # A 14 MP decode costs some 0.1 s: decode each source once, shrunk on load
    # (draft) to about 1600 pixels, and cut every image from that.
    for p in paths:
        with Image.open(p) as im:
            im.draft("RGB", (1600, 1600))
            im = im.convert("RGB")
            im.thumbnail((1600, 1600))
            _SOURCES.append(im)


def _make(job):
    index, seed, out, classes = job
    rng = random.Random(seed * 1_000_003 + index)
    src = _SOURCES[rng.randrange(len(_SOURCES))]
    w, h = src.size
    for _ in range(10):
        area = w * h * rng.uniform(0.1, 1.0)
        aspect = rng.uniform(3 / 4, 4 / 3) * (4 / 3 if rng.random() < 0.8 else 3 / 4)  # mostly landscape
        cw, ch = int(round((area * aspect) ** 0.5)), int(round((area / aspect) ** 0.5))
        if cw <= w and ch <= h:
            break
    else:
        cw, ch = min(w, h), min(w, h)
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    crop = src.crop((x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
    longer = rng.randint(400, 500)
    scale = longer / max(cw, ch)
    crop = crop.resize((max(1, round(cw * scale)), max(1, round(ch * scale))), Image.BILINEAR)
    folder = os.path.join(out, f"class{index % classes:03d}")
    crop.save(os.path.join(folder, f"{index:06d}.jpg"), "JPEG", quality=90)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--count", type=int, default=3000)
    p.add_argument("--classes", type=int, default=20)
    p.add_argument("--source", default="/usr/share/wallpapers")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--processes", type=int, default=os.cpu_count())
    args = p.parse_args()
    sources = find_sources(args.source)
    if not sources:
        raise SystemExit(f"make_photos: no JPEG or PNG under {args.source}")
    for c in range(args.classes):
        os.makedirs(os.path.join(args.out, f"class{c:03d}"), exist_ok=True)
    jobs = [(i, args.seed, args.out, args.classes) for i in range(args.count)]
    with Pool(args.processes, initializer=_load, initargs=(sources,)) as pool:
        for _ in pool.imap_unordered(_make, jobs, chunksize=32):
            pass
    print(f"make_photos: {args.count} JPEGs in {args.classes} classes from {len(sources)} photos: {args.out}")


if __name__ == "__main__":
    main()
