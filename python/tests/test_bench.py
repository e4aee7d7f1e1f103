"""python -m libshard.bench (issues 29, 49): on the CPU with the tiny model (no torchvision needed) it runs on a set
with splits without --split, says which device it measures and what each step will take, prints each measurement
as it finishes, measures the ceiling and the feed interleaved and flags a ratio it cannot conclude; every bad
argument is one line on stderr and exit status 2. The timing and the verdicts are pure functions, tested here with a
fake clock and crafted figures (no timed assertion anywhere)."""
import json
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import libshard  # noqa: E402
import libshard.bench as bench  # noqa: E402
from libshard import _bench_timing as timing  # noqa: E402
from tools_fixtures import make_image_folder  # noqa: E402

QUICK = ["--model", "tiny", "--device", "cpu", "--batch-size", "4", "--image-size", "32", "--seconds", "4",
         "--pairs", "3", "--warmup", "1", "--threads", "1,2", "--feed-threads", "2"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """An image folder with splits train and val, converted (as `shard convert samples/images -o ds` makes one)."""
    root = tmp_path_factory.mktemp("bench")
    make_image_folder(str(root / "pets"), splits=("train", "val"), per_class=4, bad=0)
    libshard.convert(str(root / "pets"), str(root / "ds"), size=32, no_sync=True)
    return root


class FakeClock:
    """A clock that only a step moves: each step takes `step` seconds; `calls` records which side ran."""

    def __init__(self, step):
        self.now, self.step_time, self.calls = 0.0, step, []

    def __call__(self):
        return self.now

    def step(self, name="", images=4):
        def run():
            self.now += self.step_time(len(self.calls)) if callable(self.step_time) else self.step_time
            self.calls.append(name)
            return images
        return run


# --- the timing, with a fake clock ---------------------------------------------------------------------------------

@pytest.mark.parametrize("step", [0.001, 0.07, 0.3, 0.5])
def test_a_slot_never_runs_past_its_budget(step):
    clock = FakeClock(step)
    s = timing.timed_steps(clock.step(), 1.0, untimed=3, clock=clock)
    assert s.elapsed <= 1.0 + 1e-9 and s.steps >= 1
    assert s.rate == pytest.approx(4 / step)


def test_a_step_longer_than_the_budget_runs_once():
    clock = FakeClock(2.5)
    s = timing.timed_steps(clock.step(), 1.0, clock=clock)
    assert (s.steps, len(clock.calls), s.elapsed) == (1, 1, 2.5)
    clock = FakeClock(2.5)  # with steps to skip first: one of them, then one timed
    s = timing.timed_steps(clock.step(), 1.0, untimed=3, clock=clock)
    assert (s.steps, len(clock.calls), s.seconds) == (1, 2, 2.5)


def test_untimed_steps_count_toward_the_budget_but_not_the_rate():
    clock = FakeClock(lambda i: 0.2 if i < 2 else 0.1)  # two slow first steps (the batches made ahead)
    s = timing.timed_steps(clock.step(), 1.0, untimed=3, clock=clock)
    assert len(clock.calls) - s.steps == 2  # a third untimed step would end past half the budget
    assert s.elapsed <= 1.0 + 1e-9 and s.rate == pytest.approx(4 / 0.1)


def test_a_measurement_holds_its_warm_up_within_its_seconds():
    clock = FakeClock(0.1)
    m = timing.measure(clock.step(), 2.0, warmup=5, clock=clock)
    assert m.elapsed <= 2.0 + 1e-9
    assert len(clock.calls) == m.steps + 5  # all five warm-up batches fit in a quarter of the time
    clock = FakeClock(0.2)
    m = timing.measure(clock.step(), 2.0, warmup=5, clock=clock)
    assert m.elapsed <= 2.0 + 1e-9 and len(clock.calls) - m.steps == 2  # the warm-up cut at 0.5 s


def test_the_ceiling_and_the_feed_alternate_and_each_stays_within_its_seconds():
    clock = FakeClock(0.01)
    seen = []
    cs, fs, elapsed = timing.paired(clock.step("A", 8), clock.step("B", 4), 3.0, pairs=4, warmup=2, clock=clock,
                                   on_pair=lambda i, c, f: seen.append((i, c, f)))
    assert len(cs) == len(fs) == 4 and [s[0] for s in seen] == [0, 1, 2, 3]
    assert all(e <= 3.0 + 1e-9 for e in elapsed)
    runs = [k for i, k in enumerate(clock.calls) if i == 0 or clock.calls[i - 1] != k]
    assert runs == ["A", "B"] * 5  # the warm-up of each, then A B A B ...
    assert timing.feed_ratio(cs, fs)["median"] == pytest.approx(0.5)


def test_the_batch_is_the_largest_whose_step_fits():
    assert timing.pick_batch(lambda b: 0.01 * b, 4, 1.0) == (4, 0.04, 0.04)
    b, took, wanted = timing.pick_batch(lambda b: 0.01 * b, 256, 0.5)
    assert (b, took) == (32, pytest.approx(0.32)) and wanted == pytest.approx(2.56)
    assert timing.pick_batch(lambda b: 0.01 * b, 256, 0.001)[0] == 0


# --- the verdicts, on crafted figures ------------------------------------------------------------------------------

def test_a_ratio_above_one_plus_its_spread_is_flagged_never_a_result(capsys):
    r = timing.feed_ratio([100, 100, 100, 100, 100], [140, 141, 139, 142, 138])
    assert r["verdict"] == "above" and r["median"] == pytest.approx(1.40) and r["spread"] == pytest.approx(0.02)
    text = bench.ratio_text(r)
    assert "not a result" in text and "rerun" in text and "1.400 of the ceiling" not in text
    args = bench.parse_args(["ds", "--device", "cpu", "--threads", "1,2"])
    out: dict = {}
    bench.verdicts(args, out, torch.device("cpu"), r, 100.0, {1: 150.0, 2: 300.0},
                   {t: {"contended": False, "others": 0.0} for t in (1, 2)}, 2)
    assert out["waiting_share"] is None and "waiting for data: not concluded" in capsys.readouterr().out


def test_a_ratio_within_its_spread_of_one_is_a_result():
    r = timing.feed_ratio([100, 120, 90, 110, 100], [101, 118, 91, 111, 99])
    assert r["verdict"] == "ok" and 1 < r["median"] <= 1 + r["spread"]  # above 1, but within the noise
    assert bench.ratio_text(r) == "1.009 of the ceiling (pairs 0.983-1.011)"
    assert timing.feed_ratio([100] * 3, [80, 81, 79])["verdict"] == "ok"


def test_pairs_too_far_apart_conclude_nothing():
    r = timing.feed_ratio([100, 100, 100, 100, 100], [60, 95, 70, 85, 75])
    assert r["verdict"] == "wide" and "the machine was busy: rerun" in bench.ratio_text(r)


def test_other_processes_taking_the_cores_a_row_needs_make_it_contended(capsys):
    assert timing.contended(2, 2, others=0.9) and timing.contended(1, 2, others=1.2)
    assert not timing.contended(1, 2, others=0.9) and not timing.contended(4, 16, others=1.0)
    assert not timing.contended(2, 2, others=0.1) and timing.contended(2, 2, others=None) is None
    args = bench.parse_args(["ds", "--device", "cpu", "--threads", "1,2"])
    out: dict = {}
    ok = timing.feed_ratio([100] * 3, [90] * 3)
    bench.verdicts(args, out, torch.device("cpu"), ok, 100.0, {1: 7088.0, 2: 6970.0},
                   {1: {"contended": False, "others": 0.9}, 2: {"contended": True, "others": 0.9}}, 2)
    printed = capsys.readouterr().out
    assert out["threads_needed"] is None and "not concluded" in printed and "threads=2" in printed
    assert out["waiting_share"] == pytest.approx(0.1)


def test_the_cpu_meter_reads_this_process_and_the_others():
    meter = timing.CpuMeter()
    sum(i * i for i in range(200000))
    ours, others = meter.stop()
    assert ours > 0 and (others is None or others >= 0)


# --- bad arguments: one line, exit status 2 ------------------------------------------------------------------------

@pytest.mark.parametrize("extra, names", [
    (["--split", "nope"], "--split nope"), (["--batch-size", "0"], "--batch-size"),
    (["--batch-size", "abc"], "--batch-size"), (["--seconds", "0"], "--seconds"), (["--seconds", "nan"], "--seconds"),
    (["--threads", "1,x"], "--threads"), (["--threads", "0"], "--threads"), (["--image-size", "-3"], "--image-size"),
    (["--pairs", "1"], "--pairs"), (["--warmup", "-1"], "--warmup"), (["--device", "tpu"], "--device tpu"),
    (["--device", "nonsense:x"], "--device"), (["--model", "no_such_model"], "--model no_such_model"),
    (["--compare-folder", "/nonexistent/pets"], "--compare-folder"), (["--json", "/nonexistent/r.json"], "--json"),
    (["--augment", "flip"], "--augment"), (["--no-such-option"], "--no-such-option"),
])
def test_a_bad_argument_is_one_line_naming_it(converted, capsys, extra, names):
    with pytest.raises(SystemExit) as e:
        bench.main([str(converted / "ds"), "--device", "cpu", "--model", "tiny"] + extra)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and names in err, err
    assert err.startswith("python -m libshard.bench: error: ")


def test_a_model_too_slow_for_the_seconds_is_one_line_suggesting_tiny(converted, capsys, monkeypatch):
    monkeypatch.setattr(bench, "pick_batch", lambda step_seconds, want, limit: (0, 0.0, 8.4 * want))
    with pytest.raises(SystemExit) as e:
        bench.main([str(converted / "ds")] + QUICK)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert "--model tiny: one step of batch 1 takes about 8.4 s on the cpu" in err and "--seconds 168" in err


def test_a_batch_too_slow_for_the_seconds_is_made_smaller_and_said_so(converted, capsys, monkeypatch):
    monkeypatch.setattr(bench, "pick_batch", lambda step_seconds, want, limit: (2, step_seconds(2), 30.0))
    assert bench.main([str(converted / "ds"), "--json", str(converted / "small.json")] + QUICK) == 0
    out = capsys.readouterr().out
    assert "batch 4 would take about 30.0 s a step, more than --seconds 4 allows: measuring at batch 2 instead " \
           "(--seconds 600 keeps batch 4)" in out, out
    saved = json.loads((converted / "small.json").read_text())
    assert (saved["batch_size_asked"], saved["batch_size"]) == (4, 2)


def test_a_missing_dataset_is_one_line_and_no_traceback(tmp_path):
    r = subprocess.run([sys.executable, "-m", "libshard.bench", str(tmp_path / "nothing"), "--model", "tiny",
                        "--device", "cpu"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "dataset %s" % (tmp_path / "nothing") in r.stderr and r.stdout == ""


def test_the_bench_refuses_cuda_without_it(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    r = subprocess.run([sys.executable, "-m", "libshard.bench", str(tmp_path), "--device", "cuda"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--device cuda: CUDA is not available here" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


# --- the CPU run, tiny model ---------------------------------------------------------------------------------------

def run_bench(args):
    """Runs the bench; returns (stdout, whether the first pair's line came while the bench was still running)."""
    p = subprocess.Popen([sys.executable, "-m", "libshard.bench"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines, early = [], None
    try:
        for line in p.stdout:
            lines.append(line)
            if early is None and line.startswith("  pair 1 of"):
                early = p.poll() is None  # printed as it finished, not when the process ended
        err = p.stderr.read()
        assert p.wait(timeout=300) == 0, "".join(lines) + err
    finally:
        p.kill()
        p.wait()
    return "".join(lines), early


def test_a_set_with_splits_runs_without_split_and_prints_as_it_goes(converted):
    out, early = run_bench([str(converted / "ds")] + QUICK + ["--json", str(converted / "r.json")])
    saved = json.loads((converted / "r.json").read_text())
    assert re.search(r"^libshard.bench: .*ds \(24 images, all splits\), tiny on cpu \(CPU, \d+ cores\)", out, re.M)
    assert saved["split"] == "*"
    assert "no GPU measured: this measures the CPU" in out
    assert re.search(r"^one training step of tiny at batch \d+: about [0-9.]+ m?s here$", out, re.M), out
    assert re.search(r"^plan: .*interleaved in 3 pairs \(4 s each side\).*the loader alone with threads=1,2 ", out,
                     re.M)
    assert early, out
    pairs = re.findall(r"^  pair (\d) of 3: ceiling\s+([0-9.]+), libshard feed\s+([0-9.]+)\s+([0-9.]+)$", out, re.M)
    assert [p[0] for p in pairs] == ["1", "2", "3"], out
    assert [p["ceiling"] for p in saved["pairs"]] == [pytest.approx(float(p[1]), abs=0.06) for p in pairs]
    assert out.index("pair 3 of 3") < out.index("loader alone (uint8")
    ratio = saved["feed_ratio"]
    if ratio["verdict"] == "ok":  # a figure only when the pairs allow it, never above 1 + their spread
        assert ratio["median"] <= 1 + ratio["spread"]
        assert re.search(r"libshard feed \(device=, 2 threads\)\s+[0-9.]+\s+%.3f of the ceiling \(pairs "
                         % ratio["median"], out), out
        assert 0 <= saved["waiting_share"] <= 1
    else:
        assert "rerun" in out and saved["waiting_share"] is None
    for t in (1, 2):
        assert re.search(r"threads=%d\s+[0-9]+\.[0-9]\s+[0-9]+ per thread   CPU: this process [0-9.]+ cores, "
                         r"others ([0-9.]+|unknown)" % t, out), out
    assert set(saved["loader_by_threads"]) == set(saved["loader_cpu"]) == {"1", "2"}
    assert re.search(r"the (feed needs (about )?[0-9]+ threads?(\(s\))? to keep tiny busy here|threads the feed "
                     r"needs: not concluded)", out), out
    assert set(saved["elapsed"]) == {"train_synthetic", "train_libshard", "loader_threads_1", "loader_threads_2"}


def test_an_explicit_split_is_read(converted):
    out, _ = run_bench([str(converted / "ds"), "--split", "val"] + QUICK[:-4])
    assert re.search(r"ds \(12 images, split val\), tiny on cpu", out), out


def test_the_bench_compares_with_torchvision(converted):
    pytest.importorskip("torchvision")
    out, _ = run_bench([str(converted / "ds"), "--split", "train", "--compare-folder", str(converted / "pets" / "train"),
                        "--workers", "0"] + QUICK)
    tv = re.search(r"torchvision ImageFolder \(0 workers\)\s+[0-9]+\.[0-9]\s+(.*)$", out, re.M)
    assert tv and re.match(r"[0-9.]+ of the ceiling \(one run, against the pairs' median\)|above the ceiling: not a "
                           r"result", tv.group(1)), out
