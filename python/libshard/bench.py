"""Does libshard keep your GPU busy? ``python -m libshard.bench DATASET [--model resnet50] [--compare-folder DIR]``

Measures, on your data and your machine, each as img/s over ``--seconds`` after a warm-up:

* training (``--model``: a torchvision model made with ``weights=None`` -- nothing is downloaded -- or ``tiny``, a
  three-layer net for a CPU check; bf16 autocast and channels_last on CUDA) fed by
  1. a synthetic uint8 batch already on the device, converted there each step as the feed's batches are: the
     ceiling, what the model does when it never waits;
  2. libshard's feed: ``ShardDataset(DATASET, device=..., memory_format=channels_last)`` with ``num_workers=0``;
  3. with ``--compare-folder DIR`` (a class-per-folder tree of the same images): torchvision's ``ImageFolder`` and
     ``DataLoader(num_workers=--workers, pin_memory=True)``, normalised on the device the same way;
* the loader alone (uint8 batches, no model) for each thread count of ``--threads``;

and prints the share of the device's time spent waiting for data (1 - feed / ceiling) and how many loader threads
the feed needs to keep up with the model (the fewest measured threads whose rate reaches the ceiling).
``--json PATH`` writes the figures too. docs/gpu.md shows a run.
"""
import argparse
import json
import math
import os
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional

import torch

import libshard
import libshard.torch as lt
from libshard import _device

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    cores = os.cpu_count() or 1
    ap = argparse.ArgumentParser(prog="python -m libshard.bench", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", help="shards, a folder of them, a glob or a manifest.json (as libshard.Loader takes)")
    ap.add_argument("--split", default="", help="the manifest's split to read (default: all)")
    ap.add_argument("--model", default="resnet50", help="a torchvision.models name, or tiny (default: resnet50)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--augment", default="none", choices=["none", "random-resized-crop"])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", default=",".join(str(t) for t in sorted({1, 2, 4, 8, 16, cores}) if t <= cores),
                    help="loader thread counts to time alone (default: powers of two up to the cores)")
    ap.add_argument("--feed-threads", type=int, default=cores, help="the feed's threads (default: the cores)")
    ap.add_argument("--compare-folder", metavar="DIR", help="the same images as a class-per-folder tree")
    ap.add_argument("--workers", type=int, default=cores, help="torchvision DataLoader workers (default: cores)")
    ap.add_argument("--classes", type=int, default=1000, help="the model's outputs (labels are taken modulo)")
    ap.add_argument("--seconds", type=float, default=4.0, help="time per measurement (default: 4)")
    ap.add_argument("--warmup", type=int, default=5, help="batches before each measurement (default: 5)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    try:
        args.threads = sorted({int(t) for t in args.threads.split(",")})
    except ValueError:
        ap.error("--threads: expected comma-separated integers, got %r" % args.threads)
    if not args.threads or args.threads[0] < 1 or args.batch_size < 1 or args.seconds <= 0:
        ap.error("--threads, --batch-size and --seconds must be positive")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device %s: CUDA is not available here (use --device cpu)" % args.device)
    return args


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def rate(batches: Iterator[Any], seconds: float, warmup: int, device: torch.device,
         on_batch: Optional[Callable[[Any], None]] = None) -> float:
    """img/s over `seconds` after `warmup` batches of the endless iterator `batches`."""
    for _ in range(warmup):
        b = next(batches)
        if on_batch:
            on_batch(b)
    sync(device)
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        b = next(batches)
        if on_batch:
            on_batch(b)
        n += b[0].shape[0]
    sync(device)
    return n / (time.perf_counter() - t0)


def epochs(make: Callable[[int], Any]) -> Iterator[Any]:
    e = 0
    while True:
        for b in make(e):
            yield b
        e += 1


def tiny_model(classes: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, classes))


def make_model(name: str, classes: int, device: torch.device) -> torch.nn.Module:
    if name == "tiny":
        model = tiny_model(classes)
    else:
        import torchvision
        factory = getattr(torchvision.models, name, None)
        if factory is None or not callable(factory):
            raise SystemExit("libshard.bench: --model %s: not a torchvision.models name" % name)
        model = factory(weights=None, num_classes=classes)  # random weights: nothing downloaded
    return model.to(device).to(memory_format=torch.channels_last)


class Trainer:
    """One training step per batch (images already on the device, in the model's dtype and layout)."""

    def __init__(self, args: argparse.Namespace, device: torch.device) -> None:
        self.model = make_model(args.model, args.classes, device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.classes, self.device = args.classes, device

    def __call__(self, batch: Any) -> None:
        x, y = batch[0], batch[1].to(self.device, non_blocking=True)
        if self.device.type == "cuda":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(self.model(x), y % self.classes)
        else:
            loss = torch.nn.functional.cross_entropy(self.model(x.float()), y % self.classes)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


def feed_batches(args: argparse.Namespace, device: torch.device, dtype: str, common: Dict[str, Any]) -> Iterator[Any]:
    """Endless batches of libshard's device feed, one epoch after another."""
    ds = lt.ShardDataset(args.dataset, args.batch_size, threads=args.feed_threads, device=device, dtype=dtype,
                         layout="NCHW", memory_format=torch.channels_last, mean=MEAN, std=STD, **common)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)
    e = 0
    while True:
        ds.set_epoch(e)
        yield from dl
        e += 1


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    dtype = "bfloat16" if device.type == "cuda" else "float32"
    torch.backends.cudnn.benchmark = True
    common = dict(split=args.split, image_size=args.image_size, shuffle=True, seed=0)
    if args.augment != "none":
        common["augment"] = args.augment
    feed = _device.DeviceFeed(str(device), dtype, MEAN, STD, "NCHW", True)  # the conversion every row pays
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    r: Dict[str, Any] = {"dataset": args.dataset, "model": args.model, "device": name, "cores": os.cpu_count(),
                         "batch_size": args.batch_size, "image_size": args.image_size, "augment": args.augment,
                         "torch": torch.__version__, "libshard": libshard.__version__}
    print("libshard.bench: %s, %s on %s (%d cores), batch %d of %d x %d, augment %s, torch %s"
          % (args.dataset, args.model, name, r["cores"], args.batch_size, args.image_size, args.image_size,
             args.augment, torch.__version__), flush=True)

    def train(batches: Iterator[Any]) -> float:
        return rate(batches, args.seconds, args.warmup, device, Trainer(args, device))

    # 1. The ceiling: a uint8 batch already on the device.
    g = torch.Generator(device="cpu").manual_seed(0)
    x8 = torch.randint(0, 256, (args.batch_size, args.image_size, args.image_size, 3), dtype=torch.uint8,
                       generator=g).to(device)
    y = torch.randint(0, args.classes, (args.batch_size,), generator=g).to(device)

    def synthetic() -> Iterator[Any]:
        while True:
            yield feed._convert(x8), y
    ceiling = r["train_synthetic"] = train(synthetic())
    print("training, img/s:\n  %-48s %9.1f" % ("synthetic batch on the device (the ceiling)", ceiling), flush=True)

    # 2. libshard's feed.
    fed = r["train_libshard"] = train(feed_batches(args, device, dtype, common))
    print("  %-48s %9.1f   %.3f of the ceiling" % ("libshard feed (device=, %d threads)" % args.feed_threads, fed,
                                                  fed / ceiling), flush=True)

    # 3. torchvision's ImageFolder pipeline, for comparison.
    if args.compare_folder:
        import torchvision
        T = torchvision.transforms
        if args.augment == "random-resized-crop":
            tf = T.Compose([T.RandomResizedCrop(args.image_size), T.RandomHorizontalFlip(), T.PILToTensor()])
        else:
            tf = T.Compose([T.Resize(args.image_size), T.CenterCrop(args.image_size), T.PILToTensor()])
        folder = torchvision.datasets.ImageFolder(args.compare_folder, transform=tf)
        tv = torch.utils.data.DataLoader(folder, batch_size=args.batch_size, shuffle=True, drop_last=True,
                                         num_workers=args.workers, pin_memory=device.type == "cuda",
                                         persistent_workers=args.workers > 0)

        def on_device(b: Any) -> Any:  # NCHW uint8 -> the same conversion as the other rows
            return feed._convert(b[0].to(device, non_blocking=True).permute(0, 2, 3, 1)), b[1]
        r["train_torchvision"] = train(on_device(b) for b in epochs(lambda e: tv))
        print("  %-48s %9.1f   %.3f of the ceiling" % ("torchvision ImageFolder (%d workers)" % args.workers,
                                                      r["train_torchvision"], r["train_torchvision"] / ceiling))
        del tv

    # 4. The loader alone, by thread count.
    print("loader alone (uint8 batches, no model), img/s:", flush=True)
    alone = r["loader_by_threads"] = {}
    for t in args.threads:
        with libshard.Loader(args.dataset, args.batch_size, threads=t, **common) as ld:
            alone[t] = rate(epochs(lambda e: ld), args.seconds, args.warmup, torch.device("cpu"))
        print("  threads=%-4d %9.1f   %.0f per thread" % (t, alone[t], alone[t] / t), flush=True)

    waiting = r["waiting_share"] = max(0.0, 1.0 - fed / ceiling)
    print("waiting for data: %.1f%% of the %s's time with libshard's feed" % (100 * waiting, device.type))
    enough = [t for t in args.threads if alone[t] >= ceiling]
    if enough:
        r["threads_needed"] = enough[0]
        print("the feed needs %d thread(s) to keep %s busy here (%.0f img/s at the ceiling)"
              % (enough[0], args.model, ceiling))
    else:
        top = args.threads[-1]
        r["threads_needed"] = math.ceil(ceiling / (alone[top] / top))
        print("the feed needs about %d threads to keep %s busy here (%.0f img/s at the ceiling; %d threads give "
              "%.0f img/s)" % (r["threads_needed"], args.model, ceiling, top, alone[top]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
