"""Pinned batches that cannot break CUDA (issue 29), without a GPU: a fake CUDA runtime stands in for
``torch.cuda.cudart()``, keeping the driver's books -- it refuses a second registration of a range (error 712,
cudaErrorHostMemoryAlreadyRegistered), leaves a failed call's error pending until ``cudaGetLastError`` reads it,
and notes a registered range that is no longer mapped -- and each scenario runs through real DataLoader workers.
python/tests/test_gpu_pinned.py runs the same scenarios against a real GPU."""
import gc
import mmap
import os
import pickle
import signal
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import libshard.torch  # noqa: E402
from libshard import _cuda_host  # noqa: E402
from shard_fixtures import write_two_shards  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402


def mapped_ranges():
    ranges = []
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = line.split()[0].split("-")
            ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


def is_mapped(address, size):
    end, at = address + size, address
    for lo, hi in sorted(mapped_ranges()):
        if lo <= at < hi:
            at = hi
            if at >= end:
                return True
    return False


class FakeCudart:
    """The driver's view of page-locked host memory, as torch.cuda.cudart() exposes it (plus cudaGetLastError,
    which the real libcudart has)."""

    def __init__(self, refuse_all=False):
        self.live = {}             # address -> size
        self.pending = 0           # the runtime's last error, until read
        self.refused = []          # second registrations of a range
        self.stale = []            # registered ranges found unmapped (munmap before cudaHostUnregister)
        self.registered = 0
        self.refuse_all = refuse_all

    def _audit(self):
        for a, n in self.live.items():
            if not is_mapped(a, n) and (a, n) not in self.stale:
                self.stale.append((a, n))

    def cudaHostRegister(self, address, size, flags):
        self._audit()
        if self.refuse_all:
            self.pending = 2       # cudaErrorMemoryAllocation
            return 2
        if any(address < a + n and a < address + size for a, n in self.live.items()):
            self.refused.append((address, size))
            self.pending = 712
            return 712
        if not is_mapped(address, size):
            self.pending = 1
            return 1
        self.live[address] = size
        self.registered += 1
        return 0

    def cudaHostUnregister(self, address):
        self._audit()
        if address not in self.live:
            self.pending = 713
            return 713
        del self.live[address]
        return 0

    def cudaGetLastError(self):
        e, self.pending = self.pending, 0
        return e

    def cudaGetErrorString(self, rc):
        return {712: "part or all of the requested memory range is already mapped"}.get(rc, "error %d" % rc)

    def check_clean(self):
        """Nothing pending, nothing registered twice, nothing unmapped while registered."""
        self._audit()
        assert self.pending == 0, "an error left pending for torch's next call: %d" % self.pending
        assert self.refused == [], "a range registered twice"
        assert self.stale == [], "memory unmapped while still registered"


@pytest.fixture
def fake(monkeypatch):
    rt = FakeCudart()
    monkeypatch.setattr(torch.cuda, "cudart", lambda: rt)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(_cuda_host, "REGISTRY", _cuda_host.HostRegistry())  # a fresh process's books
    yield rt


@pytest.fixture
def shards(tmp_path):
    return write_two_shards(tmp_path)


def make(shards, **kw):
    return libshard.torch.ShardDataset(shards, 3, image_size=(12, 16), shuffle=True, seed=7, rank=0, world_size=1,
                                       pin_memory=True, **kw)


def reference(shards):
    ds = libshard.torch.ShardDataset(shards, 3, image_size=(12, 16), shuffle=True, seed=7, rank=0, world_size=1)
    return [tuple(t.clone() for t in b) for b in DataLoader(ds, batch_size=None)]


def equal(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b))


def test_non_persistent_workers_over_epochs_then_del_and_again(fake, shards):
    ref = reference(shards)
    for _ in range(2):  # the second dataset maps segments where the first one's were
        ds = make(shards)
        dl = DataLoader(ds, batch_size=None, num_workers=2)
        for epoch in range(3):
            got = [tuple(t.clone() for t in b) for b in dl]
            assert len(got) == len(ref) and all(equal(a, b) for a, b in zip(got, ref))
            assert len(fake.live) == 2, "one registration per worker segment, made once"
            fake.check_clean()
        del ds, dl
        gc.collect()
        assert fake.live == {}, "registrations of a dataset that is gone are released"
        fake.check_clean()
    assert fake.registered == 4


def test_persistent_workers_and_a_validation_loader(fake, shards):
    train = make(shards)
    dl = DataLoader(train, batch_size=None, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        train.set_epoch(epoch)
        assert len(list(dl)) == 9
        val = make(shards)  # a second DataLoader in the same process, made and dropped every epoch
        assert len(list(DataLoader(val, batch_size=None, num_workers=2))) == 9
        assert len(fake.live) == 4
        del val
        gc.collect()
        assert len(fake.live) == 2
        fake.check_clean()
    del train, dl
    gc.collect()
    assert fake.live == {}
    fake.check_clean()


def test_a_batch_held_past_its_dataset_keeps_its_range_registered_and_mapped(fake, shards):
    ds = make(shards)
    kept = next(iter(DataLoader(ds, batch_size=None, num_workers=1)))
    want = kept.images.clone()
    del ds
    gc.collect()
    assert len(fake.live) == 1
    fake.check_clean()
    assert torch.equal(kept.images, want)
    del kept
    gc.collect()
    assert fake.live == {}
    fake.check_clean()


def test_a_killed_worker_leaves_the_books_right(fake, shards):
    ds = make(shards)
    dl = DataLoader(ds, batch_size=None, num_workers=2)
    it = iter(dl)
    next(it)
    os.kill(it._workers[0].pid, signal.SIGKILL)
    with pytest.raises(RuntimeError):
        while True:
            next(it)  # nothing kept (a batch bound to a name would keep its range registered, rightly)
    del it
    gc.collect()
    assert len(list(dl)) == 9  # new workers reuse the segments the trainer already maps and pinned
    assert len(fake.live) == 2 and fake.registered == 2
    del ds, dl
    gc.collect()
    assert fake.live == {}
    fake.check_clean()


def test_a_refused_registration_warns_once_and_gives_ordinary_memory(monkeypatch, fake, shards):
    fake.refuse_all = True
    ref = reference(shards)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            ds = make(shards)
            got = [tuple(t.clone() for t in b) for b in DataLoader(ds, batch_size=None, num_workers=2)]
            assert all(equal(a, b) for a, b in zip(got, ref))
            assert fake.pending == 0, "the failed call's error was read where it happened"
            del ds
            gc.collect()
    ours = [w for w in caught if "cudaHostRegister failed" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "CUDA error 2" in str(ours[0].message) and "ordinary (pageable) memory" in str(ours[0].message)


def test_a_range_is_never_registered_twice(fake):
    m = mmap.mmap(-1, 1 << 16)
    address = np.frombuffer(m, np.uint8).ctypes.data
    first = _cuda_host.REGISTRY.register(address, 1 << 16, m, "test range")
    assert first is not None and fake.live == {address: 1 << 16}
    with pytest.warns(RuntimeWarning, match="overlaps one this process already registered"):
        assert _cuda_host.REGISTRY.register(address + 4096, 4096, m, "inner range") is None
    fake.check_clean()  # the driver never saw the second request
    del first
    gc.collect()
    assert fake.live == {} and _cuda_host.REGISTRY.live() == {}
    fake.check_clean()


def test_a_forked_child_inherits_no_registrations(fake):
    m = mmap.mmap(-1, 1 << 16)
    address = np.frombuffer(m, np.uint8).ctypes.data
    reg = _cuda_host.REGISTRY.register(address, 1 << 16, m, "test range")
    assert reg is not None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: as a DataLoader worker started by fork
        try:
            before = dict(fake.live)
            seen = _cuda_host.REGISTRY.live()
            del reg
            gc.collect()
            os.write(w, pickle.dumps((seen, before == fake.live)))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        seen, untouched = pickle.loads(f.read())
    os.waitpid(pid, 0)
    assert seen == {}, "the child's books start empty"
    assert untouched, "an inherited registration dying in the child makes no CUDA call"
    assert fake.live == {address: 1 << 16}
    del reg
    gc.collect()
    assert fake.live == {}
    fake.check_clean()


def test_a_registration_released_inside_register_neither_deadlocks_nor_loses_count(fake):
    # A collection can run a Registration's finalizer on the thread that is inside register(): here the fake
    # driver drops the last reference to an earlier registration while the second one is being made.
    import threading
    maps = [mmap.mmap(-1, 1 << 16) for _ in range(2)]
    addresses = [np.frombuffer(m, np.uint8).ctypes.data for m in maps]
    held = [_cuda_host.REGISTRY.register(addresses[0], 1 << 16, maps[0], "first")]
    register = fake.cudaHostRegister

    def register_and_collect(address, size, flags):
        held.clear()  # the first registration's finalizer runs here, inside the registry's lock
        return register(address, size, flags)
    fake.cudaHostRegister = register_and_collect
    result = []
    t = threading.Thread(target=lambda: result.append(_cuda_host.REGISTRY.register(addresses[1], 1 << 16, maps[1],
                                                                                   "second")))
    t.start()
    t.join(20)
    assert not t.is_alive(), "register() deadlocked on its own finalizer"
    assert result[0] is not None and fake.live == {addresses[1]: 1 << 16}
    assert _cuda_host.REGISTRY.live() == {addresses[1]: 1 << 16}
    del result[:]
    gc.collect()
    assert fake.live == {}
    fake.check_clean()
