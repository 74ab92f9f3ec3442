"""Elementwise primitives against NumPy/SciPy, eagerly and under jit, on drawn shapes and dtypes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
from tests.harness import check_eager_and_jit
from yax import lax

F = ["float32", "float16", "bfloat16"]
I = ["int32", "int8", "uint8", "uint32", "int16"]
S = ["int32", "int8", "int16"]
B = ["bool"]

# name, yax function, NumPy reference, dtypes, input sampler ("any", "pos", "unit", "ge1", "small")
UNARY = [
    ("neg", lax.neg, np.negative, F + S, "any"),
    ("sign", lax.sign, np.sign, F + I, "any"),
    ("floor", lax.floor, np.floor, F, "any"),
    ("ceil", lax.ceil, np.ceil, F, "any"),
    ("round", lax.round, lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), F, "any"),
    ("round_even", lambda x: lax.round(x, 1), np.round, F, "any"),
    ("abs", lax.abs, np.abs, F + S, "any"),
    ("exp", lax.exp, np.exp, F, "small"),
    ("exp2", lax.exp2, np.exp2, F, "small"),
    ("log", lax.log, np.log, F, "pos"),
    ("log1p", lax.log1p, np.log1p, F, "pos"),
    ("expm1", lax.expm1, np.expm1, F, "small"),
    ("sqrt", lax.sqrt, np.sqrt, F, "pos"),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), F, "pos"),
    ("cbrt", lax.cbrt, np.cbrt, F, "any"),
    ("sin", lax.sin, np.sin, F, "any"),
    ("cos", lax.cos, np.cos, F, "any"),
    ("tan", lax.tan, np.tan, F, "unit"),
    ("asin", lax.asin, np.arcsin, F, "unit"),
    ("acos", lax.acos, np.arccos, F, "unit"),
    ("atan", lax.atan, np.arctan, F, "any"),
    ("sinh", lax.sinh, np.sinh, F, "small"),
    ("cosh", lax.cosh, np.cosh, F, "small"),
    ("tanh", lax.tanh, np.tanh, F, "any"),
    ("asinh", lax.asinh, np.arcsinh, F, "any"),
    ("acosh", lax.acosh, np.arccosh, F, "ge1"),
    ("atanh", lax.atanh, np.arctanh, F, "unit"),
    ("logistic", lax.logistic, sps.expit, F, "any"),
    ("erf", lax.erf, sps.erf, F, "any"),
    ("erfc", lax.erfc, sps.erfc, F, "small"),
    ("erf_inv", lax.erf_inv, sps.erfinv, F, "unit"),
    ("lgamma", lax.lgamma, sps.gammaln, F, "pos"),
    ("digamma", lax.digamma, sps.digamma, F, "pos"),
    ("is_finite", lax.is_finite, np.isfinite, F, "any"),
    ("not", lax.bitwise_not, np.invert, I + B, "any"),
    ("population_count", lax.population_count,
     lambda x: np.vectorize(lambda v: bin(int(v) & (2 ** (8 * x.itemsize) - 1)).count("1"),
                            otypes=[x.dtype])(x), I, "any"),
]

BINARY = [
    ("add", lax.add, np.add, F + I + B[:0], "any"),
    ("sub", lax.sub, np.subtract, F + S, "any"),
    ("mul", lax.mul, np.multiply, F + I, "any"),
    ("div", lax.div, np.divide, F, "pos"),
    ("div_int", lax.div, lambda a, b: np.trunc(a / b).astype(a.dtype), S, "pos"),
    ("rem", lax.rem, np.fmod, F + S, "pos"),
    ("pow", lax.pow, np.power, F, "pos"),
    ("max", lax.max, np.maximum, F + I + B, "any"),
    ("min", lax.min, np.minimum, F + I + B, "any"),
    ("atan2", lax.atan2, np.arctan2, F, "any"),
    ("nextafter", lax.nextafter, np.nextafter, ["float32"], "any"),
    ("and", lax.bitwise_and, np.bitwise_and, I + B, "any"),
    ("or", lax.bitwise_or, np.bitwise_or, I + B, "any"),
    ("xor", lax.bitwise_xor, np.bitwise_xor, I + B, "any"),
    ("shift_left", lax.shift_left, lambda a, b: np.left_shift(a, b % 5), ["int32", "uint32"],
     "small_int"),
    ("eq", lax.eq, np.equal, F + I + B, "any"),
    ("ne", lax.ne, np.not_equal, F + I + B, "any"),
    ("lt", lax.lt, np.less, F + I, "any"),
    ("le", lax.le, np.less_equal, F + I, "any"),
    ("gt", lax.gt, np.greater, F + I, "any"),
    ("ge", lax.ge, np.greater_equal, F + I, "any"),
]

SHAPES = st.sampled_from([(), (1,), (3,), (2, 3), (2, 1, 4), (0, 3)])


def _sample(rng, shape, dtype, kind):
    dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo, hi = (0, 5) if kind in ("pos", "small_int") else (-20, 20)
        lo = max(lo, 0) if dtype.kind == "u" else lo
        vals = rng.integers(lo, hi, size=shape)
        if kind == "pos":
            vals = vals + 1
        return vals.astype(dtype)
    base = {"any": lambda: rng.normal(size=shape) * 3,
            "pos": lambda: rng.uniform(0.1, 4.0, size=shape),
            "unit": lambda: rng.uniform(-0.9, 0.9, size=shape),
            "ge1": lambda: rng.uniform(1.0, 4.0, size=shape),
            "small": lambda: rng.uniform(-2.0, 2.0, size=shape)}[kind]()
    return np.asarray(base).astype(dtype)


def _reference(np_fun, args, out_dtype_like):
    wide = [a.astype(np.float64) if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16 else a
            for a in args]
    out = np.asarray(np_fun(*wide))
    if out.dtype == np.float64:
        out = out.astype(out_dtype_like)
    return out


@pytest.mark.parametrize("name,fun,ref,dts,kind", UNARY, ids=[u[0] for u in UNARY])
@settings(max_examples=6, deadline=None)
@given(shape=SHAPES, data=st.data())
def test_unary(name, fun, ref, dts, kind, shape, data):
    dtype = data.draw(st.sampled_from(dts))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = _sample(rng, shape, dtype, kind)
    want = _reference(ref, [x], x.dtype)
    check_eager_and_jit(fun, [x], want)


@pytest.mark.parametrize("name,fun,ref,dts,kind", BINARY, ids=[b[0] for b in BINARY])
@settings(max_examples=6, deadline=None)
@given(shape=SHAPES, data=st.data())
def test_binary(name, fun, ref, dts, kind, shape, data):
    dtype = data.draw(st.sampled_from(dts))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x, y = _sample(rng, shape, dtype, kind), _sample(rng, shape, dtype, kind)
    want = _reference(ref, [x, y], x.dtype)
    check_eager_and_jit(fun, [x, y], want)


def test_float64_unary_and_binary_under_x64(x64):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, size=(3, 2))
    for fun, ref in [(lax.log, np.log), (lax.tanh, np.tanh), (lax.lgamma, sps.gammaln)]:
        check_eager_and_jit(fun, [x], ref(x))
    check_eager_and_jit(lax.atan2, [x, x[::-1]], np.arctan2(x, x[::-1]))


def test_scalar_operand_broadcasts_implicitly():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_eager_and_jit(lambda a: lax.mul(a, 2.0), [x], x * 2)
    jaxpr = yax.make_jaxpr(lambda a: lax.mul(a, 2.0))(x)
    assert len(jaxpr.eqns) == 1 and "mul a 2.0:f32[]" in str(jaxpr)


def test_weak_scalar_keeps_array_dtype():
    x = yax.device_put(np.ones(3, np.float16))
    out = lax.add(x, 1.5)
    assert out.dtype == np.float16 and not out.weak_type


def test_integer_pow():
    x = np.linspace(-2, 2, 7).astype(np.float32)
    for y in (0, 1, 2, 3, 5, -1, -2):
        check_eager_and_jit(lambda a: lax.integer_pow(lax.add(a, 3.0), y), [x], (x + 3) ** float(y),
                            rtol=1e-5)
    check_eager_and_jit(lambda a: lax.integer_pow(a, 3), [np.arange(5, dtype=np.int32)],
                        np.arange(5, dtype=np.int32) ** 3)


def test_select_n_clamp_convert_bitcast():
    rng = np.random.default_rng(1)
    x, y, z = (rng.normal(size=(4,)).astype(np.float32) for _ in range(3))
    which = np.array([0, 1, 2, 1], np.int32)
    check_eager_and_jit(lax.select_n, [which, x, y, z], np.choose(which, [x, y, z]))
    pred = x > 0
    check_eager_and_jit(lax.select, [pred, x, y], np.where(pred, x, y))
    check_eager_and_jit(lambda a: lax.clamp(-0.5, a, 0.5), [x], np.clip(x, -0.5, 0.5))
    check_eager_and_jit(lambda a: lax.convert_element_type(a, np.int32), [x * 10],
                        (x * 10).astype(np.int32))
    check_eager_and_jit(lambda a: lax.convert_element_type(a, np.bool_), [x], x != 0)
    check_eager_and_jit(lambda a: lax.bitcast_convert_type(a, np.int32), [x], x.view(np.int32))
    check_eager_and_jit(lambda a: lax.bitcast_convert_type(a, np.uint8), [x],
                        x.view(np.uint8).reshape(4, 4))


def test_uint32_wraps():
    a = np.array([0xFFFFFFFF, 7], np.uint32)
    check_eager_and_jit(lax.add, [a, a], a + a)
    check_eager_and_jit(lambda u: lax.shift_right_logical(u, np.uint32(3)), [a], a >> 3)


def test_shape_mismatch_error_names_shapes_and_line():
    x = yax.device_put(np.ones(3, np.float32))
    y = yax.device_put(np.ones(4, np.float32))
    with pytest.raises(yax.errors.ShapeError) as info:
        lax.add(x, y)  # the error must point here
    msg = str(info.value)
    assert "f32[3]" in msg and "f32[4]" in msg and "test_prim_elementwise.py" in msg
    with pytest.raises(yax.errors.ShapeError):
        yax.make_jaxpr(lambda a, b: lax.mul(a, b))(x, y)


def test_dtype_errors():
    x = yax.device_put(np.ones(3, np.int32))
    with pytest.raises(yax.errors.DTypeError, match="floating"):
        lax.sin(x)
    with pytest.raises(yax.errors.DTypeError, match="one dtype"):
        lax.add(x, yax.device_put(np.ones(3, np.float32)))
    with pytest.raises(yax.errors.DTypeError):
        lax.add(x, 1.5)
