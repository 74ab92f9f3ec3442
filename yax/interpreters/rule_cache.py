"""A cache for sub-programs that transformation rules derive from a primitive's jaxpr params.

Rules of primitives holding jaxprs (pjit, cond, scan, ...) build new jaxprs (the JVP of a body,
its known/unknown split, its transpose, its batched form). Applied again with the same inputs --
every call of an eager `grad(jit(f))`, every step of a loop -- they must yield the *same*
ClosedJaxpr objects, or the executable caches keyed on those objects never hit and every call
compiles again. Results whose constants captured a tracer belong to one trace and are not kept.
"""

from __future__ import annotations

from yax.compile import cache as compile_cache
from yax.config import config
from yax.interpreters.traced_cache import captures_tracer
from yax.runtime.lru import LRUCache

_SIZE = 512
# LRU-bounded; concurrent misses on one key build it once (and rules may nest: no lock is held
# while `make` runs); a `make` that raises leaves nothing behind.
_cache = LRUCache(lambda: _SIZE)


def cached(key, make, consts_of):
    """`make()` once per `key` (plus the x64 flag); `consts_of(value)` lists its constants."""
    key = (*key, config.enable_x64)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    return _cache.get_or_make(
        key, make, keep=lambda value: not captures_tracer(consts_of(value)))


def clear() -> None:
    """Forget every derived sub-program (`yax.clear_caches`)."""
    _cache.clear()


compile_cache.on_clear(clear)
