"""jit: caching and retracing, static and donated arguments, lowering, nesting, errors."""

from __future__ import annotations

import numpy as np
import pytest

import yax
from yax import lax

# every test here runs under both jit call paths (C++ dispatch and Python), see conftest.py
pytestmark = pytest.mark.usefixtures("jit_dispatch")


def arr(x, dtype=np.float32):
    return yax.device_put(np.asarray(x, dtype))


def test_same_avals_do_not_retrace_and_new_ones_do():
    calls = []

    def f(x):
        calls.append(1)  # Python side effects run at trace time only
        return lax.mul(lax.sin(x), 2.0)

    g = yax.jit(f)
    x = arr([1.0, 2.0, 3.0])
    np.testing.assert_allclose(g(x), np.sin([1.0, 2.0, 3.0]) * 2, rtol=1e-6)
    g(x)
    g(arr([4.0, 5.0, 6.0]))
    assert g.trace_count == 1 and g.compile_count == 1 and len(calls) == 1
    g(arr([1.0, 2.0]))  # new shape
    assert g.trace_count == 2
    g(arr([1.0, 2.0], np.float16))  # new dtype
    assert g.trace_count == 3
    g(np.ones(2, np.float32))  # numpy input with a seen aval: no retrace
    assert g.trace_count == 3


def test_static_argnums_and_argnames_retrace_on_new_values():
    def f(x, n, *, mode="a"):
        return lax.integer_pow(x, n) if mode == "a" else lax.neg(x)

    g = yax.jit(f, static_argnums=1, static_argnames="mode")
    x = arr([2.0, 3.0])
    np.testing.assert_allclose(g(x, 2), [4.0, 9.0])
    np.testing.assert_allclose(g(x, 3), [8.0, 27.0])
    np.testing.assert_allclose(g(x, 3, mode="b"), [-2.0, -3.0])
    g(x, 3)
    assert g.trace_count == 3


def test_static_name_inferred_from_position():
    g = yax.jit(lambda x, n: lax.integer_pow(x, n), static_argnums=1)
    np.testing.assert_allclose(g(arr([2.0]), n=3), [8.0])


def test_unhashable_static_argument_is_a_clear_error():
    g = yax.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(yax.errors.StaticArgumentError, match="not hashable") as info:
        g(arr([1.0]), [1, 2])
    assert "tuple" in str(info.value) and "test_jit.py" in str(info.value)


def test_python_scalars_are_weak_and_keyed():
    g = yax.jit(lambda x, s: lax.mul(x, s))
    x = arr([1.0, 2.0], np.float16)
    out = g(x, yax.device_put(np.float16(3.0)))
    assert out.dtype == np.float16
    assert g(2.0, 3.0).weak_type


def test_pytrees_in_and_out():
    g = yax.jit(lambda d: {"s": lax.add(d["a"], d["b"][0]), "t": (d["b"][1],)})
    out = g({"a": arr([1.0]), "b": (arr([2.0]), arr([3.0]))})
    assert set(out) == {"s", "t"} and isinstance(out["t"], tuple)
    np.testing.assert_allclose(out["s"], [3.0])


def test_bool_of_tracer_points_to_cond_and_the_user_line():
    def f(x):
        if lax.gt(x, 0.0):  # user line named in the error
            return x
        return lax.neg(x)

    with pytest.raises(yax.errors.ConcretizationError) as info:
        yax.jit(f)(arr(1.0))
    msg = str(info.value)
    assert "lax.cond" in msg and "test_jit.py" in msg and "if lax.gt(x, 0.0)" in msg


def test_while_on_tracer_points_to_while_loop():
    def f(x):
        while lax.gt(x, 0.0):
            x = lax.sub(x, 1.0)
        return x

    with pytest.raises(yax.errors.ConcretizationError, match="while_loop"):
        yax.jit(f)(arr(3.0))


def test_int_of_tracer_suggests_static_argnums():
    with pytest.raises(yax.errors.ConcretizationError, match="static_argnums"):
        yax.jit(lambda x: int(x))(arr(3.0))


def test_leaked_tracer_is_detected_later():
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    yax.jit(f)(arr([1.0]))
    with pytest.raises(yax.errors.UnexpectedTracerError, match="already finished"):
        lax.sin(leaked[0])
    with pytest.raises(yax.errors.UnexpectedTracerError):
        yax.jit(lambda y: lax.add(y, leaked[0]))(arr([1.0]))


def test_compiled_rejects_wrong_dtype_and_shape():
    g = yax.jit(lambda x: lax.add(x, x))
    compiled = g.lower(arr([1.0, 2.0])).compile()
    np.testing.assert_allclose(compiled(arr([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(yax.errors.InputMismatchError, match="i32\\[2\\]"):
        compiled(yax.device_put(np.array([1, 2], np.int32)))
    with pytest.raises(yax.errors.InputMismatchError, match="f32\\[3\\]"):
        compiled(arr([1.0, 2.0, 3.0]))
    stats = compiled.memory_analysis()
    assert stats.argument_size_in_bytes == 8 and stats.output_size_in_bytes == 8
    assert stats["argument_bytes"] == 8  # the older yax keys still index it
    for name in ("temp_size_in_bytes", "alias_size_in_bytes", "generated_code_size_in_bytes"):
        assert getattr(stats, name) >= 0
    assert compiled.cost_analysis().get("flops", 2.0) >= 1.0


def test_lower_shows_stablehlo():
    text = yax.jit(lambda x: lax.exp(x)).lower(arr([1.0])).as_text()
    assert "func.func public @main" in text and "stablehlo.exponential" in text


def test_jit_inside_jit_is_a_call():
    inner = yax.jit(lambda x: lax.mul(x, 3.0))
    outer = yax.jit(lambda x: lax.add(inner(x), inner(x)))
    np.testing.assert_allclose(outer(arr([1.0, 2.0])), [6.0, 12.0])
    jaxpr = yax.make_jaxpr(outer)(arr([1.0, 2.0]))
    assert "= jit[" in str(jaxpr)  # the pjit primitive prints as jax names it
    text = outer.lower(arr([1.0, 2.0])).as_text()
    assert text.count("func.func private") == 1  # inner lowered once, called twice
    assert text.count("call @") == 2


def test_closure_over_concrete_array_becomes_a_const():
    c = arr([10.0, 20.0])
    g = yax.jit(lambda x: lax.add(x, c))
    np.testing.assert_allclose(g(arr([1.0, 2.0])), [11.0, 22.0])
    assert len(yax.make_jaxpr(lambda x: lax.add(x, c))(arr([1.0, 2.0])).consts) == 1


def test_donation_deletes_the_argument():
    g = yax.jit(lambda x: lax.add(x, 1.0), donate_argnums=0)
    x = arr([1.0, 2.0])
    y = g(x)
    np.testing.assert_allclose(y, [2.0, 3.0])
    assert x.is_deleted()
    with pytest.raises(yax.errors.YaxError, match="donated"):
        g(x)


def test_eager_and_jit_agree():
    # XLA may fuse the jitted program, so agreement is to rounding, not bitwise
    x = np.random.default_rng(0).normal(size=(5,)).astype(np.float32)
    f = lambda a: lax.tanh(lax.mul(lax.exp(a), 0.5))
    np.testing.assert_allclose(np.asarray(f(arr(x))), np.asarray(yax.jit(f)(arr(x))), rtol=2e-7)


def test_config_is_part_of_the_key(x64):
    g = yax.jit(lambda x: lax.mul(x, 2.0))
    out = g(np.ones(2, np.float64))
    assert out.dtype == np.float64


def test_float64_truncation_warns_once_without_x64():
    from yax.core import dtypes
    dtypes._warned_truncation.discard(np.dtype(np.float64))
    with pytest.warns(UserWarning, match="enable_x64"):
        out = yax.device_put(np.ones(2, np.float64))
    assert out.dtype == np.float32


def test_numpy_input_is_copied_not_aliased():
    host = np.ones(3, np.float32)
    dev = yax.device_put(host)
    host[0] = 5.0
    assert np.asarray(dev)[0] == 1.0


def test_large_python_loop_warns_with_the_line(monkeypatch):
    from yax.interpreters import staging
    monkeypatch.setattr(staging, "_warned_lines", set())  # warned once per line per process
    yax.config.update("large_jaxpr_warning", 50)
    try:
        def f(x):
            for _ in range(60):
                x = lax.sin(x)
            return x
        with pytest.warns(UserWarning, match="fori_loop"):
            yax.jit(f)(arr([1.0]))
    finally:
        yax.config.update("large_jaxpr_warning", 10_000)
