"""The one cache of traced user functions (interpreters/traced_cache.py)."""

from __future__ import annotations

import numpy as np

import yax
import yax.numpy as jnp
from yax import lax
from yax.interpreters import traced_cache


def _counting(fun):
    calls = []

    def counted(*args):
        calls.append(1)
        return fun(*args)
    return counted, calls


def test_scan_body_traced_once_per_types_and_cleared_by_clear_caches():
    body, calls = _counting(lambda c, x: (c + x, c))
    xs = np.arange(3.0, dtype=np.float32)
    lax.scan(body, np.float32(0), xs)
    lax.scan(body, np.float32(0), xs)
    assert len(calls) == 1
    yax.clear_caches()
    lax.scan(body, np.float32(0), xs)
    assert len(calls) == 2


def test_a_captured_tracer_is_not_cached():
    seen = {}

    def f(y):
        branch = seen["branch"] = lambda x: x * y  # `y` is a tracer of jit's trace
        return lax.cond(True, branch, branch, jnp.ones(2))
    yax.jit(f)(np.float32(2))
    assert not traced_cache._entries.get(seen["branch"])


def test_one_function_keeps_a_bounded_number_of_entries():
    body, calls = _counting(lambda c, x: (c + x, c))
    for n in range(traced_cache.MAX_ENTRIES_PER_FUNCTION + 3):
        lax.scan(body, np.float32(0), np.zeros(n + 1, np.float32))
    per_fun = traced_cache._entries[body]
    assert len(per_fun) <= traced_cache.MAX_ENTRIES_PER_FUNCTION


def test_same_function_in_two_roles_keeps_two_entries():
    fun, calls = _counting(lambda x: x + 1)
    x = np.ones(2, np.float32)
    lax.cond(True, fun, fun, x)
    yax.checkpoint(fun)(yax.numpy.asarray(x))  # eager and untraced: runs fun directly
    yax.grad(lambda x: yax.checkpoint(fun)(x).sum())(x)
    kinds = {key[0] for key in traced_cache._entries[fun]}
    assert kinds == {"cond branch", "checkpoint"}
