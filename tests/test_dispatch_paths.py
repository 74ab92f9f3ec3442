"""jit's two call paths (jaxlib's C++ dispatch and yax's Python path), cache sharing and bounds,
clear_caches, thread-safe misses, faults during tracing, and the debugging flags of jit."""

from __future__ import annotations

import functools
import gc
import logging
import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import yax
import yax.numpy as ynp
from yax.runtime import dispatch

both_paths = pytest.mark.usefixtures("jit_dispatch")


def arr(x, dtype=np.float32):
    return yax.device_put(np.asarray(x, dtype))


def _program(p, scale, *, shift):
    return {"y": p["w"] * scale + shift, "z": (p["b"] - shift, ynp.sum(p["w"]))}


def _program_jax(p, scale, *, shift):
    return {"y": p["w"] * scale + shift, "z": (p["b"] - shift, jnp.sum(p["w"]))}


@both_paths
def test_pytrees_statics_keywords_agree_with_jax():
    f = yax.jit(_program, static_argnums=1)
    g = jax.jit(_program_jax, static_argnums=1)
    w, b = np.arange(4, dtype=np.float32), np.ones(3, np.float32)
    for scale in (2.0, 3.0, 2.0):
        for _ in range(2):  # the second call is the warm path
            out = f({"w": arr(w), "b": arr(b)}, scale, shift=arr(0.5))
            want = g({"w": w, "b": b}, scale, shift=np.float32(0.5))
            jax.tree_util.tree_map(lambda a, e: np.testing.assert_allclose(a, e, rtol=1e-6),
                                   yax.device_get(out), want)
    assert f.trace_count == 2  # one per static value; keywords and warm calls reuse
    assert type(out["z"][1]) is yax.Array


@both_paths
def test_donation_and_the_donated_argument_error():
    step = yax.jit(lambda x, y: (x * 2.0, y + x), donate_argnums=0)
    x, y = arr([1.0, 2.0]), arr([0.0, 1.0])
    x2, y2 = step(x, y)
    assert x.is_deleted() and not y.is_deleted()
    x3, _ = step(x2, y2)  # warm call donates again
    assert x2.is_deleted()
    np.testing.assert_allclose(x3, [4.0, 8.0])
    with pytest.raises(yax.errors.YaxError, match="donated"):
        step(x, y2)
    np.testing.assert_allclose(step(x3, y2)[0], [8.0, 16.0])  # still usable after the error


@both_paths
@pytest.mark.filterwarnings("ignore:a float64 input was truncated:UserWarning")
def test_non_array_leaves_weak_types_and_x64_changes(x64):
    f = yax.jit(lambda a, b: a * b)
    np.testing.assert_allclose(f(np.float64(3.0), arr([1.0, 2.0], np.float64)), [3.0, 6.0])
    out = f(np.ones(2), np.ones(2))  # NumPy leaves keep 64 bits with x64 on
    assert out.dtype == np.float64
    weak = f(arr([1.0], np.float32), 2.0)
    assert weak.dtype == np.float32
    yax.config.update("enable_x64", False)
    assert f(np.ones(2), np.ones(2)).dtype == np.float32  # a new config state retraces
    yax.config.update("enable_x64", True)
    n = f.trace_count
    assert f(np.ones(2), np.ones(2)).dtype == np.float64 and f.trace_count == n


@both_paths
def test_calls_under_transformations_are_staged():
    w = arr([1.0, 2.0])
    f = yax.jit(lambda a: ynp.sin(a) * 2.0)
    f(w)  # warm the cache with concrete Arrays
    jaxpr = yax.make_jaxpr(lambda x: f(w) * x)(arr([3.0, 4.0]))
    assert "= jit[" in str(jaxpr)  # not folded into a constant by the warm path
    g = yax.grad(lambda x: ynp.sum(f(x) * f(w)))(w)
    np.testing.assert_allclose(g, np.cos([1.0, 2.0]) * 2 * np.sin([1.0, 2.0]) * 2, rtol=1e-6)
    np.testing.assert_allclose(yax.vmap(f)(arr([[0.0], [1.0]])), np.sin([[0.0], [1.0]]) * 2,
                               rtol=1e-6)


@pytest.mark.skipif(not dispatch.AVAILABLE, reason="no C++ dispatch in this jaxlib")
def test_cpp_path_serves_warm_calls_without_python():
    yax.config.update("jit_cpp_dispatch", True)
    f = yax.jit(lambda a, b: (a + b, a * b))
    x = arr([1.0, 2.0])
    f(x, x)
    misses = []
    original = f._cpp_miss
    f._use_cpp(dispatch.make_function("f", lambda *a, **k: misses.append(1) or original(*a, **k),
                                      [], [], f._state.cpp_cache))
    for _ in range(3):
        out = f(x, x)
    assert misses == [1] and f.trace_count == 1  # one miss (answered from the Python cache)
    np.testing.assert_allclose(out[1], [1.0, 4.0])
    yax.config.update("debug_infs", True)  # any config change misses the C++ cache
    try:
        f(x, x)
        assert misses == [1, 1]
    finally:
        yax.config.update("debug_infs", False)


def test_wrappers_of_one_function_share_a_cache_and_methods_too():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1.0

    x = arr([1.0])
    for _ in range(3):
        yax.jit(f)(x)  # a new wrapper each time, as in `jax.jit(f)(x)` in a loop
    assert len(calls) == 1
    yax.jit(f, donate_argnums=0)(arr([1.0]))  # other options: a cache of their own
    assert len(calls) == 2

    class Model:
        def __init__(self_, scale):
            self_.scale = scale

        @functools.partial(yax.jit, static_argnums=0)
        def apply(self_, x):
            calls.append(2)
            return x * self_.scale
    m1, m2 = Model(2.0), Model(3.0)
    np.testing.assert_allclose(m1.apply(x), [2.0])
    m1.apply(x)
    np.testing.assert_allclose(m2.apply(x), [3.0])
    assert calls.count(2) == 2  # once per instance (a static argument), not once per access


def test_a_jitted_function_can_be_garbage_collected():
    def f(x):
        return x - 1.0
    yax.jit(f)(arr([1.0]))
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None


def test_cache_bound_eviction_and_clear_caches():
    old = yax.config.jit_cache_size
    yax.config.update("jit_cache_size", 3)
    try:
        f = yax.jit(lambda a: a * 2.0)
        f(ynp.ones(1)), f(ynp.ones(1))
        first = weakref.ref(f._state.entries.values()[0].exe)
        for n in range(2, 6):
            f(ynp.ones(n))
        assert f._cache_size() == 3 and f.trace_count == 5
        gc.collect()
        assert first() is None  # an evicted executable is freed (Python and C++ caches)
        f(ynp.ones(5))
        assert f.trace_count == 5
        f(ynp.ones(1))  # evicted: traced again
        assert f.trace_count == 6
    finally:
        yax.config.update("jit_cache_size", old)
    yax.clear_caches()
    assert f._cache_size() == 0
    np.testing.assert_allclose(f(ynp.ones(2)), [2.0, 2.0])
    assert f.trace_count == 7


def test_eager_executable_cache_is_bounded():
    from yax.interpreters import eager
    old = yax.config.eager_cache_size
    yax.config.update("eager_cache_size", 4)
    try:
        for n in range(1, 8):
            ynp.sin(ynp.ones(n))
        assert len(eager._exec_cache) <= 4
    finally:
        yax.config.update("eager_cache_size", old)


def _ensure_eval_trace():
    """Until the trace state is per thread (issue 18), a new thread starts without one."""
    from yax.core import trace
    from yax.interpreters.eager import EVAL_TRACE
    try:
        trace.current_trace()
    except LookupError:
        trace.set_eval_trace(EVAL_TRACE)


@both_paths
def test_concurrent_misses_trace_once():
    gate = threading.Barrier(4)

    def body(a):
        return ynp.cos(a) + 1.0

    f = yax.jit(body)
    results, errors = [], []

    def worker():
        try:
            _ensure_eval_trace()
            gate.wait()
            results.append(np.asarray(f(ynp.ones(3))))
        except Exception as e:  # surfaced below
            errors.append(e)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 4
    assert f.trace_count == 1 and f.compile_count == 1
    for r in results:
        np.testing.assert_allclose(r, np.cos(1.0) + 1.0, rtol=1e-6)


@both_paths
def test_interrupt_during_trace_leaves_no_entry():
    state = {"raise": True}

    def f(x):
        if state["raise"]:
            raise KeyboardInterrupt
        return x * 3.0
    g = yax.jit(f)
    with pytest.raises(KeyboardInterrupt):
        g(arr([1.0]))
    assert g._cache_size() == 0
    state["raise"] = False
    np.testing.assert_allclose(g(arr([1.0])), [3.0])
    np.testing.assert_allclose(g(arr([2.0])), [6.0])


@both_paths
def test_disable_jit_runs_python_op_by_op():
    seen = []

    def f(x):
        seen.append(type(x))
        return x * 2.0
    g = yax.jit(f)
    x = arr([1.0])
    g(x)
    with yax.disable_jit():
        np.testing.assert_allclose(g(x), [2.0])
        g(x)
    assert seen == [seen[0], yax.Array, yax.Array] and seen[0] is not yax.Array
    g(x)
    assert len(seen) == 3  # back to the compiled program


def test_log_compiles_and_explain_cache_misses(caplog):
    def scaled(x, n):
        return x * n
    g = yax.jit(scaled, static_argnums=1)
    yax.config.update("log_compiles", True)
    yax.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="yax"):
            g(arr([1.0]), 2)
            g(arr([1.0, 2.0]), 2)
            g(arr([1.0, 2.0]), 3)
    finally:
        yax.config.update("log_compiles", False)
        yax.config.update("explain_cache_misses", False)
    text = caplog.text
    assert text.count("Compiling jit(scaled)") == 3 and "test_dispatch_paths.py:" in text
    assert text.count("Finished XLA compilation of jit(scaled) in ") == 3
    assert "shape changed from f32[1] to f32[2]" in text
    assert "static arguments changed" in text
