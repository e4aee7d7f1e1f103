#!/usr/bin/python3
"""What a Python training loop receives: images/s of libshard's Python paths, each as a ratio against
libshard.Loader with caller buffers (buffers=, no copy) measured in the same run.

    /usr/bin/python3 build/bench/bench_python.py [--images 6000] [--batch-size 64]

(the build copies it beside shard-bench; run there, it uses the build tree's `libshard` package and `shard`
program; an installed package and `shard` on PATH otherwise).

Data: --images copies of the bundled photos (samples/photos), converted by `shard convert` to 224x224 JPEG
(quality 90) and to raw arrays (zstd, the default level) in a temporary folder. Rows:

  Loader, buffers=          the baseline: the Loader fills three caller arrays in turn
  Loader, default           batches that own their memory (the default path)
  ShardDataset, workers=0   through torch.utils.data.DataLoader, decoding in the Loader's threads
  ShardDataset, workers=2   DataLoader worker processes, batches in shared-memory slots (persistent workers
                            or not)
  ShardDataset mixture      a weighted mixture of two datasets (the photos' two halves, converted apart;
                            weights 3:1) through DataLoader(num_workers=0), its ratio against the single
                            dataset's ShardDataset, workers=0 row measured in the same run (JPEG, float32)

Rates are steady-state: from the 5th batch of an epoch to its end, over --epochs epochs, after one warm-up
epoch. "first batch" is the time from iter() to the first batch of an epoch (a non-persistent DataLoader
starts its workers there). Each configuration is run --repeat times, interleaved with the baseline; the
ratio is of medians. Decode threads: --threads for the Loader (and per worker with workers=0).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (os.path.join(HERE, "..", "python"), os.path.join(HERE, "..", "build", "python")):
    if os.path.exists(os.path.join(_p, "libshard", "__init__.py")):
        sys.path.insert(0, _p)
        break

try:
    import torch
    import torch.utils.data
except ImportError as e:  # the Loader rows still run
    torch = None
    print("note: no torch (%s): ShardDataset rows skipped" % e)

import libshard


def find_shard_and_photos(args):
    def first(*paths):
        return next((p for p in paths if p and os.path.exists(p)), None)
    shard = args.shard or first(os.path.join(HERE, "..", "tools", "shard"),
                                os.path.join(HERE, "..", "build", "tools", "shard"), shutil.which("shard"))
    photos = args.photos or first(os.path.join(HERE, "photos"), os.path.join(HERE, "..", "samples", "photos"))
    if shard is None or photos is None:
        sys.exit("bench_python: no `shard` program (--shard) or no photos (--photos)")
    return shard, photos


def make_data(tmp, shard, photos, n):
    src = os.path.join(tmp, "src")
    os.makedirs(src)
    files = sorted(os.listdir(photos))
    for i in range(n):
        f = files[i % len(files)]
        os.symlink(os.path.join(os.path.abspath(photos), f), os.path.join(src, "%05d-%s" % (i, f)))
    # The mixture's two sources: the first and the second half of the same inputs, converted apart.
    for half, names in (("half-a", sorted(os.listdir(src))[:n // 2]), ("half-b", sorted(os.listdir(src))[n // 2:])):
        os.makedirs(os.path.join(tmp, half))
        for f in names:
            os.symlink(os.readlink(os.path.join(src, f)), os.path.join(tmp, half, f))
    out = {}
    for name, folder, extra in (("jpeg", src, []), ("raw", src, ["--format", "raw"]),
                                ("mix-a", os.path.join(tmp, "half-a"), []), ("mix-b", os.path.join(tmp, "half-b"), [])):
        dst = os.path.join(tmp, name)
        subprocess.run([shard, "convert", folder, "-o", dst, "--size", "224", "--no-sync", "--quiet"] + extra,
                       check=True, stdout=subprocess.DEVNULL)
        out[name] = dst
    return out


def epoch_stats(make_iter, epochs, skip=4):
    """(steady-state images/s, median first-batch seconds) over `epochs` epochs after a warm-up one."""
    for _ in make_iter():
        pass
    n, seconds, firsts = 0, 0.0, []
    for _ in range(epochs):
        t0 = time.perf_counter()
        it = iter(make_iter())
        start = None
        for i, batch in enumerate(it):
            if i == 0:
                firsts.append(time.perf_counter() - t0)
            if i == skip:
                start = time.perf_counter()
            elif i > skip:
                n += batch[0].shape[0]
        if start is not None:
            seconds += time.perf_counter() - start
    return (n / seconds if seconds else float("nan")), statistics.median(firsts)


def loader_options(dtype):
    if dtype == "float32":
        return dict(layout="NCHW", dtype="float32", mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    return dict(layout="NHWC", dtype="uint8")


def buffers_for(batch_size, dtype):
    if dtype == "float32":
        return [(np.empty((batch_size, 3, 224, 224), np.float32), np.empty(batch_size, np.int64))
                for _ in range(3)]
    return [(np.empty((batch_size, 224, 224, 3), np.uint8), np.empty(batch_size, np.int64)) for _ in range(3)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=6000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shard", help="the shard program (default: on PATH, else build/tools/shard)")
    ap.add_argument("--photos", help="folder of source photos (default: samples/photos)")
    args = ap.parse_args()
    shard, photos = find_shard_and_photos(args)
    tmp = tempfile.mkdtemp(prefix="libshard-bench-python-")
    try:
        data = make_data(tmp, shard, photos, args.images)
        bs = args.batch_size
        print("%d images, batch %d, %d decode threads, %d cores; steady-state img/s (from batch 5), "
              "ratios of medians over %d runs" % (args.images, bs, args.threads, os.cpu_count(), args.repeat))
        print("%-44s %10s %10s %8s %12s" % ("path", "img/s", "baseline", "ratio", "first batch"))

        def row(name, make, base_make):
            rates, bases, firsts = [], [], []
            for _ in range(args.repeat):
                b, _ = epoch_stats(base_make, args.epochs)
                r, f = epoch_stats(make, args.epochs)
                bases.append(b)
                rates.append(r)
                firsts.append(f)
            r, b = statistics.median(rates), statistics.median(bases)
            print("%-44s %10.0f %10.0f %8.2f %10.1f ms" % (name, r, b, r / b, 1000 * statistics.median(firsts)),
                  flush=True)

        for fmt in ("jpeg", "raw"):
            for dtype in ("uint8", "float32"):
                opts = loader_options(dtype)
                base = libshard.Loader(data[fmt], bs, image_size=224, threads=args.threads,
                                       buffers=buffers_for(bs, dtype), **opts)
                default = libshard.Loader(data[fmt], bs, image_size=224, threads=args.threads, **opts)
                row("Loader default, %s %s" % (fmt, dtype), lambda: default, lambda: base)
                default.close()
                if torch is None or dtype != "float32":
                    base.close()
                    continue
                for workers, persistent in ((0, False), (2, False), (2, True)):
                    threads = args.threads if workers == 0 else max(1, args.threads // workers)
                    ds = libshard.torch.ShardDataset(data[fmt], bs, image_size=224, threads=threads, rank=0,
                                                     world_size=1, **opts)
                    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers,
                                                     persistent_workers=persistent)
                    name = "ShardDataset, workers=%d%s, %s %s" % (workers, " persistent" if persistent else "",
                                                                  fmt, dtype)
                    row(name, lambda: dl, lambda: base)
                    del dl, ds
                base.close()
                if fmt == "jpeg":  # a weighted mixture against the single dataset, both end to end (issue 34)
                    common = dict(image_size=224, threads=args.threads, rank=0, world_size=1, **opts)
                    single = torch.utils.data.DataLoader(libshard.torch.ShardDataset(data["jpeg"], bs, **common),
                                                         batch_size=None)
                    mixed = torch.utils.data.DataLoader(
                        libshard.torch.ShardDataset([data["mix-a"], data["mix-b"]], bs, weights=[3, 1], **common),
                        batch_size=None)
                    print("  (next row's baseline: ShardDataset, workers=0 over the single dataset)")
                    row("ShardDataset mixture 3:1, workers=0, %s %s" % (fmt, dtype), lambda: mixed, lambda: single)
                    del single, mixed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if torch is not None:
        import libshard.torch  # noqa: F401
    main()
