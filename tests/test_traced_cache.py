"""The one cache of traced user functions (interpreters/traced_cache.py)."""

from __future__ import annotations

import gc
import weakref

import numpy as np

import yax
import yax.numpy as jnp
from yax import lax
from yax.interpreters import rule_cache, traced_cache


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


def _counted_custom_jvp():
    calls = []

    @yax.custom_jvp
    def g(x):
        calls.append(1)
        return jnp.sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        return g(primals[0]), jnp.cos(primals[0]) * tangents[0]
    return g, calls


def test_custom_jvp_traced_twice_under_jit_with_the_same_avals_runs_once():
    g, calls = _counted_custom_jvp()
    x = np.linspace(0, 1, 3, dtype=np.float32)
    for _ in range(2):  # jit keeps the compiled program: the function is not traced again
        yax.jit(lambda v: g(v) * 2.0)(x)
    f = yax.jit(lambda v: g(v) * 2.0)
    f(x)
    f(x + 1)
    assert len(calls) == 3  # one trace per jit tracing (each of the two lambdas, then f)
    calls.clear()
    for _ in range(2):  # two jit traces: under vmap the traced custom function is reused
        yax.jit(lambda v: yax.vmap(g)(v) * 2.0)(x)
    assert len(calls) == 1


def test_defjvp_after_a_call_takes_effect():
    g, calls = _counted_custom_jvp()
    x = np.linspace(0, 1, 3, dtype=np.float32)

    def loss(v):
        return yax.vmap(g)(v).sum()
    np.testing.assert_allclose(yax.grad(loss)(x), np.cos(x), rtol=1e-6)

    @g.defjvp
    def _(primals, tangents):
        return g(primals[0]), 3.0 * tangents[0]
    np.testing.assert_allclose(yax.grad(loss)(x), np.full(3, 3.0), rtol=1e-6)
    assert len(calls) == 2  # traced once per rules


def test_custom_vjp_defvjp_after_a_call_takes_effect():
    @yax.custom_vjp
    def h(x):
        return jnp.sin(x)
    h.defvjp(lambda x: (h(x), x), lambda x, ct: (jnp.cos(x) * ct,))
    x = np.linspace(0, 1, 3, dtype=np.float32)

    def loss(v):
        return yax.vmap(h)(v).sum()
    np.testing.assert_allclose(yax.grad(loss)(x), np.cos(x), rtol=1e-6)
    h.defvjp(lambda x: (h(x), x), lambda x, ct: (2.0 * ct,))
    np.testing.assert_allclose(yax.grad(loss)(x), np.full(3, 2.0), rtol=1e-6)


def test_a_cached_custom_function_is_freed_with_its_function():
    """Its rules refer back to it (`g(primals[0])`); the cached trace must not keep it alive."""
    g, calls = _counted_custom_jvp()
    yax.vmap(g)(np.ones(2, np.float32))
    fun = weakref.ref(g.fun)
    assert traced_cache._entries.get(g.fun)
    del g
    rule_cache.clear()  # bounded LRU of derived programs, which keys on the rule object
    gc.collect()
    assert fun() is None
