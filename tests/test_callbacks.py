"""Host callbacks: debug.print / debug.callback / pure_callback / io_callback under every
transformation, result checking, errors raised in callbacks, effects kept by DCE and remat."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def _printing(fn_name_lib):
    """The same program written against yax and against jax (the oracle for printed text)."""
    lib, np_ = fn_name_lib

    def f(x):
        lib.debug.print("x={} s={s:.2f}", x, s=np_.sum(x))
        return x * 2
    return f


def test_print_matches_jax_eager_and_jit(capsys):
    x = np.arange(3.0, dtype=np.float32)
    for lib, np_ in ((yax, jnp), (jax, jjnp)):
        f = _printing((lib, np_))
        f(np_.asarray(x))
        lib.jit(f)(np_.asarray(x))
        lib.jit(f)(np_.asarray(x))  # cached executable: prints again, no retrace needed
    out = _lines(capsys)
    assert out[:3] == out[3:] and out[0] == "x=[0. 1. 2.] s=3.00" and len(out) == 6


def test_print_under_vmap_grad_jvp(capsys):
    def f(x):
        yax.debug.print("v {}", x)
        return jnp.sin(x).sum()
    yax.vmap(f)(jnp.arange(3.0))
    assert _lines(capsys) == ["v 0.0", "v 1.0", "v 2.0"]  # one print per batch element
    g = yax.jit(yax.grad(f))(jnp.array([1.0, 2.0]))
    assert _lines(capsys) == ["v [1. 2.]"]  # primal values, printed once
    np.testing.assert_allclose(g, np.cos([1.0, 2.0]), rtol=1e-6)
    yax.jvp(f, (jnp.ones(2),), (jnp.ones(2),))
    assert _lines(capsys) == ["v [1. 1.]"]


def test_print_in_control_flow_and_ordered(capsys):
    @yax.jit
    def f(x):
        def body(c, i):
            yax.debug.print("a{}", i, ordered=True)
            yax.debug.print("b{}", i, ordered=True)
            return c + i, None
        c, _ = lax.scan(body, 0, jnp.arange(3))
        y = lax.cond(x > 0, lambda v: (yax.debug.print("pos"), v)[1],
                     lambda v: (yax.debug.print("neg"), -v)[1], x)
        w = lax.while_loop(lambda v: v < 2, lambda v: (yax.debug.print("w{}", v), v + 1)[1], 0)
        return c + y + w
    assert int(f(1)) == 6
    out = _lines(capsys)
    # ordered prints of one body keep program order; independent sub-programs may run in any
    assert [ln for ln in out if ln[0] in "ab"] == ["a0", "b0", "a1", "b1", "a2", "b2"]
    assert sorted(ln for ln in out if ln[0] not in "ab") == ["pos", "w0", "w1"]
    f(-1)
    assert "neg" in _lines(capsys)


def test_callback_in_1000_step_scan_in_order():
    seen = []

    def body(c, i):
        yax.debug.callback(lambda v: seen.append(int(v)), i)
        return c + i, None
    total, _ = yax.jit(lambda: lax.scan(body, 0, jnp.arange(1000)))()
    assert int(total) == 499500 and seen == list(range(1000))


def test_pure_callback_values_jit_eager_and_pytrees():
    def f(x):
        spec = {"s": yax.ShapeDtypeStruct(x.shape, x.dtype),
                "n": yax.ShapeDtypeStruct((), np.int32)}
        return yax.pure_callback(lambda a: {"s": np.sin(a), "n": np.int32(a.size)}, spec, x)
    x = jnp.linspace(0.0, 1.0, 4)
    for out in (f(x), yax.jit(f)(x)):
        np.testing.assert_allclose(out["s"], np.sin(np.asarray(x)), rtol=1e-6)
        assert int(out["n"]) == 4
    # unused pure results may be dropped; an unused io_callback always runs
    ran = []
    yax.jit(lambda x: (yax.experimental.io_callback(lambda a: ran.append(1) or a,
                                                    yax.ShapeDtypeStruct((4,), np.float32), x),
                       x + 1)[1])(x)
    assert ran == [1]


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_pure_callback_vmap_methods_match_jax(method):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    y = np.float32(10.0)

    def run(lib, np_, shapes):
        def cb(a, b):
            shapes.append((a.shape, np.shape(b)))
            return (a * 2 + np.mean(b)).astype(np.float32)

        def f(a, b):
            spec = lib.ShapeDtypeStruct(a.shape, a.dtype)
            return lib.pure_callback(cb, spec, a, b, vmap_method=method)
        return np.asarray(lib.vmap(f, in_axes=(0, None))(np_.asarray(x), y)), shapes
    got, got_shapes = run(yax, jnp, [])
    want, want_shapes = run(jax, jjnp, [])
    np.testing.assert_allclose(got, want)
    assert got_shapes == want_shapes


def test_callback_that_raises_names_it_and_program_survives():
    def bad(a):
        raise ValueError("boom")

    f = yax.jit(lambda x: yax.pure_callback(bad, yax.ShapeDtypeStruct(x.shape, x.dtype), x))
    with pytest.raises(yax.errors.CallbackError, match=r"bad` \(defined at .*test_callbacks") \
            as info:
        f(jnp.ones(2))
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(yax.errors.CallbackError, match="boom"):  # again: the executable survives
        f(jnp.ones(2))
    with pytest.raises(yax.errors.CallbackError, match="boom"):  # eagerly too
        yax.debug.callback(bad, jnp.ones(2))


def test_wrong_result_shape_and_dtype_are_clear_errors():
    x = jnp.ones(3)
    short = yax.jit(lambda x: yax.pure_callback(lambda a: a[:2],
                                                yax.ShapeDtypeStruct((3,), np.float32), x))
    with pytest.raises(yax.errors.CallbackResultError, match=r"returned f32\[2\].*f32\[3\]"):
        short(x)
    wrong = lambda x: yax.pure_callback(lambda a: a.astype(np.int32),  # noqa: E731
                                        yax.ShapeDtypeStruct((3,), np.float32), x)
    with pytest.raises(yax.errors.CallbackResultError, match=r"i32\[3\].*f32\[3\]"):
        wrong(x)
    with pytest.raises(yax.errors.CallbackResultError, match="structure"):
        yax.pure_callback(lambda a: (a, a), yax.ShapeDtypeStruct((3,), np.float32), x)


def test_no_derivative_no_vmap_method_and_effects_in_while_cond():
    pc = lambda x: yax.pure_callback(np.sin, yax.ShapeDtypeStruct((), np.float32), x)  # noqa
    with pytest.raises(yax.errors.CallbackDerivativeError, match="custom_jvp"):
        yax.grad(pc)(1.0)
    with pytest.raises(yax.errors.CallbackBatchingError, match="vmap_method"):
        yax.vmap(pc)(jnp.ones(2))
    with pytest.raises(yax.errors.EffectInWhileCondError, match="loop body"):
        lax.while_loop(lambda c: (yax.debug.print("c"), c < 3)[1], lambda c: c + 1, 0)

    # with a custom_jvp the callback is differentiable
    @yax.custom_jvp
    def sin(x):
        return pc(x)
    sin.defjvp(lambda p, t: (sin(p[0]), jnp.cos(p[0]) * t[0]))
    np.testing.assert_allclose(yax.grad(sin)(0.5), np.cos(0.5), rtol=1e-6)


def test_effects_not_duplicated_by_remat_or_removed_by_dce(capsys):
    calls = []

    @yax.checkpoint
    def f(x):
        yax.debug.print("ck")
        y = yax.experimental.io_callback(lambda a: calls.append(1) or np.cos(a),
                                         yax.ShapeDtypeStruct((3,), np.float32),
                                         lax.stop_gradient(x))
        return jnp.sin(x) * y
    x = jnp.arange(3.0)
    g = yax.jit(yax.grad(lambda x: f(x).sum()))(x)
    np.testing.assert_allclose(g, np.cos(np.arange(3.0)) ** 2, rtol=1e-5)
    assert calls == [1] and _lines(capsys) == ["ck"]
    text = yax.jit(lambda x: (yax.debug.print("unused"), x)[1]).lower(x).as_text()
    assert "xla_ffi_python_cpu_callback" in text and "has_side_effect = true" in text
    assert "callback" in str(yax.make_jaxpr(lambda x: (yax.debug.print("u"), x)[1])(x))


def test_print_without_placeholders_and_printoptions_match_jax(capsys):
    for lib, np_ in ((yax, jnp), (jax, jjnp)):
        with np.printoptions(precision=2):
            f = lib.jit(lambda x: lib.debug.print("vals", x, x[0], skip_format_check=True))
            f(np_.asarray([1.0 / 3, 2.0]))  # print options of the trace apply
        with pytest.raises(ValueError, match="not used|Unused"):
            lib.debug.print("no placeholders", 1.0)
        with pytest.raises((IndexError, KeyError)):
            lib.debug.print("{} {}", 1.0)
    out = _lines(capsys)
    assert out[0] == out[1] == "vals [0.33 2.  ] 0.33333334", out
    assert len(out) == 2


def test_io_callback_under_vmap_and_x64_narrowing():
    calls = []

    def log_and_double(a):
        calls.append(a.shape)
        return (a * 2).astype(np.float64)  # float64 declared and returned: narrowed when x64 off

    def f(x):
        return yax.experimental.io_callback(log_and_double,
                                            yax.ShapeDtypeStruct(x.shape, np.float64), x)
    out = yax.jit(yax.vmap(f))(jnp.ones((3, 2)))
    np.testing.assert_allclose(out, 2.0)
    assert out.dtype == np.float32 and calls == [(2,)] * 3  # sequential: once per element
    ordered = lambda x: yax.experimental.io_callback(  # noqa: E731
        lambda a: a, yax.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True)
    with pytest.raises(yax.errors.CallbackBatchingError, match="ordered"):
        yax.vmap(ordered)(jnp.ones((2, 2)))
