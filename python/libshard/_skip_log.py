"""on_error="skip": the records a ShardDataset skipped, gathered from this process and its DataLoader workers
(libshard.torch)."""
import threading
import warnings
from typing import Dict


class _SkipLog:
    """on_error="skip": the records each dataset (by uid) skipped, from this process and its DataLoader workers,
    each once, and the files already warned about. One instance per process (``_SKIPS``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: Dict[str, list] = {}
        self._seen: Dict[str, set] = {}
        self._warned: Dict[str, set] = {}

    def note(self, uid: str, records, warn: bool = True) -> None:
        """Adds skipped records ({sample, file, record, offset, reason}) to dataset `uid`'s list; warns once per
        file (``warn=False``: records restored from a saved state, already warned about by the run that saved
        it)."""
        if not records:
            return
        with self._lock:
            seen = self._seen.setdefault(uid, set())
            warned = self._warned.setdefault(uid, set())
            for r in records:
                if (r["file"], r["record"]) in seen:
                    continue
                seen.add((r["file"], r["record"]))
                self._records.setdefault(uid, []).append(dict(r))
                if warn and r["file"] not in warned:
                    warned.add(r["file"])
                    warnings.warn('libshard: on_error="skip" skipped %s record %d at byte %d: %s (the dataset\'s '
                                  '.skipped lists every record skipped, each once)'
                                  % (r["file"], r["record"], r["offset"], r["reason"]), stacklevel=3)

    def records(self, uid: str) -> list:
        with self._lock:
            return [dict(r) for r in self._records.get(uid, [])]


_SKIPS = _SkipLog()
