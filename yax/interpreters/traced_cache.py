"""Tracing a user's function once: the one cache of traced bodies, branches and checkpoints.

`lax.cond`, `lax.scan`, `lax.while_loop`, `checkpoint` and custom_jvp/custom_vjp functions trace
the user's function to a jaxpr each time they are called; an eager Python loop calling them with
the same function would then retrace and recompile on every iteration. `trace_cached(kind, fun,
key, trace)` keeps the result per function (weakly: the entry dies with the function, so what it
stores must not refer back to the function) and per `(kind, key, enable_x64)`.

A traced program that closed over a tracer of an enclosing transformation belongs to that one
trace and is never stored; `captures_tracer` is that test, for every cache in yax that keeps
traced or compiled programs. Each function keeps at most `MAX_ENTRIES_PER_FUNCTION` entries (a
few input types per function; the oldest goes first). `clear()` empties everything
(yax.clear_caches). Safe from threads without a lock: an entry is traced first and inserted
whole; when two threads trace the same entry, the first stored wins and both use it.
"""

from __future__ import annotations

import weakref

from yax.compile import cache
from yax.config import config
from yax.core.trace import Tracer
from yax.interpreters.staging import closure_convert

MAX_ENTRIES_PER_FUNCTION = 8

_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def trace_cached(kind: str, fun, key, trace, *, closure_converted: bool = False,
                 cacheable: bool = True) -> tuple:
    """`trace()`'s result for `fun`, reused when `kind` and `key` (hashable) match.

    Args:
      kind: what the trace is for ("cond", "scan", ...), so one function used in two roles
        keeps two entries.
      fun: the user's function (the weak key); a function that cannot be weakly referenced is
        traced every time.
      key: everything else the trace depends on (input tree, avals, static values).
      trace: `() -> (closed_jaxpr, *extra)`, e.g. the output tree alongside.
      closure_converted: return `(const-free jaxpr, consts, *extra)` instead (see
        staging.closure_convert), converted once per entry.
      cacheable: False to trace without looking up or storing anything (a caller that must
        rerun the user's Python, or whose key holds unhashable static values).
    Returns:
      The tuple `trace()` returned (closure-converted if asked); the same objects on a hit.
    """
    if not cacheable:
        return _traced(trace, closure_converted)
    full_key = (kind, key, config.enable_x64)
    try:
        per_fun = _entries.setdefault(fun, {})
    except TypeError:  # not weak-referenceable (some builtins): trace every time
        per_fun = {}
    hit = per_fun.get(full_key)
    if hit is not None:
        return hit
    entry = _traced(trace, closure_converted)
    if not captures_tracer(entry[1] if closure_converted else entry[0]):
        _evict_oldest(per_fun)
        entry = per_fun.setdefault(full_key, entry)
    return entry


def _traced(trace, closure_converted: bool) -> tuple:
    closed, *extra = trace()
    return (*closure_convert(closed), *extra) if closure_converted else (closed, *extra)


def captures_tracer(closed_or_consts) -> bool:
    """Whether a traced program closes over a tracer (then it is valid only inside the trace
    that made it: use it once, never cache it). Takes anything with `.consts` (a ClosedJaxpr,
    a jit entry) or the constants themselves."""
    consts = getattr(closed_or_consts, "consts", closed_or_consts)
    return any(isinstance(c, Tracer) for c in consts)


def _evict_oldest(per_fun: dict) -> None:
    while len(per_fun) >= MAX_ENTRIES_PER_FUNCTION:
        try:
            del per_fun[next(iter(per_fun))]
        except (KeyError, StopIteration, RuntimeError):  # another thread changed it meanwhile
            return


def clear() -> None:
    """Forget every traced function (called by yax.clear_caches)."""
    _entries.clear()


cache.on_clear(clear)
