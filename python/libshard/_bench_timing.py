"""The bench's measurements (``python -m libshard.bench``, bench.py): paired timing of a ceiling and a feed under a
time budget, and the verdicts drawn from the figures -- pure functions of a step and a clock, and of the figures, so
that tests drive them with a fake clock and made-up rates."""
import os
import statistics
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

UNTIMED = 3      # steps each slot of a pair runs untimed: the batches the loader made ahead (prefetch 2) and one more
WIDE = 0.05      # the pairs' spread (half their range of ratios) above which the feed's figure is not concluded


# --- timing: pure functions of a step and a clock ------------------------------------------------------------------

class Slot(NamedTuple):
    images: int      # images of the timed steps
    seconds: float   # their time
    steps: int       # timed steps
    elapsed: float   # the slot's whole time, untimed steps included

    @property
    def rate(self) -> float:
        return self.images / max(self.seconds, 1e-9)


def timed_steps(step: Callable[[], int], budget: float, untimed: int = 0, at_most: Optional[int] = None,
                sync: Callable[[], None] = lambda: None, clock: Callable[[], float] = time.perf_counter) -> Slot:
    """Runs ``step()`` (it returns the images it took) for at most ``budget`` seconds in all: first up to
    ``untimed`` steps, ending (by their mean) within half the budget, then timed steps, never starting one that the
    timed steps' mean says would end past the budget; at least one of each kind asked for, at most ``at_most`` steps
    in all. So the budget holds whenever a step takes at most half of it."""
    sync()
    start = clock()
    steps = 0
    while steps < untimed and (at_most is None or steps < at_most):
        now = clock() - start
        if steps and now + now / steps > budget / 2:
            break
        step()
        steps += 1
    sync()
    t0 = clock()
    images = timed = 0
    while at_most is None or steps < at_most:
        now = clock()
        if timed and now - start + (now - t0) / timed > budget:
            break
        images += step()
        steps += 1
        timed += 1
    sync()
    end = clock()
    return Slot(images, end - t0, timed, end - start)


def measure(step: Callable[[], int], seconds: float, warmup: int, sync: Callable[[], None] = lambda: None,
            clock: Callable[[], float] = time.perf_counter) -> Slot:
    """One measurement of at most ``seconds``: up to ``warmup`` batches within a quarter of them, then timed steps
    for the rest; the Slot's ``elapsed`` includes the warm-up."""
    warm = timed_steps(step, seconds / 4, at_most=warmup, sync=sync, clock=clock).elapsed if warmup else 0.0
    s = timed_steps(step, seconds - warm, sync=sync, clock=clock)
    return s._replace(elapsed=s.elapsed + warm)


def paired(ceiling: Callable[[], int], feed: Callable[[], int], seconds: float, pairs: int, warmup: int,
           sync: Callable[[], None] = lambda: None, clock: Callable[[], float] = time.perf_counter,
           on_pair: Callable[[int, float, float], None] = lambda i, c, f: None) -> Tuple[List[float], List[float],
                                                                                        List[float]]:
    """The ceiling and the feed interleaved: each side's ``seconds`` cut into ``pairs`` + 1 slots, a warm-up slot (at
    most ``warmup`` batches) each, then ``pairs`` pairs of slots, ceiling then feed, each slot timed after its first
    ``UNTIMED`` steps. Returns the ceiling's rates, the feed's rates (one a pair) and each side's whole time."""
    slot = seconds / (pairs + 1)
    sides = (ceiling, feed)
    elapsed = [0.0, 0.0]
    if warmup:
        for i, side in enumerate(sides):
            elapsed[i] += timed_steps(side, slot, at_most=warmup, sync=sync, clock=clock).elapsed
    rates: Tuple[List[float], List[float]] = ([], [])
    for p in range(pairs):
        for i, side in enumerate(sides):
            s = timed_steps(side, slot, untimed=UNTIMED, sync=sync, clock=clock)
            rates[i].append(s.rate)
            elapsed[i] += s.elapsed
        on_pair(p, rates[0][-1], rates[1][-1])
    return rates[0], rates[1], elapsed


def pick_batch(step_seconds: Callable[[int], float], want: int, limit: float) -> Tuple[int, float, float]:
    """The largest of ``want``, or the powers of two below it, whose step takes at most ``limit`` seconds, timing
    batch 1, 2, 4, ... up to the first too slow: ``(batch, its step's seconds, want's step estimated)``; batch 0
    when even 1 is too slow. A CPU's step time grows with the batch; the estimate is linear from the last timed."""
    b, best = 1, (0, 0.0)
    while True:
        b = min(b, want)
        t = step_seconds(b)
        if t > limit or b == want:
            return (b, t, t) if t <= limit else (best[0], best[1], t * want / b)
        best = (b, t)
        b *= 2


# --- verdicts: pure functions of the figures ----------------------------------------------------------------------

def feed_ratio(ceiling: Sequence[float], feed: Sequence[float], wide: float = WIDE) -> Dict[str, Any]:
    """The paired comparison: each pair's feed / ceiling, their median, the spread (half the pairs' range) and the
    verdict: "above" when the median exceeds 1 by more than the spread (a model fed from disk cannot beat the same
    model fed a batch already in memory: the machine's load moved the figures), "wide" when the spread exceeds
    ``wide`` (no conclusion either way), else "ok"."""
    ratios = [f / c for c, f in zip(ceiling, feed)]
    median, spread = statistics.median(ratios), (max(ratios) - min(ratios)) / 2
    verdict = "above" if median > 1 + spread else "wide" if spread > wide else "ok"
    return {"median": median, "spread": spread, "low": min(ratios), "high": max(ratios), "pairs": ratios,
            "verdict": verdict}


def contended(threads: int, cpus: int, others: Optional[float]) -> Optional[bool]:
    """Whether other processes, using ``others`` cores on average during a loader-alone row, took cores that the
    row's ``threads`` needed on a machine of ``cpus``: more than the row left free and more than a quarter of one.
    None when the machine's use is unknown."""
    if others is None:
        return None
    return others > max(0.25, cpus - threads)


class CpuMeter:
    """CPU time over a measurement, in cores (seconds per second): this process's (all its threads) and the other
    processes' on the CPUs this process may use (their busy time from /proc/stat, less ours; None without it)."""

    def __init__(self) -> None:
        self.cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        self.wall, self.ours, self.busy = time.perf_counter(), time.process_time(), self._busy()

    def _busy(self) -> Optional[float]:
        if self.cpus is None:
            return None
        try:
            with open("/proc/stat") as f:
                lines = f.readlines()
        except OSError:
            return None
        ticks, wanted = 0, set(self.cpus)
        for line in lines:
            name, *v = line.split()
            if name[:3] == "cpu" and name[3:].isdigit() and int(name[3:]) in wanted:
                ticks += sum(int(v[i]) for i in (0, 1, 2, 5, 6, 7))  # user nice system irq softirq steal
        return ticks / os.sysconf("SC_CLK_TCK")

    def stop(self) -> Tuple[float, Optional[float]]:
        wall = max(time.perf_counter() - self.wall, 1e-9)
        ours = (time.process_time() - self.ours) / wall
        busy = self._busy()
        if busy is None or self.busy is None:
            return ours, None
        return ours, max(0.0, (busy - self.busy) / wall - ours)
