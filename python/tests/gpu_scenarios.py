#!/usr/bin/env python3
"""GPU scenarios of issue 29, one per process (a broken CUDA context poisons the process that has it).

Usage: gpu_scenarios.py SHARDS_GLOB SCENARIO. Each step checks that the process can still use CUDA (a kernel, a
synchronize, a torch-pinned allocation) and prints "SCENARIO STEP: ok"; the last line is "SCENARIO: PASS".
Any failure prints "SCENARIO STEP: BROKEN: ..." and exits 1. Run by python/tests/test_gpu_*.py and
tools/gpu_check.sh; needs CUDA.
"""
import gc
import mmap
import os
import signal
import sys
import warnings

import numpy as np
import torch
from torch.utils.data import DataLoader

import libshard.torch as lt
from libshard import _cuda_host

SHARDS, SCENARIO = sys.argv[1], sys.argv[2]
OPTS = dict(image_size=(12, 16), shuffle=True, seed=7, rank=0, world_size=1)
NORM = dict(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))


def health(step):
    try:
        torch.zeros(4, device="cuda").add_(1)
        torch.cuda.synchronize()
        torch.empty(1 << 20, dtype=torch.uint8, pin_memory=True)
    except Exception as e:
        print("%s %s: BROKEN: %s" % (SCENARIO, step, str(e).splitlines()[0]), flush=True)
        sys.exit(1)
    print("%s %s: ok" % (SCENARIO, step), flush=True)


def check(cond, step, what):
    if not cond:
        print("%s %s: BROKEN: %s" % (SCENARIO, step, what), flush=True)
        sys.exit(1)


def pinned_batches(workers, n=3, persistent=False, **kw):
    ds = lt.ShardDataset(SHARDS, 3, pin_memory=True, layout="NCHW", **OPTS, **kw)
    dl = DataLoader(ds, batch_size=None, num_workers=workers, persistent_workers=persistent)
    it = iter(dl)
    for i in range(n):
        x, y = next(it)[:2]
        check(x.is_pinned(), "w%d batch %d" % (workers, i), "not pinned")
        x.cuda(non_blocking=True)
        torch.cuda.synchronize()
        health("w%d batch %d" % (workers, i))
    return ds, dl, it


def reference(**kw):
    ds = lt.ShardDataset(SHARDS, 3, **OPTS, **kw)
    return [tuple(t.clone() for t in b[:2]) for b in DataLoader(ds, batch_size=None)]


def scenario_w0_w4():
    for w in (0, 4):
        r = pinned_batches(w)
        del r
        gc.collect()
        health("w%d after del" % w)
        r = pinned_batches(w)
        health("w%d second dataset" % w)
        del r
        gc.collect()
        health("w%d after second del" % w)
    check(_cuda_host.REGISTRY.live() == {}, "end", "registrations left: %s" % _cuda_host.REGISTRY.live())


def scenario_persistent_and_validation():
    ds, dl, it = pinned_batches(4, persistent=True)
    del it
    for e in range(3):
        ds.set_epoch(e)
        n = sum(1 for b in dl if b[0].cuda(non_blocking=True) is not None)
        torch.cuda.synchronize()
        health("epoch %d (%d batches)" % (e, n))
        val = pinned_batches(2, n=2)
        del val
        gc.collect()
        health("validation loader of epoch %d dropped" % e)
    r2 = pinned_batches(4, persistent=True)
    health("second persistent DataLoader")
    del ds, dl, r2
    gc.collect()
    check(_cuda_host.REGISTRY.live() == {}, "end", "registrations left")
    health("all dropped")


def scenario_killed_worker():
    ds, dl, it = pinned_batches(2)
    os.kill(it._workers[0].pid, signal.SIGKILL)
    try:
        while True:
            next(it)
    except (RuntimeError, StopIteration) as e:
        print("killed worker: %r" % (str(e).splitlines() or [""])[0])
    del it
    gc.collect()
    health("after the killed worker")
    n = sum(1 for b in dl if b[0].cuda(non_blocking=True) is not None)
    health("a new iterator (%d batches)" % n)


def scenario_registered_behind_our_back():
    rt = torch.cuda.cudart()
    m = mmap.mmap(-1, 1 << 22)
    address = np.frombuffer(m, np.uint8).ctypes.data
    check(int(rt.cudaHostRegister(address, 1 << 22, 0)) == 0, "setup", "cudaHostRegister failed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = _cuda_host.REGISTRY.register(address, 1 << 22, m, "a range someone else registered")
    check(reg is None and len(caught) == 1, "refused", "expected None and one warning, got %r %r" % (reg, caught))
    print(str(caught[0].message))
    health("after the driver refused (error read and cleared)")
    check(int(rt.cudaHostUnregister(address)) == 0, "teardown", "cudaHostUnregister failed")
    health("end")


def scenario_device(workers):
    for dtype, fmt in (("float32", torch.channels_last), ("bfloat16", torch.channels_last), ("uint8", None),
                       ("float16", None)):
        norm = NORM if dtype != "uint8" else {}
        cpu = reference(layout="NCHW", dtype="float32" if dtype == "bfloat16" else dtype, **norm)
        ds = lt.ShardDataset(SHARDS, 3, device="cuda", dtype=dtype, layout="NCHW", memory_format=fmt, **OPTS,
                             **norm)
        side = torch.cuda.Stream()
        kept = []
        for epoch in range(2):
            ds.set_epoch(0)
            with torch.cuda.stream(side):  # a consumer on a stream of its own waits on the copies too
                for x, y in DataLoader(ds, batch_size=None, num_workers=workers):
                    check(x.is_cuda and y.is_cuda and x.dtype == getattr(torch, dtype), dtype, "not on the GPU")
                    if fmt is torch.channels_last:
                        check(x.is_contiguous(memory_format=torch.channels_last), dtype, "not channels_last")
                    kept.append((x.float() * 1, y * 1))  # work on the consumer's stream, batches kept
        torch.cuda.synchronize()
        check(len(kept) == 2 * len(cpu), dtype, "%d batches" % len(kept))
        for i, (x, y) in enumerate(kept):
            px, py = cpu[i % len(cpu)]
            check(torch.equal(y.cpu(), py), dtype, "labels of batch %d" % i)
            tol = {"float32": 0, "uint8": 0, "float16": 2 ** -10, "bfloat16": 2 ** -8}[dtype]
            ok = torch.equal(x.cpu(), px.float()) if tol == 0 else torch.allclose(x.cpu(), px.float(), rtol=tol,
                                                                                   atol=1e-6)
            check(ok, dtype, "pixels of batch %d differ from the CPU path's" % i)
        health("device=cuda %s num_workers=%d" % (dtype, workers))
        del ds
        gc.collect()


SCENARIOS = {"w0-w4": scenario_w0_w4, "persistent-validation": scenario_persistent_and_validation,
             "killed-worker": scenario_killed_worker, "registered-elsewhere": scenario_registered_behind_our_back,
             "device-w0": lambda: scenario_device(0), "device-w2": lambda: scenario_device(2)}

if __name__ == "__main__":
    health("start")
    SCENARIOS[SCENARIO]()
    print("%s: PASS" % SCENARIO, flush=True)
