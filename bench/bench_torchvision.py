#!/usr/bin/python3
"""The baseline for `shard-bench read --decode`: torchvision's ImageFolder +
DataLoader decoding the same JPEGs to uint8 tensors (PILToTensor, no
resize: the images are already the target size). Prints one line
"images/s <rate>" (over --epochs epochs after one warm-up epoch), or
"skipped: <why>" and exits 77 when torch/torchvision are missing.

With --libshard SHARD it times libshard.Loader from Python on the shard of
the same JPEGs instead (batches that own their memory, as a training script
gets them: no copy), printing "libshard images/s <rate>". With --buffers the
loader fills caller-supplied arrays instead (three of them, as a training
script passes pinned tensors), and yields views of them.
"""
import argparse
import sys
import time

try:
    import torch
    import torchvision
    from torchvision import transforms
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)


def rate(batches, epochs):
    """images/s over `epochs` consecutive epochs of `batches`, timed as a
    whole after a warm-up epoch (which starts the DataLoader workers / the
    loader's threads). Timing each epoch alone and keeping the best would let
    batches prefetched between epochs inflate short epochs."""
    for _ in batches:
        pass
    n = 0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for images, _ in batches:
            n += images.shape[0]
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--libshard", metavar="SHARD")
    ap.add_argument("--buffers", action="store_true", help="with --libshard: caller-supplied batch buffers")
    args = ap.parse_args()
    if args.libshard:
        import libshard
        bufs = None
        if args.buffers:
            import numpy as np
            bufs = [(np.empty((args.batch_size, 224, 224, 3), np.uint8), np.empty(args.batch_size, np.int64))
                    for _ in range(3)]
        loader = libshard.Loader(args.libshard, args.batch_size, image_size=(224, 224),
                                 threads=args.workers, buffers=bufs)
        print("libshard images/s %.1f" % rate(loader, args.epochs))
        return
    torch.set_num_threads(1)
    ds = torchvision.datasets.ImageFolder(args.folder, transform=transforms.PILToTensor())
    dl = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, num_workers=args.workers,
                                     shuffle=False, persistent_workers=args.workers > 0)
    print("images/s %.1f" % rate(dl, args.epochs))


if __name__ == "__main__":
    main()
