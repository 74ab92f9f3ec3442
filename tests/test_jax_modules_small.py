"""Small jax modules yax mirrors (jax.scipy.fft, jax.scipy.integrate, jax.dlpack, jax.api_util,
jax.profiler, jax.extend.lowering, jax.experimental.pjit), each compared with jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import yax
import yax.numpy as ynp

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n", [None, 5, 9])
def test_scipy_dct_idct_match_jax(norm, n):
    import jax.scipy.fft as jfft

    import yax.scipy.fft as yfft
    x = RNG.normal(size=(3, 7)).astype(np.float32)
    np.testing.assert_allclose(yfft.dct(x, n=n, norm=norm), jfft.dct(x, n=n, norm=norm),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(yfft.idct(x, n=n, norm=norm), jfft.idct(x, n=n, norm=norm),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(yfft.dct(x, axis=0, norm=norm), jfft.dct(x, axis=0, norm=norm),
                               rtol=1e-4, atol=1e-4)


def test_scipy_dctn_roundtrip_and_grad():
    import jax.scipy.fft as jfft

    import yax.scipy.fft as yfft
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    np.testing.assert_allclose(yfft.dctn(x, norm="ortho"), jfft.dctn(x, norm="ortho"),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(yfft.idctn(yfft.dctn(x)), x, rtol=1e-4, atol=1e-4)
    g = yax.grad(lambda v: (yfft.dct(v) ** 2).sum())(x)
    gj = jax.grad(lambda v: (jfft.dct(v) ** 2).sum())(x)
    np.testing.assert_allclose(g, gj, rtol=1e-3, atol=1e-3)
    with pytest.raises(NotImplementedError, match="type 2"):
        yfft.dct(x, type=3)


def test_scipy_integrate_trapezoid():
    import jax.scipy.integrate as jint

    import yax.scipy.integrate as yint
    y = RNG.normal(size=(5,)).astype(np.float32)
    x = np.cumsum(RNG.uniform(0.1, 1, size=5)).astype(np.float32)
    np.testing.assert_allclose(yint.trapezoid(y, x), jint.trapezoid(y, x), rtol=1e-5)


def test_dlpack():
    import yax.dlpack
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = yax.dlpack.from_dlpack(x)
    assert isinstance(y, yax.Array) and y.shape == (2, 3)
    np.testing.assert_array_equal(y, x)
    for dt in ("float32", "int8", "bool", "complex64", "bfloat16"):
        assert yax.dlpack.is_supported_dtype(dt) == jax.dlpack.is_supported_dtype(jnp.dtype(dt))
    assert not yax.dlpack.is_supported_dtype("not-a-dtype")


def test_api_util_flatten_axes_and_argnums_partial():
    import jax.api_util as japi

    import yax.tree_util
    from yax._jax_names import api_util as yapi
    tree = ({"a": 1, "b": (2, 3)}, 4)
    ytd = yax.tree_util.tree_structure(tree)
    jtd = jax.tree_util.tree_structure(tree)
    for axes in (0, ({"a": 0, "b": None}, 1), (None, 0)):
        assert yapi.flatten_axes("vmap in_axes", ytd, axes) == japi.flatten_axes(
            "vmap in_axes", jtd, axes)
    with pytest.raises(ValueError, match="tree prefix"):
        yapi.flatten_axes("in_axes", ytd, (0, 1, 2))
    g, dyn = yapi.argnums_partial(lambda a, b, c: a * 100 + b * 10 + c, (0, 2), (1, 2, 3))
    assert dyn == (1, 3) and g(4, 5) == 425
    assert yapi.rebase_donate_argnums((1, 3), (0,)) == japi.rebase_donate_argnums((1, 3), (0,))
    a = yapi.shaped_abstractify(np.zeros((2, 3), np.float32))
    assert a.shape == (2, 3) and str(a.dtype) == "float32"
    info = yapi.debug_info("jit", test_dlpack, (), {})
    assert info.traced_for == "jit"


def test_profiler_trace_records_yax_programs(tmp_path):
    import yax.profiler
    f = yax.jit(lambda x: x * 2 + 1)
    with yax.profiler.trace(str(tmp_path)):
        with yax.profiler.TraceAnnotation("yax-step"):
            f(ynp.ones(3)).block_until_ready()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "a trace was written"


def test_extend_lowering_context():
    from yax.extend import lowering
    ctx = lowering.JaxIrContext()
    from jaxlib.mlir import ir
    with ctx, ir.Location.unknown():
        module = ir.Module.parse("func.func @f(%x: tensor<f32>) -> tensor<f32> {"
                                 " %y = stablehlo.add %x, %x : tensor<f32>"
                                 " return %y : tensor<f32> }")
    assert "stablehlo.add" in str(module)


def test_experimental_pjit_is_jit():
    from yax.experimental.pjit import pjit
    np.testing.assert_allclose(pjit(lambda x: x + 1)(ynp.arange(3.0)), [1.0, 2.0, 3.0])
