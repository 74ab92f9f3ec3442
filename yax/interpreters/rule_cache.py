"""A cache for sub-programs that transformation rules derive from a primitive's jaxpr params.

Rules of primitives holding jaxprs (pjit, cond, scan, ...) build new jaxprs (the JVP of a body,
its known/unknown split, its transpose, its batched form). Applied again with the same inputs --
every call of an eager `grad(jit(f))`, every step of a loop -- they must yield the *same*
ClosedJaxpr objects, or the executable caches keyed on those objects never hit and every call
compiles again. Results whose constants captured a tracer belong to one trace and are not kept.
"""

from __future__ import annotations

import collections

from yax.config import config
from yax.core.trace import Tracer

_cache: collections.OrderedDict = collections.OrderedDict()
_SIZE = 512


def cached(key, make, consts_of):
    """`make()` once per `key` (plus the x64 flag); `consts_of(value)` lists its constants."""
    key = (*key, config.enable_x64)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    value = make()
    if not any(isinstance(c, Tracer) for c in consts_of(value)):
        _cache[key] = value
        if len(_cache) > _SIZE:
            _cache.popitem(last=False)
    return value
