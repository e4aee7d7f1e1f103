"""The shared-memory batch-slot segments of one process, owned in one place (docs/reader.md, "Batches without
copies"): what the trainer maps (:class:`TrainerSide`, ``TRAINER``: each segment mapped once, page-locked at most
once through :mod:`libshard._cuda_host`, and the device feeds by dataset) and what a DataLoader worker decodes
into (:class:`WorkerSide`, ``WORKER``); the segment files' names and their removal.
"""
import glob
import os
import tempfile
import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

from . import _cuda_host, _device
from ._libshard import _SlotSet

SEGMENT_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
SEGMENT_PREFIX = "libshard-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_segments(owner_pid: int, uid: str) -> None:
    """Unlinks the slot segments of dataset `uid` and forgets the process's hold on them (run in the process
    that made the dataset; the mappings go when the last batch over them does)."""
    if os.getpid() != owner_pid:
        return
    for path in glob.glob(os.path.join(SEGMENT_DIR, "%s%d-%s-*.slots" % (SEGMENT_PREFIX, owner_pid, uid))):
        try:
            os.unlink(path)
        except OSError:
            pass
    TRAINER.forget(uid)


def remove_stale_segments() -> None:
    """Unlinks segments left by trainer processes that no longer exist (killed before their cleanup ran)."""
    for path in glob.glob(os.path.join(SEGMENT_DIR, SEGMENT_PREFIX + "*.slots")):
        parts = os.path.basename(path)[len(SEGMENT_PREFIX):].split("-")
        try:
            pid = int(parts[0])
        except (ValueError, IndexError):
            continue
        if not _pid_alive(pid):
            try:
                os.unlink(path)
            except OSError:
                pass


class MappedSegment:
    """The trainer's mapping of one worker's slot segment and, when pinned, its CUDA registration (which holds
    the mapping until it is unregistered; every batch over the segment holds the registration)."""
    __slots__ = ("slots", "registration", "pin_tried")

    def __init__(self, slots: _SlotSet) -> None:
        self.slots = slots
        self.registration: Optional[_cuda_host.Registration] = None
        self.pin_tried = False


class Held:
    """A numpy array's base that keeps ``array`` (over a slot lease) and ``registration`` alive together."""
    __slots__ = ("array", "registration")

    def __init__(self, array: np.ndarray, registration: Any) -> None:
        self.array, self.registration = array, registration

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        return self.array.__array_interface__


class TrainerSide:
    """What the trainer process holds for batches that arrive from DataLoader workers: the segments it maps
    (by path, each mapped once and pinned at most once), the datasets whose batches came from workers (so that
    ``state_dict()`` knows it cannot count them itself), and the device feeds by dataset. One instance,
    ``TRAINER``; thread-safe (batches are unpickled in torch's pin-memory thread when that is on)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._segments: Dict[str, MappedSegment] = {}
        self._from_workers: Dict[str, bool] = {}
        self._feeds: Dict[Tuple[str, Tuple], Any] = {}

    def segment(self, path: str, pin: bool) -> MappedSegment:
        with self._lock:
            mapped = self._segments.get(path)
            if mapped is None:
                mapped = MappedSegment(_SlotSet.open(path))
                self._segments[path] = mapped
            if pin and not mapped.pin_tried and torch.cuda.is_available():
                address, size = mapped.slots.mapping
                mapped.registration = _cuda_host.REGISTRY.register(address, size, mapped.slots, path)
                mapped.pin_tried = True  # once: a refusal is not retried for every batch
            return mapped

    def mappings(self) -> List[Tuple[int, int]]:
        """``(address, bytes)`` of every segment mapped here."""
        with self._lock:
            return [m.slots.mapping for m in self._segments.values()]

    def forget(self, uid: str) -> None:
        with self._lock:
            for path in [p for p in self._segments if ("-%s-" % uid) in os.path.basename(p)]:
                del self._segments[path]
            for key in [k for k in self._feeds if k[0] == uid]:
                del self._feeds[key]
            self._from_workers.pop(uid, None)

    def mark_from_workers(self, uid: str) -> None:
        self._from_workers[uid] = True

    def from_workers(self, uid: str) -> bool:
        return self._from_workers.get(uid, False)

    def reset_from_workers(self, uid: str) -> None:
        self._from_workers.pop(uid, None)

    def feed(self, uid: str, spec: Tuple) -> Any:
        """The device feed of dataset ``uid`` in this process (made on its first batch here)."""
        with self._lock:
            feed = self._feeds.get((uid, spec))
            if feed is None:
                feed = _device.DeviceFeed(*spec)
                self._feeds[(uid, spec)] = feed
            return feed


class WorkerSide:
    """What a DataLoader worker process holds: the segments it decodes into, by path (kept for the life of
    the process, so that a dataset iterated again reuses its segment). One instance, ``WORKER``."""

    def __init__(self) -> None:
        self.segments: Dict[str, Any] = {}


TRAINER = TrainerSide()
WORKER = WorkerSide()
