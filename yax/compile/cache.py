"""The caches of compiled programs: bounded, thread-safe, and all emptied by `clear_caches`.

`new_cache(name)` gives a least-recently-used cache (`runtime.lru.LRUCache`: a miss is computed
once even when threads race on it) whose size follows one setting, `config.jit_cache_size`, and
which `clear_all()` (behind `yax.clear_caches()`) empties. Code that keeps another kind of cache
of traced or compiled programs registers a function that empties it with `on_clear`.
"""

from __future__ import annotations

import threading
import weakref

from yax.config import config
from yax.runtime.lru import LRUCache

_caches: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_clearers: list = []
_lock = threading.Lock()
_count = [0]


def _capacity() -> int:
    return config.jit_cache_size


def new_cache(name: str, capacity=_capacity, on_evict=None) -> LRUCache:
    """A registered LRU cache (`capacity`: a callable read on each insertion)."""
    cache = LRUCache(capacity, on_evict=on_evict)
    with _lock:
        _count[0] += 1
        _caches[f"{name}#{_count[0]}"] = cache
    return cache


def on_clear(clear) -> None:
    """Have `clear_all()` call `clear()` too (for caches that are not `new_cache`s)."""
    with _lock:
        _clearers.append(clear)


def clear_all() -> None:
    """Empty every registered cache."""
    with _lock:
        caches, clearers = list(_caches.values()), list(_clearers)
    for cache in caches:
        cache.clear()
    for clear in clearers:
        clear()
