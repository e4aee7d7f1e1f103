"""Page-locking of libshard's shared-memory batch slots for CUDA (``cudaHostRegister``), owned in one place.

:class:`HostRegistry` is the one owner of this process's registrations (``REGISTRY``; ``libshard.torch`` asks it
for every segment the trainer maps with ``pin_memory=True`` or ``device="cuda"``). Its rules, each one a way the
CUDA context of a training process was broken before (issue 29):

* every ``cudaHostRegister`` / ``cudaHostUnregister`` result is checked, and a failure's error is read and
  cleared at once on the calling thread (``cudaGetLastError``), never left pending for torch's next call;
* a failed registration gives one warning per process and ordinary memory (batches still right, only not
  page-locked), never an exception in the training loop;
* a range is registered at most once: a request overlapping a live registration is refused before the driver
  sees it (the driver answers 712, ``cudaErrorHostMemoryAlreadyRegistered``);
* a :class:`Registration` keeps the memory it covers alive (it holds the ``_SlotSet`` that maps it), and its
  finalizer unregisters the range when the last tensor over it is gone -- always before the mapping is unmapped
  (the ``_SlotSet`` is released only after the finalizer ran), so the address can never be mapped again while
  the driver still holds it;
* registrations belong to the process that made them: a forked child (a DataLoader worker) starts with none,
  and an inherited :class:`Registration` that dies in the child makes no CUDA call.

Thread-safety: all methods may be called from any thread (torch's pin-memory thread unpickles batches).
"""
import ctypes
import os
import threading
import warnings
import weakref
from typing import Any, Callable, Dict, Optional

ERROR_ALREADY_REGISTERED = 712  # cudaErrorHostMemoryAlreadyRegistered
ERROR_NOT_REGISTERED = 713      # cudaErrorHostMemoryNotRegistered


def _loaded_cudart_get_last_error() -> Optional[Callable[[], int]]:
    """``cudaGetLastError`` of the CUDA runtime library already loaded in this process (the one torch calls;
    its error state is that library's), or None. torch's ``cudart()`` binds no ``cudaGetLastError``."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}
    except OSError:
        return None
    for path in sorted(p for p in paths if os.path.basename(p).startswith("libcudart") and ".so" in p):
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LAZY", 1))
            fn = lib.cudaGetLastError
        except (OSError, AttributeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_int, []
        return fn
    return None


class Registration:
    """One live ``cudaHostRegister`` of ``[address, address + size)``; unregistered when this object dies.
    Keep it referenced from everything that uses the memory (libshard.torch makes it the base of the batch
    tensors' arrays)."""
    __slots__ = ("address", "size", "__weakref__")

    def __init__(self, address: int, size: int) -> None:
        self.address, self.size = address, size


class HostRegistry:
    """The registrations of this process (see the module docstring)."""

    def __init__(self, runtime: Optional[Callable[[], Any]] = None) -> None:
        self._runtime = runtime  # None: torch.cuda.cudart (looked up at each use, so tests can replace it)
        self._reset()
        _ALL.add(self)

    def _reset(self) -> None:
        # Reentrant: a Registration's finalizer may run on this thread inside register() (a collection).
        # New in a fork child: another thread may have held the parent's.
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._live: Dict[int, int] = {}  # address -> size, registered by this process and not yet released
        self._warned = False
        self._get_last_error: Optional[Callable[[], int]] = None

    def _cudart(self) -> Any:
        if self._runtime is not None:
            return self._runtime()
        import torch
        return torch.cuda.cudart()

    def live(self) -> Dict[int, int]:
        """The ranges this process has registered and not released: ``{address: size}``."""
        with self._lock:
            return dict(self._live)

    def register(self, address: int, size: int, keep: Any, what: str) -> Optional[Registration]:
        """Page-locks ``[address, address + size)`` (``keep``: the object whose life is the memory's, held until
        the range is unregistered). Returns the :class:`Registration`, or None after one warning per process
        (the memory is then used as it is). ``what`` names the memory in the warning."""
        with self._lock:
            for a, n in list(self._live.items()):
                if address < a + n and a < address + size:
                    self._warn_locked("%s: its range overlaps one this process already registered "
                                      "(0x%x, %d bytes)" % (what, a, n))
                    return None
            try:
                rt = self._cudart()
            except Exception as e:  # no usable CUDA runtime (a forked child, a broken install)
                self._warn_locked("%s: no CUDA runtime to page-lock it (%s)" % (what, e))
                return None
            # Not caught: an exception here is not the driver's answer (torch raises a killed DataLoader worker's
            # error from a signal handler, wherever the main thread is).
            rc = int(rt.cudaHostRegister(address, size, 0))
            if rc != 0:
                self._clear_error_locked(rt)
                self._warn_locked("%s: cudaHostRegister failed: %s" % (what, self._describe(rt, rc)))
                return None
            self._live[address] = size
        reg = Registration(address, size)
        weakref.finalize(reg, self._release, address, self._pid, keep)
        return reg

    def _release(self, address: int, pid: int, keep: Any) -> None:
        """The finalizer of a Registration: unregisters its range (in the process that registered it only)
        while ``keep`` still holds the memory mapped."""
        with self._lock:
            if pid != self._pid or self._live.pop(address, None) is None:
                return
            try:
                _finish_copies()
                rt = self._cudart()
                rc = int(rt.cudaHostUnregister(address))
            except Exception:  # interpreter shutdown, CUDA gone: nothing is left to release
                return
            if rc != 0:
                self._clear_error_locked(rt)
                self._warn_locked("cudaHostUnregister(0x%x) failed: %s" % (address, self._describe(rt, rc)),
                                  "the range stays with the driver until the process ends")

    def _clear_error_locked(self, rt: Any) -> None:
        """Reads and clears the CUDA runtime's pending error of this thread after a failed call."""
        get = getattr(rt, "cudaGetLastError", None)
        if get is None:
            if self._get_last_error is None:
                self._get_last_error = _loaded_cudart_get_last_error() or _clear_by_a_checked_launch
            get = self._get_last_error
        try:
            get()
        except Exception:
            pass

    @staticmethod
    def _describe(rt: Any, rc: int) -> str:
        try:
            text = rt.cudaGetErrorString(rc)
        except Exception:
            text = None
        return "CUDA error %d%s" % (rc, " (%s)" % text if text else "")

    def _warn_locked(self, message: str, then: str = "batches are in ordinary (pageable) memory") -> None:
        if not self._warned:
            self._warned = True
            warnings.warn("libshard: %s; %s" % (message, then), RuntimeWarning, stacklevel=4)


def _finish_copies() -> None:
    """Waits for copies that may still read the range (a ``non_blocking`` copy of a batch dropped at once)."""
    import torch
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _clear_by_a_checked_launch() -> None:
    """Without a loadable ``cudaGetLastError``: a kernel launch, whose check (C10_CUDA_KERNEL_LAUNCH_CHECK) reads
    and clears the pending error, raising it here rather than in the training loop."""
    import torch
    try:
        torch.empty(1, device="cuda").zero_()
    except RuntimeError:
        pass


_ALL: "weakref.WeakSet[HostRegistry]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for registry in list(_ALL):
        registry._reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

REGISTRY = HostRegistry()
