"""A bounded least-recently-used cache whose misses are computed once, safely across threads.

`get_or_make(key, make)` returns the cached value or computes it with `make()`. A second thread
missing on the same key waits for the first one's result instead of computing it again (one
trace, one compile per key). No lock is held while `make()` runs, so `make` may itself use this
or any other cache (tracing re-enters jit) without deadlock. If `make()` raises -- an error in
user code, a compiler failure, a KeyboardInterrupt -- nothing is stored and waiting threads try
again themselves.
"""

from __future__ import annotations

import collections
import threading


class _Pending:
    __slots__ = ("event", "owner", "value", "ok")

    def __init__(self):
        self.event = threading.Event()
        self.owner = threading.get_ident()
        self.value = None
        self.ok = False


class LRUCache:
    """A mapping bounded by `capacity()` entries (a callable, so config changes apply)."""

    def __init__(self, capacity, on_evict=None):
        self._data: collections.OrderedDict = collections.OrderedDict()
        self._pending: dict = {}
        self._lock = threading.Lock()
        self._capacity = capacity
        self._on_evict = on_evict

    def get(self, key):
        """The value under `key` (marked recently used) or None. Lock-free on a hit."""
        value = self._data.get(key)
        if value is not None:
            try:
                self._data.move_to_end(key)
            except KeyError:  # evicted by another thread meanwhile: still a valid value
                pass
        return value

    def get_or_make(self, key, make, keep=None):
        """The value under `key`, or `make()`'s (stored unless `keep(value)` is false)."""
        while True:
            value = self.get(key)
            if value is not None:
                return value
            with self._lock:
                value = self._data.get(key)
                if value is not None:
                    return value
                pending = self._pending.get(key)
                owner = pending is None
                if owner:
                    pending = self._pending[key] = _Pending()
            if owner:
                return self._make(key, make, pending, keep)
            if pending.owner == threading.get_ident():
                return make()  # re-entered on the same key by its own maker: do not wait on us
            pending.event.wait()
            if pending.ok:
                return pending.value
            # the maker failed: try again (and raise our own error if it fails again)

    def _make(self, key, make, pending, keep):
        try:
            value = make()
        except BaseException:
            with self._lock:
                del self._pending[key]
            pending.event.set()
            raise
        if keep is None or keep(value):
            self.put(key, value)
        with self._lock:
            del self._pending[key]
        pending.value, pending.ok = value, True
        pending.event.set()
        return value

    def put(self, key, value) -> None:
        evicted = []
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            limit = max(int(self._capacity()), 1)
            while len(self._data) > limit:
                evicted.append(self._data.popitem(last=False))
        if self._on_evict is not None:
            for k, v in evicted:
                self._on_evict(k, v)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self):
        return len(self._data)

    def values(self) -> list:
        return list(self._data.values())
