"""Does libshard keep your GPU busy? ``python -m libshard.bench DATASET [--model resnet50] [--compare-folder DIR]``

Measures, on your data and your machine, in img/s:

* training (``--model``: a torchvision model made with ``weights=None`` -- nothing is downloaded -- or ``tiny``, a
  three-layer net, the default on a CPU; bf16 autocast and channels_last on CUDA) fed by
  1. a synthetic uint8 batch already on the device, converted there each step as the feed's batches are: the
     ceiling, what the model does when it never waits;
  2. libshard's feed: ``ShardDataset(DATASET, device=..., memory_format=channels_last)`` with ``num_workers=0``;
  the two interleaved (ceiling, feed, ceiling, feed, ... in ``--pairs`` pairs), one model for both, so that a
  change in the machine's load hits both sides of a pair; the feed's figure is the median of the pairs' ratios
  with their spread, and no figure at all when the spread is too wide or the feed beats its own ceiling;
  3. with ``--compare-folder DIR`` (a class-per-folder tree of the same images): torchvision's ``ImageFolder`` and
     ``DataLoader(num_workers=--workers, pin_memory=True)``, normalised on the device the same way;
* the loader alone (uint8 batches, no model) for each thread count of ``--threads``, with the CPU time this
  process and the machine's other processes used meanwhile;

and prints the share of the device's time spent waiting for data (1 - feed / ceiling) and how many loader threads
the feed needs to keep up with the model (the fewest measured threads whose rate reaches the ceiling).

Every measurement, its warm-up included, takes at most ``--seconds`` (a step already started finishes; on CUDA
the steps queued ahead too); on a CPU the batch is made smaller when the model's step would not fit, and said so.
``--json PATH`` writes the figures too. docs/gpu.md shows a run.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, NoReturn, Optional, Tuple

import torch

import libshard
import libshard.torch as lt
from libshard import _device
from libshard._bench_timing import UNTIMED, CpuMeter, contended, feed_ratio, measure, paired, pick_batch

PROG = "python -m libshard.bench"
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


# --- the command line: every bad value is one line on stderr and exit status 2 ----------------------------------

def usage_error(message: str) -> NoReturn:
    sys.stderr.write("%s: error: %s\n" % (PROG, " ".join(str(message).split())))
    raise SystemExit(2)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own prints the usage first: two lines
        usage_error("%s (%s --help lists the options)" % (message, PROG))


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    cores = os.cpu_count() or 1
    ap = _Parser(prog=PROG, description=__doc__.split("\n\n")[0],
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", help="shards, a folder of them, a glob or a manifest.json (as libshard.Loader takes)")
    ap.add_argument("--split", default="",
                    help="the manifest's split to read: a name, a slice (train[:10%%]) or * (default: all the "
                         "splits, or the only one; plain shards have none)")
    ap.add_argument("--model", help="a torchvision.models name, or tiny (default: resnet50 on a GPU, tiny on a CPU)")
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
    ap.add_argument("--seconds", type=float, default=4.0,
                    help="time per measurement, its warm-up included (default: 4)")
    ap.add_argument("--pairs", type=int, default=5, help="ceiling / feed pairs the training figures take (default: 5)")
    ap.add_argument("--warmup", type=int, default=5, help="at most this many batches warm each measurement up, "
                                                          "within its --seconds (default: 5)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    try:
        args.threads = sorted({int(t) for t in args.threads.split(",")})
    except ValueError:
        ap.error("--threads: expected comma-separated integers, got %r" % args.threads)
    for name, low in (("threads", 1), ("batch_size", 1), ("image_size", 1), ("feed_threads", 0), ("workers", 0),
                      ("classes", 1), ("pairs", 3), ("warmup", 0)):
        value = getattr(args, name)
        value = min(value) if isinstance(value, list) else value
        if value < low:
            ap.error("--%s: expected at least %d, got %d" % (name.replace("_", "-"), low, value))
    if not (args.seconds > 0 and args.seconds < float("inf")):
        ap.error("--seconds: expected a positive number, got %s" % args.seconds)
    check_device(ap, args.device)
    args.model = args.model or ("resnet50" if args.device.startswith("cuda") else "tiny")
    check_model(ap, args.model)
    if args.compare_folder and not os.path.isdir(args.compare_folder):
        ap.error("--compare-folder %s: not a folder" % args.compare_folder)
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        if os.path.isdir(args.json) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            ap.error("--json %s: cannot write a file there" % args.json)
    return args


def check_device(ap: argparse.ArgumentParser, name: str) -> None:
    try:
        dev = torch.device(name)
    except (RuntimeError, TypeError, ValueError):
        ap.error('--device %s: expected cpu, cuda or cuda:N' % name)
    if dev.type not in ("cpu", "cuda"):
        ap.error("--device %s: only cpu and cuda devices are measured" % name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        ap.error("--device %s: CUDA is not available here (use --device cpu)" % name)
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        ap.error("--device %s: there are %d CUDA devices here" % (name, torch.cuda.device_count()))


def check_model(ap: argparse.ArgumentParser, name: str) -> None:
    if name == "tiny":
        return
    try:
        import torchvision
    except ImportError:
        ap.error("--model %s: needs torchvision, which is not installed (pip install torchvision, or --model tiny)"
                 % name)
    try:
        known = set(torchvision.models.list_models(module=torchvision.models))
    except (AttributeError, TypeError):  # torchvision < 0.14
        known = {n for n in dir(torchvision.models) if n[:1].islower() and callable(getattr(torchvision.models, n))}
    if name not in known:
        ap.error("--model %s: not a torchvision.models classification model (nor tiny)" % name)


# --- the model and the feeds --------------------------------------------------------------------------------------

def tiny_model(classes: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, classes))


def make_model(name: str, classes: int, device: torch.device) -> torch.nn.Module:
    if name == "tiny":
        model = tiny_model(classes)
    else:
        import torchvision
        try:
            model = getattr(torchvision.models, name)(weights=None, num_classes=classes)  # nothing downloaded
        except (TypeError, ValueError) as e:
            usage_error("--model %s: %s" % (name, e))
    return model.to(device).to(memory_format=torch.channels_last)


class Trainer:
    """One training step per batch (images already on the device, in the model's dtype and layout)."""

    def __init__(self, args: argparse.Namespace, device: torch.device) -> None:
        self.model = make_model(args.model, args.classes, device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.classes, self.device = args.classes, device

    def __call__(self, batch: Any) -> int:
        x, y = batch[0], batch[1].to(self.device, non_blocking=True)
        if self.device.type == "cuda":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.loss(self.model(x), y)
        else:
            loss = self.loss(self.model(x.float()), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return x.shape[0]

    def loss(self, out: Any, y: torch.Tensor) -> torch.Tensor:
        out = out if torch.is_tensor(out) else out[0]  # inception_v3, googlenet: (logits, aux logits)
        return torch.nn.functional.cross_entropy(out, y % self.classes)


def open_split(args: argparse.Namespace, common: Dict[str, Any]) -> Tuple[str, int]:
    """The split to read and its images: ``--split``, else the sources' only split (or none), else all ("*")."""
    first: Optional[Exception] = None
    for split in [args.split] if args.split else ["", "*"]:
        try:
            with libshard.Loader(args.dataset, 1, **dict(common, split=split)) as ld:
                if ld.num_samples == 0:
                    usage_error("%s: no images to read" % args.dataset)
                return split, ld.num_samples
        except (ValueError, OSError, RuntimeError) as e:
            first = first or e
    usage_error("%s: %s" % ("--split " + args.split if args.split else "dataset " + args.dataset, first))


def endless(batches: Callable[[int], Any]) -> Iterator[Any]:
    """``batches(epoch)``'s batches, one epoch after another."""
    e = 0
    while True:
        yield from batches(e)
        e += 1


def feed_batches(args: argparse.Namespace, device: torch.device, dtype: str, common: Dict[str, Any]) -> Iterator[Any]:
    """Endless batches of libshard's device feed, one epoch after another (the dataset opened now)."""
    try:
        ds = lt.ShardDataset(args.dataset, args.batch_size, threads=args.feed_threads, device=device, dtype=dtype,
                             layout="NCHW", memory_format=torch.channels_last, mean=MEAN, std=STD, **common)
    except ValueError as e:
        usage_error("dataset %s: %s" % (args.dataset, e))
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)

    def epoch(e: int) -> Any:
        ds.set_epoch(e)
        return dl
    return endless(epoch)


def torchvision_folder(args: argparse.Namespace) -> Any:
    """torchvision's ImageFolder of ``--compare-folder`` (uint8 NCHW samples)."""
    try:
        import torchvision
    except ImportError:
        usage_error("--compare-folder: needs torchvision, which is not installed (pip install torchvision)")
    T = torchvision.transforms
    if args.augment == "random-resized-crop":
        tf = T.Compose([T.RandomResizedCrop(args.image_size), T.RandomHorizontalFlip(), T.PILToTensor()])
    else:
        tf = T.Compose([T.Resize(args.image_size), T.CenterCrop(args.image_size), T.PILToTensor()])
    try:
        return torchvision.datasets.ImageFolder(args.compare_folder, transform=tf)
    except (OSError, RuntimeError, ValueError) as e:
        usage_error("--compare-folder %s: %s" % (args.compare_folder, e))


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# --- the run --------------------------------------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    common: Dict[str, Any] = dict(image_size=args.image_size, shuffle=True, seed=0)
    if args.augment != "none":
        common["augment"] = args.augment
    common["split"], images = open_split(args, common)
    folder = torchvision_folder(args) if args.compare_folder else None  # checked before anything runs
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    cores = os.cpu_count() or 1
    split = {"": "", "*": ", all splits"}.get(common["split"], ", split " + common["split"])
    print("libshard.bench: %s (%d images%s), %s on %s (%s, %d cores), batch %d of %d x %d, augment %s, torch %s"
          % (args.dataset, images, split, args.model, device, name, cores, args.batch_size, args.image_size,
             args.image_size, args.augment, torch.__version__), flush=True)
    if device.type == "cpu":
        print("no GPU measured: this measures the CPU, where the model and the loader share the cores%s"
              % ("" if args.model == "tiny" else "; --model tiny checks the feed in seconds"), flush=True)
    r: Dict[str, Any] = {"dataset": args.dataset, "split": common["split"], "model": args.model, "device": name,
                         "cores": cores, "batch_size_asked": args.batch_size, "image_size": args.image_size,
                         "augment": args.augment, "seconds": args.seconds, "torch": torch.__version__,
                         "libshard": libshard.__version__, "elapsed": {}}
    bench = Bench(args, device)
    r["batch_size"] = args.batch_size = bench.fit_batch()
    rows = 2 + (1 if folder else 0) + len(args.threads)
    print("plan: training fed by the ceiling and by libshard's feed, interleaved in %d pairs (%g s each side)%s; "
          "the loader alone with threads=%s (%g s each): about %s in all"
          % (args.pairs, args.seconds, "; torchvision's ImageFolder (%g s)" % args.seconds if folder else "",
             ",".join(map(str, args.threads)), args.seconds, seconds_text(rows * args.seconds)), flush=True)
    ratio = bench.training(r, common)
    if folder:
        bench.torchvision(r, folder, ratio)
    alone, cpu, cpus = loader_rows(args, r, common)
    verdicts(args, r, device, ratio, r["train_synthetic"], alone, cpu, cpus)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0


class Bench:
    """The training rows: one model, a synthetic batch on the device, and the feeds, on ``args.batch_size``."""

    def __init__(self, args: argparse.Namespace, device: torch.device) -> None:
        self.args, self.device = args, device
        self.dtype = "bfloat16" if device.type == "cuda" else "float32"
        self.feed = _device.DeviceFeed(str(device), self.dtype, MEAN, STD, "NCHW", True)  # what every row pays
        self.sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    def synthetic(self) -> int:
        return self.trainer((self.feed._convert(self.x8), self.y))

    def fit_batch(self) -> int:
        """Makes the model and the synthetic batch, times a step and returns the batch to measure with: the asked
        one, or on a CPU the largest that lets each slot of a pair hold UNTIMED + 2 steps (said so)."""
        args, device, S = self.args, self.device, self.args.seconds
        limit = S / (args.pairs + 1) / (UNTIMED + 2)
        try:
            self.trainer = Trainer(args, device)
            g = torch.Generator(device="cpu").manual_seed(0)
            self.x8 = torch.randint(0, 256, (args.batch_size, args.image_size, args.image_size, 3),
                                    dtype=torch.uint8, generator=g).to(device)
            self.y = torch.randint(0, args.classes, (args.batch_size,), generator=g).to(device)

            def step_seconds(b: int) -> float:
                self.trainer((self.feed._convert(self.x8[:b]), self.y[:b]))  # a shape's first: allocations, cuDNN
                self.sync()
                t0 = time.perf_counter()
                self.trainer((self.feed._convert(self.x8[:b]), self.y[:b]))
                self.sync()
                return time.perf_counter() - t0
            if device.type == "cpu":
                batch, took, wanted = pick_batch(step_seconds, args.batch_size, limit)
            else:
                batch = args.batch_size
                took = wanted = step_seconds(batch)
        except RuntimeError as e:  # out of memory, an image too small for the model
            usage_error("--model %s, --batch-size %d, --image-size %d on %s: %s"
                        % (args.model, args.batch_size, args.image_size, device, str(e).splitlines()[0]))
        need = wanted * (UNTIMED + 2) * (args.pairs + 1)  # the --seconds that the asked batch needs
        tiny = "" if args.model == "tiny" else "; --model tiny checks the feed in seconds"
        if batch == 0:
            usage_error("--model %s: one step of batch 1 takes about %s on the %s, more than --seconds %g allows "
                        "(%d steps in each of its %d slots): %s--seconds %d"
                        % (args.model, seconds_text(wanted / args.batch_size), device.type, S, UNTIMED + 2,
                           args.pairs + 1, "" if args.model == "tiny" else "use --model tiny, or ",
                           math.ceil(need / args.batch_size)))
        print("one training step of %s at batch %d: about %s here" % (args.model, batch, seconds_text(took)),
              flush=True)
        if batch < args.batch_size:
            print("batch %d would take about %s a step, more than --seconds %g allows: measuring at batch %d "
                  "instead (--seconds %d keeps batch %d%s)"
                  % (args.batch_size, seconds_text(wanted), S, batch, math.ceil(need), args.batch_size, tiny),
                  flush=True)
        elif took > limit:
            print("(a step takes more than --seconds %g gives each of %d steps: --seconds %d for steadier figures)"
                  % (S, UNTIMED + 2, math.ceil(need)), flush=True)
        self.x8, self.y = self.x8[:batch], self.y[:batch]
        return batch

    def training(self, r: Dict[str, Any], common: Dict[str, Any]) -> Dict[str, Any]:
        """1-2. The ceiling (a uint8 batch already on the device) and libshard's feed, interleaved."""
        args = self.args
        fed = feed_batches(args, self.device, self.dtype, common)

        def on_pair(i: int, c: float, f: float) -> None:
            print("  pair %d of %d: ceiling %9.1f, libshard feed %9.1f   %.3f" % (i + 1, args.pairs, c, f, f / c),
                  flush=True)
        print("training, img/s:", flush=True)
        cs, fs, elapsed = paired(self.synthetic, lambda: self.trainer(next(fed)), args.seconds, args.pairs,
                                 args.warmup, sync=self.sync, on_pair=on_pair)
        fed.close()
        ratio = feed_ratio(cs, fs)
        r.update(train_synthetic=statistics.median(cs), train_libshard=statistics.median(fs), feed_ratio=ratio,
                 pairs=[{"ceiling": c, "feed": f} for c, f in zip(cs, fs)])
        r["elapsed"].update(train_synthetic=elapsed[0], train_libshard=elapsed[1])
        print("  %-48s %9.1f   median of %d" % ("synthetic batch on the device (the ceiling)", r["train_synthetic"],
                                                args.pairs))
        print("  %-48s %9.1f   %s" % ("libshard feed (device=, %d threads)" % args.feed_threads, r["train_libshard"],
                                      ratio_text(ratio)), flush=True)
        return ratio

    def torchvision(self, r: Dict[str, Any], folder: Any, ratio: Dict[str, Any]) -> None:
        """3. torchvision's ImageFolder pipeline, for comparison (one run, against the pairs' median ceiling)."""
        args, device = self.args, self.device
        tv = torch.utils.data.DataLoader(folder, batch_size=args.batch_size, shuffle=True, drop_last=True,
                                         num_workers=args.workers, pin_memory=device.type == "cuda",
                                         persistent_workers=args.workers > 0)
        batches = ((self.feed._convert(b[0].to(device, non_blocking=True).permute(0, 2, 3, 1)), b[1])
                   for b in endless(lambda e: tv))  # NCHW uint8 -> the same conversion as the other rows
        m = measure(lambda: self.trainer(next(batches)), args.seconds, args.warmup, sync=self.sync)
        batches.close()
        r["train_torchvision"], r["elapsed"]["train_torchvision"] = m.rate, m.elapsed
        share = m.rate / r["train_synthetic"]
        print("  %-48s %9.1f   %s" % ("torchvision ImageFolder (%d workers)" % args.workers, m.rate,
                                      "above the ceiling: not a result (the machine was busy: rerun)"
                                      if share > 1 + ratio["spread"]
                                      else "%.3f of the ceiling (one run, against the pairs' median)" % share),
              flush=True)


def loader_rows(args: argparse.Namespace, r: Dict[str, Any], common: Dict[str, Any]) -> Tuple[Dict, Dict, int]:
    """4. The loader alone, by thread count, with the CPU time of this process and of the others meanwhile."""
    print("loader alone (uint8 batches, no model), img/s:", flush=True)
    alone = r["loader_by_threads"] = {}
    cpu = r["loader_cpu"] = {}
    cpus = usable_cpus()
    for t in args.threads:
        with libshard.Loader(args.dataset, args.batch_size, threads=t, **common) as ld:
            meter = CpuMeter()
            m = measure(lambda: next(ld)[0].shape[0], args.seconds, args.warmup)
            ours, others = meter.stop()
        alone[t], r["elapsed"]["loader_threads_%d" % t] = m.rate, m.elapsed
        busy = contended(t, cpus, others)
        cpu[t] = {"this_process": ours, "others": others, "contended": busy}
        print("  threads=%-4d %9.1f   %.0f per thread   CPU: this process %.1f cores, others %s%s"
              % (t, m.rate, m.rate / t, ours, "unknown" if others is None else "%.1f" % others,
                 "   busy: other processes took CPUs these threads needed" if busy else ""), flush=True)
    return alone, cpu, cpus


def verdicts(args: argparse.Namespace, r: Dict[str, Any], device: torch.device, ratio: Dict[str, Any],
             ceiling: float, alone: Dict[int, float], cpu: Dict[int, Dict[str, Any]], cpus: int) -> None:
    """The waiting share and the threads the feed needs, each only when its figures allow a conclusion."""
    if ratio["verdict"] == "ok":
        r["waiting_share"] = max(0.0, 1.0 - ratio["median"])
        print("waiting for data: %.1f%% of the %s's time with libshard's feed" % (100 * r["waiting_share"],
                                                                                   device.type))
    else:
        r["waiting_share"] = None
        print("waiting for data: not concluded (the pairs disagree: the machine was busy: rerun)")
    busy = [t for t in args.threads if cpu[t]["contended"]]
    if busy:
        r["threads_needed"] = None
        worst = max(cpu[t]["others"] for t in busy)
        print("the threads the feed needs: not concluded: other processes used up to %.1f of the %d CPUs during "
              "the loader's rows (threads=%s): rerun on an idle machine" % (worst, cpus, ",".join(map(str, busy))))
        return
    enough = [t for t in args.threads if alone[t] >= ceiling]
    top = args.threads[-1]
    r["threads_needed"] = enough[0] if enough else math.ceil(ceiling / (alone[top] / top))
    if enough:
        print("the feed needs %d thread(s) to keep %s busy here (%.0f img/s at the ceiling)"
              % (enough[0], args.model, ceiling))
    else:
        print("the feed needs about %d threads to keep %s busy here (%.0f img/s at the ceiling; %d threads give "
              "%.0f img/s)" % (r["threads_needed"], args.model, ceiling, top, alone[top]))


def ratio_text(ratio: Dict[str, Any]) -> str:
    pairs = "pairs %.3f-%.3f" % (ratio["low"], ratio["high"])
    if ratio["verdict"] == "above":
        return ("above the ceiling by more than the pairs' spread (%s): not a result, the machine was busy: rerun"
                % pairs)
    if ratio["verdict"] == "wide":
        return "not concluded: the pairs are too far apart (%s): the machine was busy: rerun" % pairs
    return "%.3f of the ceiling (%s)" % (ratio["median"], pairs)


def seconds_text(s: float) -> str:
    return "%.1f ms" % (s * 1e3) if s < 1 else "%.1f s" % s if s < 120 else "%.0f min" % (s / 60)


if __name__ == "__main__":
    sys.exit(main())
