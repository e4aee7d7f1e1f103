#!/usr/bin/python3
"""Trains a small CNN with PyTorch on shards read by libshard.Loader and
prints the loss per epoch; exits 1 if it did not go down, 77 (skip) if
torch is not installed. Run with Debian's python3 (python3-torch):

    shard convert samples/images -o /tmp/fashion
    PYTHONPATH=build/python samples/train_torch.py --split train /tmp/fashion/manifest.json
"""
import argparse
import sys

try:
    import torch
    import torch.nn as nn
except ImportError:
    print("train_torch: skipped: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

import libshard


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shards", nargs="+")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--split", default="", help="the split of a manifest.json")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    loader = libshard.Loader(args.shards, batch_size=args.batch_size, image_size=(28, 28), channels=1,
                             shuffle=True, seed=0, threads=2, augment="random-resized-crop",
                             split=args.split)
    # Pinned buffers would go here for a GPU: buffers=[(t.numpy(), l.numpy()) ...] of
    # torch.empty(..., dtype=torch.uint8).pin_memory() tensors.
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(args.epochs):
        total, batches = 0.0, 0
        for images, labels in loader:
            x = torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0).sub_(0.5)
            y = torch.from_numpy(labels)
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
