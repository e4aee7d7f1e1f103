#!/usr/bin/env python3
"""How libshard's costs grow with the number of records (issue 44: 10^8 records on one machine).

A benchmark, not a test: it always exits 0 (2 on a usage error). For each N of --sizes it makes a class-folder
tree of N tiny distinct images (16x16 gray PNGs of per-file noise written with zlib, so the leak check sees N
different pictures; --distinct K writes only K files and hard-links the rest, which makes copy groups), then
measures:

  convert     `shard convert SRC -o OUT --records-per-shard 1000 --leaks warn`: wall, CPU (user+sys), peak RSS
  tasks       the same as 8 tasks (`--num-tasks 8 --task-index i`, one after another): wall and CPU summed, peak
              RSS the largest task's
  merge       `shard merge` of those 8 tasks: wall, CPU, peak RSS
  manifest    manifest.json of the single convert: bytes, and bytes per shard
  verify      `shard verify OUT`: wall, CPU, peak RSS
  report      `shard report OUT`: wall, CPU, peak RSS
  loader      `libshard.Loader(OUT, 256, split="train")` construction: wall and CPU (in a fresh child process)
  targets     `libshard.torch.ShardDataset(OUT, ...)` construction, then `.targets`: wall and CPU
  first batch epochs 0 and 1 through `torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)` (not
              persistent; shuffled): time from iter() to the first batch, and each worker's private memory
              (Private_Dirty of /proc/PID/smaps_rollup: what it wrote) while that batch is out; the child's peak RSS

CPU and peak RSS of a command are its own (os.wait4's rusage). It prints one row per measure and one column per N,
then per measure the growth per record above the smallest N ((v(N_max) - v(N_min)) / (N_max - N_min): bytes or µs
a record) and the exponent between the two largest N (log(v2/v1) / log(N2/N1)), then the issue's targets as
PASS/FAIL lines at the largest N (the issue sets them for 10^8 records; small N only show the trend).

  PYTHONPATH= python3 bench/scale/run.py                       # N = 10^5, 10^6 (default)
  python3 bench/scale/run.py --sizes 10000,100000              # a quick run
  python3 bench/scale/run.py --sizes 1000000,10000000 --distinct 1000000 --work /big/disk --keep
  python3 bench/scale/run.py --skip merge,report --json out.json --markdown

--shard and --pythonpath name the CLI and the folder holding the `libshard` package (default: this checkout's
build/). --work DIR is the scratch folder (default: a new folder under $TMPDIR), removed at the end unless --keep;
with --keep the source trees (WORK/src-N) are kept and reused by later runs with the same --work.
"""
import argparse
import datetime
import json
import math
import os
import platform
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from multiprocessing import Pool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAGES = ("convert", "merge", "verify", "report", "loader", "targets", "dataloader")
RECORDS_PER_SHARD = 1000
TASKS = 8
BATCH = 256
SIDE = 16
GB = 1 << 30


# --- the source tree -----------------------------------------------------------------------------------------

def png(pixels):
    """A gray 8-bit SIDE x SIDE PNG of `pixels` (SIDE*SIDE bytes), built with zlib alone."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + pixels[y * SIDE:(y + 1) * SIDE] for y in range(SIDE))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", SIDE, SIDE, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))


def path_of(src, i, classes):
    return os.path.join(src, f"c{i % classes:04d}", f"{i:08d}.png")


def write_files(job):
    """Writes images lo..hi-1: distinct ones (i < distinct) from seeded noise, the rest as hard links."""
    src, lo, hi, classes, distinct = job
    rng = random.Random(lo)
    for i in range(lo, hi):
        path = path_of(src, i, classes)
        if i < distinct:
            with open(path, "wb") as f:
                f.write(png(rng.randbytes(SIDE * SIDE)))
        else:
            os.link(path_of(src, i % distinct, classes), path)


def make_source(src, n, classes, distinct):
    """SRC/cCCCC/IIIIIIII.png, image i in class i % classes; reused when complete with the same parameters."""
    stamp = os.path.join(src, ".complete")
    want = f"{n} {classes} {distinct} {SIDE}\n"
    if os.path.exists(stamp) and open(stamp).read() == want:
        return 0.0
    shutil.rmtree(src, ignore_errors=True)
    t0 = time.perf_counter()
    for c in range(min(classes, n)):
        os.makedirs(os.path.join(src, f"c{c:04d}"))
    step = 20000
    with Pool(os.cpu_count()) as pool:  # the distinct files first: the links point at them
        pool.map(write_files, [(src, lo, min(lo + step, distinct), classes, distinct)
                               for lo in range(0, distinct, step)])
        pool.map(write_files, [(src, lo, min(lo + step, n), classes, distinct) for lo in range(distinct, n, step)])
    with open(stamp, "w") as f:
        f.write(want)
    return time.perf_counter() - t0


# --- commands --------------------------------------------------------------------------------------------------

def run_measured(cmd, ok=(0,), env=None):
    """Runs cmd; returns its wall s, CPU s (user+sys) and peak RSS bytes (os.wait4: its own rusage, with the
    children it waited for), and its stdout. An exit code not in ok raises with the end of its stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # unlinked files: nothing is left
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # not proc.wait(): it would reap the child and lose its rusage
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code not in ok:
        raise RuntimeError(f"{' '.join(cmd)}: exit {code}\n{stderr.strip()[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_b": usage.ru_maxrss * 1024}, stdout


def convert_stage(shard, src, out, leaks):
    m, _ = run_measured([shard, "convert", src, "-o", out, "--records-per-shard", str(RECORDS_PER_SHARD),
                         "--leaks", leaks, "-q"], ok=(0, 3))
    manifest = os.path.join(out, "manifest.json")
    shards = sum(len(split["shards"]) for split in json.load(open(manifest))["splits"])
    size = os.path.getsize(manifest)
    return {"convert": m, "manifest": {"bytes": size, "shards": shards, "bytes_per_shard": size / shards}}


def merge_stage(shard, src, out, leaks):
    total = {"wall_s": 0.0, "cpu_s": 0.0, "rss_b": 0}
    for i in range(TASKS):
        m, _ = run_measured([shard, "convert", src, "-o", out, "--records-per-shard", str(RECORDS_PER_SHARD),
                             "--leaks", leaks, "--num-tasks", str(TASKS), "--task-index", str(i), "-q"],
                            ok=(0, 3))
        total = {"wall_s": total["wall_s"] + m["wall_s"], "cpu_s": total["cpu_s"] + m["cpu_s"],
                 "rss_b": max(total["rss_b"], m["rss_b"])}
    return {"tasks": total, "merge": run_measured([shard, "merge", out, "-q"])[0]}


# --- the Python reader, in a fresh child process per N ------------------------------------------------------

def private_bytes(pid):
    """Private_Dirty of a process, from /proc/PID/smaps_rollup: the memory it wrote that no other process shares
    (a forked worker's own heap). Private_Clean is left out: there it is mostly shard pages the worker mapped
    and read (page cache, shared with every reader of the file, counted "private" only because no other
    process maps those very pages), which grows with the shards one batch touches, not with what it holds."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Private_Dirty:"):
                    total += int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None  # the worker had finished its share of a short epoch and left
    return total


def reader_child(out, stages):
    """Runs in the child: times Loader, ShardDataset.targets and DataLoader first batches; prints JSON."""
    import libshard
    res = {}

    def timed(fn):
        w, c = time.perf_counter(), time.process_time()
        value = fn()
        return value, {"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c}

    if "loader" in stages:
        loader, res["loader"] = timed(lambda: libshard.Loader(out, BATCH, split="train"))
        loader.close()
    if "targets" in stages or "dataloader" in stages:
        import torch
        import libshard.torch
    if "targets" in stages:
        ds, res["targets_open"] = timed(lambda: libshard.torch.ShardDataset(out, BATCH, split="train"))
        targets, res["targets"] = timed(lambda: ds.targets)
        assert len(targets) > 0
        del ds, targets
    if "dataloader" in stages:
        ds = libshard.torch.ShardDataset(out, BATCH, split="train", shuffle=True, seed=0, threads=1)
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
        for epoch in (0, 1):
            ds.set_epoch(epoch)
            t0 = time.perf_counter()
            it = iter(dl)
            images, _ = next(it)
            res[f"first_batch_e{epoch}"] = {"wall_s": time.perf_counter() - t0}
            seen = [b for b in (private_bytes(w.pid) for w in it._workers) if b is not None]
            res[f"worker_private_e{epoch}"] = {"bytes": max(seen) if seen else None}
            del images, it  # shuts the workers down: the next epoch starts new ones
    print(json.dumps(res))


def reader_stage(args, out, stages):
    """Each reader stage in a fresh interpreter of its own, so that what one leaves on the heap (the targets'
    list, a Loader's freed index) is not counted as a DataLoader worker's private memory: forked workers
    share the parent's pages until written, and Python's collector writes every object it visits."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [args.pythonpath, os.environ.get("PYTHONPATH")])))
    res, peak = {}, None
    for stage in stages:
        m, stdout = run_measured([args.python, os.path.abspath(__file__), "--_child", out,
                                  "--skip", ",".join(s for s in STAGES if s != stage)], env=env)
        res.update(json.loads(stdout.strip().splitlines()[-1]))
        if peak is None or m["rss_b"] > peak["rss_b"]:
            peak = m
    if peak is not None:
        res["reader_process"] = peak
    return res


# --- one N ------------------------------------------------------------------------------------------------------

def log(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def run_size(args, n, work):
    src = os.path.join(work, f"src-{n}")
    gen = make_source(src, n, args.classes, min(args.distinct or n, n))
    log(f"N={n}: source tree {'made in %.1f s' % gen if gen else 'reused'}")
    res = {}
    out1, out8 = os.path.join(work, f"out-{n}"), os.path.join(work, f"tasks-{n}")
    for d in (out1, out8):
        shutil.rmtree(d, ignore_errors=True)
    steps = [("convert", lambda: convert_stage(args.shard, src, out1, args.leaks)),
             ("merge", lambda: merge_stage(args.shard, src, out8, args.leaks))]
    for name, fn in steps:
        if name not in args.skip:
            log(f"N={n}: {name}")
            res.update(fn())
    out = out1 if "convert" not in args.skip else out8 if "merge" not in args.skip else None
    later = [s for s in STAGES[2:] if s not in args.skip]
    if out is None and later:
        log(f"N={n}: nothing converted: {','.join(later)} left out")
        later = []
    if "verify" in later:
        log(f"N={n}: verify")
        res["verify"] = run_measured([args.shard, "verify", out, "-q"])[0]
    if "report" in later:
        log(f"N={n}: report")
        res["report"] = run_measured([args.shard, "report", out, "-o", os.path.join(work, f"report-{n}.html"),
                                      "-q"])[0]
    readers = [s for s in later if s in ("loader", "targets", "dataloader")]
    if readers:
        log(f"N={n}: {','.join(readers)}")
        res.update(reader_stage(args, out, readers))
    if not args.keep:  # unlinking is slow on some disks (minutes for 10^5 files): say so
        log(f"N={n}: removing its outputs")
        for d in (out1, out8):
            shutil.rmtree(d, ignore_errors=True)
    return res


# --- the table --------------------------------------------------------------------------------------------------

ROWS = [  # (label, stage key, field, unit)
    ("convert wall", "convert", "wall_s", "s"), ("convert CPU", "convert", "cpu_s", "s"),
    ("convert peak RSS", "convert", "rss_b", "B"),
    ("8 tasks wall (sum)", "tasks", "wall_s", "s"), ("8 tasks CPU (sum)", "tasks", "cpu_s", "s"),
    ("8 tasks peak RSS (max)", "tasks", "rss_b", "B"),
    ("merge wall", "merge", "wall_s", "s"), ("merge CPU", "merge", "cpu_s", "s"),
    ("merge peak RSS", "merge", "rss_b", "B"),
    ("manifest.json", "manifest", "bytes", "B"), ("manifest.json per shard", "manifest", "bytes_per_shard", "B"),
    ("verify wall", "verify", "wall_s", "s"), ("verify CPU", "verify", "cpu_s", "s"),
    ("verify peak RSS", "verify", "rss_b", "B"),
    ("report wall", "report", "wall_s", "s"), ("report CPU", "report", "cpu_s", "s"),
    ("report peak RSS", "report", "rss_b", "B"),
    ("Loader open wall", "loader", "wall_s", "s"), ("Loader open CPU", "loader", "cpu_s", "s"),
    ("ShardDataset open wall", "targets_open", "wall_s", "s"),
    ("ShardDataset.targets wall", "targets", "wall_s", "s"), ("ShardDataset.targets CPU", "targets", "cpu_s", "s"),
    ("first batch epoch 0", "first_batch_e0", "wall_s", "s"), ("first batch epoch 1", "first_batch_e1", "wall_s", "s"),
    ("worker private mem e0", "worker_private_e0", "bytes", "B"),
    ("worker private mem e1", "worker_private_e1", "bytes", "B"),
    ("reader process peak RSS", "reader_process", "rss_b", "B"),
]


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "s":
        return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"
    return f"{v / 2**20:.1f} MiB" if v >= 2**20 else f"{v / 1024:.1f} KiB" if v >= 10240 else f"{v:.0f} B"


def growth(sizes, values):
    """(per record above the smallest N, exponent between the two largest N), None where not defined."""
    pts = [(n, v) for n, v in zip(sizes, values) if v is not None]
    if len(pts) < 2:
        return None, None
    (n0, v0), (n1, v1), (n2, v2) = pts[0], pts[-2], pts[-1]
    per = (v2 - v0) / (n2 - n0)
    exp = math.log(v2 / v1) / math.log(n2 / n1) if v1 > 0 and v2 > 0 else None
    return per, exp


def table_rows(results, sizes):
    rows = []
    for label, key, field, unit in ROWS:
        values = [results[str(n)].get(key, {}).get(field) for n in sizes]
        if all(v is None for v in values):
            continue
        per, exp = growth(sizes, values)
        per_s = "-" if per is None else f"{per * 1e6:.3f} µs" if unit == "s" else f"{per:.2f} B"
        exp_s = "-" if exp is None else f"{exp:.2f}"
        rows.append([label] + [fmt(v, unit) for v in values] + [per_s, exp_s])
    return rows


def checks(results, sizes):
    """The issue's targets, at the largest N: (ok, text) pairs."""
    big = results[str(sizes[-1])]
    get = lambda key, field: big.get(key, {}).get(field)  # noqa: E731
    series = lambda key, field: [results[str(n)].get(key, {}).get(field) for n in sizes]  # noqa: E731
    out = []
    for stage in ("convert", "merge", "report"):
        rss = get(stage, "rss_b")
        if rss is not None:
            per, _ = growth(sizes, series(stage, "rss_b"))
            out.append((rss <= GB, f"{stage} peak RSS {fmt(rss, 'B')} <= 1 GiB"))
            if per is not None:
                out.append((per <= 16, f"{stage} peak RSS grows {per:.2f} B/record <= 16"))
    if get("manifest", "bytes_per_shard") is not None:
        v = get("manifest", "bytes_per_shard")
        out.append((v <= 1024, f"manifest.json {v:.0f} B/shard <= 1 KiB"))
    for key, limit, text in (("loader", 0.5, "Loader open"), ("targets", 1.0, "ShardDataset.targets"),
                             ("first_batch_e0", 0.3, "first batch, epoch 0"),
                             ("first_batch_e1", 0.3, "first batch, epoch 1")):
        if get(key, "wall_s") is not None:
            out.append((get(key, "wall_s") <= limit, f"{text} {fmt(get(key, 'wall_s'), 's')} <= {limit} s"))
    for e in (0, 1):
        per, _ = growth(sizes, series(f"worker_private_e{e}", "bytes"))
        if per is not None:
            out.append((per <= 8, f"worker private memory (epoch {e}) grows {per:.2f} B/record <= 8"))
    for label, key, field, unit in ROWS:
        if field == "cpu_s":
            _, exp = growth(sizes, series(key, field))
            if exp is not None:
                out.append((exp <= 1.05, f"{label} exponent {exp:.2f} <= 1.05"))
    return out


def machine():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor() or "?")
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal:")) * 1024
    return {"cpu": model, "cores": os.cpu_count(), "ram_b": mem, "date": datetime.datetime.now().isoformat(" ", "minutes")}


def render(results, sizes, info, markdown):
    head = ["measure"] + [f"N={n:,}" for n in sizes] + ["per record above base", "exponent (2 largest)"]
    rows = table_rows(results, sizes)
    lines = []
    if markdown:
        lines.append(f"Scale benchmark (`bench/scale/run.py`), {info['version']}, {info['date']}: {info['cpu']}, "
                     f"{info['cores']} cores, {info['ram_b'] / GB:.0f} GiB RAM; {RECORDS_PER_SHARD:,} records a "
                     f"shard, {SIDE}x{SIDE} PNG sources, {info['classes']} classes, --leaks {info['leaks']}.\n")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
        for r in [head] + rows:
            lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                   for i, (c, w) in enumerate(zip(r, widths))))
    lines.append("")
    for ok, text in checks(results, sizes):
        lines.append(("- " if markdown else "") + ("PASS " if ok else "FAIL ") + text)
    return "\n".join(lines)


# --- main ---------------------------------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="100000,1000000", help="record counts, comma-separated (default 10^5,10^6)")
    p.add_argument("--skip", default="", help=f"stages to leave out, comma-separated: {','.join(STAGES)}")
    p.add_argument("--classes", type=int, default=1000, help="class folders (default 1000)")
    p.add_argument("--distinct", type=int, default=0,
                   help="distinct image files per tree; the rest are hard links to them (default: all distinct)")
    p.add_argument("--leaks", default="warn", choices=("warn", "off"),
                   help="convert's leak check (default warn, the converter's default; off: to see its share)")
    p.add_argument("--work", help="scratch folder (default: a new one under $TMPDIR)")
    p.add_argument("--keep", action="store_true", help="keep --work (and reuse its source trees next time)")
    p.add_argument("--shard", default=os.path.join(ROOT, "build", "tools", "shard"), help="the shard CLI")
    p.add_argument("--pythonpath", default=os.path.join(ROOT, "build", "python"),
                   help="folder holding the libshard package")
    p.add_argument("--python", default=sys.executable, help="interpreter of the reader stages")
    p.add_argument("--json", metavar="OUT", help="write every number to OUT")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table (docs/performance.md)")
    p.add_argument("--_child", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.skip = set(filter(None, args.skip.split(",")))
    if args.skip - set(STAGES):
        p.error(f"--skip: unknown stage(s) {','.join(sorted(args.skip - set(STAGES)))}; stages: {','.join(STAGES)}")
    if args._child:
        return reader_child(args._child, [s for s in STAGES if s not in args.skip])
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s})
    except ValueError:
        p.error("--sizes: comma-separated integers")
    if not sizes or sizes[0] < 1:
        p.error("--sizes: at least one N >= 1")
    args.shard = os.path.abspath(args.shard)
    if not os.access(args.shard, os.X_OK):
        p.error(f"--shard: {args.shard} is not an executable")
    version = subprocess.run([args.shard, "--version"], capture_output=True, text=True).stdout.strip()
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="libshard-scale-")
    os.makedirs(work, exist_ok=True)
    results = {}
    try:
        for n in sizes:
            results[str(n)] = run_size(args, n, work)
    finally:
        if not args.keep:
            log(f"removing {work}")
            shutil.rmtree(work, ignore_errors=True)
    info = dict(machine(), version=version, classes=args.classes, leaks=args.leaks, distinct=args.distinct or "all",
                records_per_shard=RECORDS_PER_SHARD, image=f"{SIDE}x{SIDE} gray PNG")
    print(render(results, sizes, info, args.markdown))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "sizes": sizes, "results": results,
                       "checks": [{"pass": ok, "check": text} for ok, text in checks(results, sizes)]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
