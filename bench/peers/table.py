"""Makes OUT/peers.md from the JSON records run.sh collected in OUT/results.

    python table.py OUT [--smoke] [--photos DIR] [--commit SHA]

Every figure in the table comes from those records, the machine's own
description (lscpu, /proc) and the venvs' pip freeze, so the table is never
typed by hand. Exit 1 when an output check fails: libshard's rows always,
any peer's in --smoke (CI), and a peer that could not run in --smoke.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract  # noqa: E402  (tolerances and workload constants)

NAMES = {"libshard": "libshard `ShardDataset` + `DataLoader`", "libshard-loader": "libshard `Loader` (Python loop)",
         "torchvision": "torchvision `ImageFolder` + `DataLoader`", "tfdata": "tf.data", "dali": "DALI (CPU)",
         "mds": "MosaicML Streaming (MDS)", "litdata": "LitData", "wds": "WebDataset", "ffcv": "FFCV",
         "grain": "Grain"}
PACKAGES = {"libshard": ["libshard", "torch"], "torchvision": ["torchvision", "torch"], "tfdata": ["tensorflow-cpu"],
            "dali": ["nvidia-dali-cuda120"], "mds": ["mosaicml-streaming", "torch"], "litdata": ["litdata", "torch"],
            "wds": ["webdataset", "torch"], "ffcv": ["ffcv", "torch", "numba"], "grain": ["grain", "array-record"]}
ORDER = list(NAMES)
SHORT = {"libshard": "libshard", "libshard-loader": "libshard", "torchvision": "torchvision", "tfdata": "tf.data",
         "dali": "DALI", "mds": "MDS", "litdata": "LitData", "wds": "WebDataset", "ffcv": "FFCV", "grain": "Grain"}


def load(out):
    records = []
    for path in sorted(glob.glob(os.path.join(out, "results", "*.json"))):
        with open(path) as f:
            r = json.load(f)
        r["_file"] = os.path.basename(path)
        if r["_file"].endswith("-cold.json"):
            r["workload"] = "cold"  # its own table, never in the warm medians
        records.append(r)
    return records


def machine():
    model = "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    mem = "?"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.0f} GiB"
    return f"{model}, {os.cpu_count()} cores, {mem}, {platform.platform()}"


def versions(out, peer, records):
    found = {}
    path = os.path.join(out, "versions", f"{peer.split('-')[0]}.txt")
    if os.path.exists(path):
        for line in open(path):
            name, _, ver = line.strip().partition("==")
            if ver:
                found.setdefault(name.lower().replace("_", "-"), ver)
    for r in records:  # what the reader reported, where pip freeze has none (libshard's wheel is a file URL)
        if r.get("peer") == peer and r.get("version") and PACKAGES.get(peer):
            found.setdefault(PACKAGES[peer][0], r["version"])
    return ", ".join(f"{p} {found[p]}" for p in PACKAGES.get(peer.split("-")[0], []) if p in found)


def first_line(text):
    return (str(text).strip().splitlines() or [""])[0].replace("|", "\\|")[:200]


def fmt(x, digits=0):
    return "–" if x is None else f"{x:,.{digits}f}"


def span(values, digits=0):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1 or min(values) == max(values):
        return fmt(values[0], digits)
    return f"{fmt(statistics.median(values), digits)} ({fmt(min(values), digits)}–{fmt(max(values), digits)})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--photos", default="")
    p.add_argument("--commit", default="")
    args = p.parse_args()
    records = load(args.out)
    by = {}
    for r in records:
        by.setdefault((r.get("command"), r.get("peer"), r.get("workload")), []).append(r)
    failed_checks, lines = [], []
    W = lines.append

    loads = [l.split()[3] for l in open(os.path.join(args.out, "load.txt"))] if os.path.exists(
        os.path.join(args.out, "load.txt")) else []
    load_before = open(os.path.join(args.out, "load-before.txt")).read().strip().split("load average:")[-1] \
        if os.path.exists(os.path.join(args.out, "load-before.txt")) else "?"
    reads = [r for r in records if r.get("command") == "read" and "error" not in r and r.get("workload") != "cold"]
    some = reads[0] if reads else {}
    conv = (by.get(("convert", "libshard", "eval")) or by.get(("convert", "libshard", None)) or [{}])[0]
    def stamp(name):  # when run.sh wrote the file: the reads' start and end
        path = os.path.join(args.out, name)
        t = os.path.getmtime(path) if os.path.exists(path) else datetime.datetime.now().timestamp()
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    start, end = stamp("load-before.txt"), stamp("load-after.txt")
    W(f"Measured {start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC by `bench/peers/run.sh"
      f"{' --smoke' if args.smoke else ''}` (libshard {args.commit}): {machine()}. "
      f"Load average (1 min) before the reads: {load_before.strip().split(',')[0]}; during them "
      f"{min(loads, default='?')}–{max(loads, default='?')}. Dataset: {conv.get('images', '?')} photos "
      f"converted by `shard convert` (shorter side {contract.RESIZE}, JPEG q{contract.JPEG_QUALITY}); every peer "
      f"reads those same JPEG bytes. Reads: uint8 {contract.SIZE}×{contract.SIZE}×3, batch {some.get('batch', '?')}, "
      f"drop_last, {contract.CORES} cores for everything (threads and worker processes), "
      f"{contract.WARMUP_EPOCHS} warm-up epoch then {some.get('epochs', '?')} timed ({some.get('batches', '?')} "
      f"batches) per run, {max((r.get('round', 1) for r in reads), default=0)} rounds, warm page "
      f"cache; medians of the rounds with their range; core-ms/img is the CPU time of the process and all its "
      f"workers per image. Rounds interleave the readers, so each ratio is taken within a round (libshard "
      f"`ShardDataset` and the row measured minutes apart under the same load), then the median of the rounds: "
      f"**img/s ratio** = libshard's img/s ÷ the row's; **CPU ratio** = the row's core-ms/img ÷ libshard's (the "
      f"machine's load moves img/s far more than the CPU time an image costs).")
    W("")
    for workload, label, tol in (("eval", "Eval: centre 224 of the shorter-side-256 images", contract.EVAL_TOLERANCE),
                                 ("train", "Train: random-resized-crop (0.08–1, 3/4–4/3) + flip",
                                  contract.SMOKE_TRAIN_TOLERANCE if args.smoke else contract.TRAIN_TOLERANCE)):
        W(f"**{label}** (output check: per-channel mean within {tol} levels of libshard's)")
        W("")
        W("| reader | img/s | core-ms/img | img/s ratio | CPU ratio | shuffle | layout | mean R,G,B (check) | "
          "settings |")
        W("|---|---|---|---|---|---|---|---|---|")
        base = by.get(("read", "libshard", workload), [])
        base_mean = next((r["mean"] for r in base if r.get("mean")), None)
        for peer in ORDER:
            rows = by.get(("read", peer, workload), [])
            installs = by.get(("install", peer, "eval"), []) + by.get(("install", peer, None), [])
            if not rows and not installs:
                continue
            errors = [r["error"] for r in rows + installs if "error" in r]
            good = [r for r in rows if "error" not in r and r.get("img_s")]
            if not good:
                W(f"| {NAMES[peer]} | **did not run** | | | | | | | {first_line(errors[0]) if errors else '?'} |")
                if args.smoke or peer.startswith("libshard"):
                    failed_checks.append(f"{peer} {workload}: did not run")
                continue
            rates = [r["img_s"] for r in good]
            base_by_round = {r.get("round"): r for r in base if r.get("img_s")}
            pairs = [(base_by_round[r.get("round")], r) for r in good if r.get("round") in base_by_round]
            ratio = span([b["img_s"] / r["img_s"] for b, r in pairs], 2)
            cpu_ratio = span([r["core_ms_per_img"] / b["core_ms_per_img"] for b, r in pairs
                              if r.get("core_ms_per_img") and b.get("core_ms_per_img")], 2)
            g = good[0]
            mean = g.get("mean")
            shape_ok = g.get("dtype") == "uint8" and sorted(g.get("shape", [])[1:]) == sorted([3, 224, 224])
            if mean and base_mean and shape_ok:
                delta = max(abs(a - b) for a, b in zip(mean, base_mean))
                ok = delta <= tol
                check = f"{', '.join(f'{m:.1f}' for m in mean)} ({'ok' if ok else '**FAIL**'}, Δ {delta:.2f})"
            else:
                ok, check = False, f"**FAIL** (shape {g.get('shape')}, {g.get('dtype')})"
            if not ok and (args.smoke or peer.startswith("libshard")):
                failed_checks.append(f"{peer} {workload}: {check}")
            note = f"; {len(errors)} of {len(rows)} runs failed: {first_line(errors[0])}" if errors else ""
            W(f"| {NAMES[peer]} | {span(rates)} | {span([r.get('core_ms_per_img') for r in good], 2)} | "
              f"{ratio}× | {cpu_ratio}× | {g.get('shuffle', '')} | {g.get('layout', '')} | {check} | "
              f"{g.get('settings', '')}{note} |")
        W("")
    cold_rows = [(peer, by[("read", peer, "cold")]) for peer in ORDER if ("read", peer, "cold") in by]
    if cold_rows:
        b0 = next((rs[0] for peer, rs in cold_rows if peer == "libshard"), {})
        base, base_cpu = b0.get("img_s"), b0.get("core_ms_per_img")
        W("**Cold page cache** (eval, one run each after the rounds: `echo 3 > /proc/sys/vm/drop_caches`, then one "
          "timed epoch without a warm-up, so it includes starting the workers)")
        W("")
        W("| reader | img/s | core-ms/img | img/s ratio | CPU ratio |")
        W("|---|---|---|---|---|")
        for peer, rs in cold_rows:
            r = rs[0]
            if "error" in r or not r.get("img_s"):
                W(f"| {NAMES[peer]} | **did not run** | | | {first_line(r.get('error', '?'))} |")
            else:
                W(f"| {NAMES[peer]} | {fmt(r['img_s'])} | {fmt(r.get('core_ms_per_img'), 2)} | "
                  f"{fmt(base / r['img_s'] if base else None, 2)}× | "
                  f"{fmt(r['core_ms_per_img'] / base_cpu if base_cpu and r.get('core_ms_per_img') else None, 2)}× |")
        W("")
    W("**Conversion** (each peer's own writer on the raw photos: shorter side 256, JPEG q90; a peer without an "
      "image resizer gets Pillow's, in a pool of processes, one per core)")
    W("")
    W("| writer | img/s | libshard ÷ row | same bytes as libshard (SHA-256 of a sample) |")
    W("|---|---|---|---|")
    base = conv.get("img_s")
    for peer in ORDER:
        c = [r for k, rs in by.items() if k[0] == "convert" and k[1] == peer for r in rs]
        w = [r for k, rs in by.items() if k[0] == "write" and k[1] == peer for r in rs]
        if not c and not w:
            continue
        c, w = (c or [{}])[0], (w or [{}])[0]
        sb = w.get("same_bytes")
        if peer == "libshard":
            same = "the reference"
        elif "error" in w:
            same = f"**write failed**: {first_line(w['error'])}"
            if args.smoke:
                failed_checks.append(f"{peer} write: {w['error']}")
        elif sb:
            same = (f"{sb.get('checked')} checked, {sb.get('mismatched')} differ" if sb.get("checked")
                    else sb.get("note", ""))
            if sb.get("mismatched"):
                same = f"**{same}**"
                failed_checks.append(f"{peer}: {sb.get('mismatched')} stored images differ from libshard's")
        else:
            same = "–"
        if "error" in c:
            W(f"| {SHORT[peer]}: {first_line(c['error'])} | – | – | {same} |")
        elif c.get("skipped") or not c.get("img_s"):
            why = "no writer (reads libshard's shards)" if peer == "dali" else "not measured (no convert step)"
            W(f"| {SHORT[peer]}: {why} | – | – | {same} |")
        else:
            W(f"| {SHORT[peer]}: {c.get('writer', '')} | {fmt(c['img_s'])} | "
              f"{fmt(base / c['img_s'] if base else None, 2)}× | {same} |")
    W("")
    W("**Versions** (pip freeze of each venv, Python " + platform.python_version() + ")")
    W("")
    W("| reader | versions |")
    W("|---|---|")
    for peer in ORDER:
        if peer == "libshard-loader":
            continue
        installs = by.get(("install", peer, None), []) + by.get(("install", peer, "eval"), [])
        if installs and "error" in installs[0]:
            W(f"| {NAMES[peer]} | **not installed**: {first_line(installs[0]['error'])} |")
        elif any(k[1] == peer for k in by):
            W(f"| {NAMES[peer]} | {versions(args.out, peer, records) or '?'} |")
    W("")
    W(f"Contact sheets (the first batch of each reader and workload): `{os.path.join(args.out, 'sheets')}/`.")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "peers.md"), "w") as f:
        f.write(text)
    print(text)
    if failed_checks:
        print("table.py: checks failed:\n  " + "\n  ".join(failed_checks), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
