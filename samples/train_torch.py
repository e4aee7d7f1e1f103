#!/usr/bin/python3
"""Trains a small CNN with PyTorch on shards read through libshard.torch.ShardDataset
and prints the loss per epoch; exits 1 if it did not go down, 77 (skip) if
torch is not installed. With the package installed (`pip install .`, in a venv
made with --system-site-packages for Debian's python3-torch):

    shard convert samples/images -o /tmp/fashion
    python samples/train_torch.py --split train /tmp/fashion/manifest.json

(From a build tree without installing: PYTHONPATH=build/python.)
"""
import argparse
import sys

try:
    import torch
    import torch.nn as nn
except ImportError:
    print("train_torch: skipped: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

import libshard.torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shards", nargs="+")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--split", default="", help="the split of a manifest.json")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    # Normalised float32 NCHW batches, made by the loader's C++ threads: x / 255 - 0.5.
    ds = libshard.torch.ShardDataset(args.shards, args.batch_size, image_size=(28, 28), channels=1,
                                     shuffle=True, seed=0, threads=2, augment="random-resized-crop",
                                     split=args.split, layout="NCHW", dtype="float32", mean=[0.5], std=[1.0])
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args.workers)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(args.epochs):
        ds.set_epoch(epoch)
        total, batches = 0.0, 0
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item()
            batches += 1
        losses.append(total / batches)
        print("epoch %d: mean loss %.4f" % (epoch, losses[-1]), flush=True)
    if not losses[-1] < 0.8 * losses[0]:
        print("train_torch: the loss did not go down", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
