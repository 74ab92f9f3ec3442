"""yax.numpy ufuncs and reductions on hypothesis-drawn shapes and dtypes, against real
jax.numpy (values, dtypes, weak types), eagerly and under yax.jit."""

from __future__ import annotations

import jax.numpy as jnp_ref
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import yax.numpy as jnp
from tests.suiteb_util import JaxTable
from tests.test_numpy_core import SETTINGS, check_vs_jax, check_vs_jax_value, ref, sample

# --- ufuncs ------------------------------------------------------------------------------------

UNARY = ["negative", "positive", "abs", "absolute", "sign", "exp", "exp2", "expm1", "log",
         "log2", "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
         "acos", "deg2rad", "rad2deg", "degrees", "radians", "floor", "ceil", "trunc", "rint",
         "isfinite", "isinf", "isnan", "signbit", "logical_not", "invert", "real", "imag",
         "conj", "conjugate", "sinc", "round", "around"]
_DOMAIN = {"log": (0.5, 5), "log2": (0.5, 5), "log10": (0.5, 5), "log1p": (0, 5),
           "sqrt": (0, 5), "arcsin": (-1, 1), "arccos": (-1, 1), "acos": (-1, 1),
           "arctanh": (-0.9, 0.9), "arccosh": (1, 5), "reciprocal": (1, 5)}
_NO_BOOL = {"negative", "sign", "round", "around"}
_INT_ONLY = {"invert"}


@pytest.mark.parametrize("name", UNARY)
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
       dtype=st.sampled_from(["float32", "int32", "bool", "float16", "uint8", "int8"]),
       seed=st.integers(0, 2 ** 16))
def test_unary_ufuncs(name, shape, dtype, seed):
    if dtype == "bool" and name in _NO_BOOL:
        return
    if name in _INT_ONLY and dtype.startswith("float"):
        return
    low, high = _DOMAIN.get(name, (-3, 3))
    if dtype in ("int32", "int8", "uint8", "bool") and name in _DOMAIN:
        low, high = max(int(np.ceil(low)), 1), max(int(high), 1)
    x = sample(np.random.default_rng(seed), shape, dtype, low=low, high=high)
    check_vs_jax(getattr(jnp, name), getattr(jnp_ref, name), [x])


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
          "mod", "fmod", "power", "maximum", "minimum", "fmax", "fmin", "equal", "not_equal",
          "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
          "right_shift", "arctan2", "hypot", "copysign", "logaddexp", "heaviside", "nextafter",
          "float_power"]
_FLOAT_ONLY = {"arctan2", "hypot", "copysign", "logaddexp", "heaviside", "nextafter"}
_INT_OR_BOOL = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
_NONZERO_DIVISOR = {"floor_divide", "remainder", "mod", "fmod", "divide", "true_divide"}


@pytest.mark.parametrize("name", BINARY)
@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       dtypes=st.sampled_from([("float32", "float32"), ("int32", "int32"), ("int8", "uint8"),
                               ("float16", "int32"), ("int32", "float32"), ("bool", "int8"),
                               ("bfloat16", "float16")]),
       seed=st.integers(0, 2 ** 16))
def test_binary_ufuncs(name, shapes, dtypes, seed):
    is_float = [d.startswith(("float", "bfloat")) for d in dtypes]
    if name in _INT_OR_BOOL and any(is_float):
        return
    if name == "subtract" and dtypes == ("bool", "bool"):
        return
    rng = np.random.default_rng(seed)
    lo2 = 1 if name in _NONZERO_DIVISOR | {"power", "float_power", "left_shift",
                                           "right_shift"} else -4
    hi2 = 3 if name in ("power", "left_shift", "right_shift") else 4
    x = sample(rng, shapes.input_shapes[0], dtypes[0], low=-4 if name != "float_power" else 1)
    y = sample(rng, shapes.input_shapes[1], dtypes[1], low=lo2, high=hi2)
    if name in _NONZERO_DIVISOR and y.dtype == np.bool_:
        y = np.ones_like(y)
    tol = 1e-2 if "float16" in dtypes or "bfloat16" in dtypes else None
    check_vs_jax(getattr(jnp, name), getattr(jnp_ref, name), [x, y], rtol=tol, atol=tol)


SCALARS = [2, 2.5, -3, True]
SCALAR_OPS = ["add", "multiply", "power", "floor_divide", "remainder", "maximum", "less",
              "where_like"]
SCALAR_DTYPES = ["float16", "int8", "uint8"]


def _scalar_case_runs(name, scalar, dtype):
    if dtype.startswith("uint") and isinstance(scalar, int) and scalar < 0:
        return False
    if name == "power" and dtype.startswith(("int", "uint")) and (
            isinstance(scalar, float) or scalar < 0):
        return False
    return True


def _scalar_input(dtype):
    return sample(np.random.default_rng(0), (3,), dtype, low=1, high=4)


def _scalar_cases():
    """jax's side of every case below: (name, scalar index, dtype, operand order) -> the
    function of the array operand (the scalar stays a Python constant, as in eager)."""
    cases = {}
    for name in SCALAR_OPS:
        for i, scalar in enumerate(SCALARS):
            for dtype in SCALAR_DTYPES:
                if not _scalar_case_runs(name, scalar, dtype):
                    continue
                x = [ref(_scalar_input(dtype))]
                if name == "where_like":
                    cases[name, i, dtype, 0] = (
                        lambda a, scalar=scalar: jnp_ref.where(a > 2, a, scalar), x)
                    continue
                rfn = getattr(jnp_ref, name)
                cases[name, i, dtype, 0] = (lambda a, rfn=rfn, scalar=scalar: rfn(a, scalar), x)
                cases[name, i, dtype, 1] = (lambda a, rfn=rfn, scalar=scalar: rfn(scalar, a), x)
    return cases


# jax's values (and weak types, which jit outputs keep) for the whole table in one jitted
# program (tests/suiteb_util.py) rather than eager jax's compiles per case
_SCALAR_ORACLE = JaxTable(_scalar_cases, as_numpy=False)


@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("name", SCALAR_OPS)
@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_binary_with_python_scalars(name, scalar, dtype):
    if not _scalar_case_runs(name, scalar, dtype):
        return
    i = next(k for k, s in enumerate(SCALARS) if s is scalar)
    want = _SCALAR_ORACLE()
    x = _scalar_input(dtype)
    if name == "where_like":
        check_vs_jax_value(lambda a: jnp.where(a > 2, a, scalar), [x], want[name, i, dtype, 0])
        return
    fn = getattr(jnp, name)
    check_vs_jax_value(lambda a: fn(a, scalar), [x], want[name, i, dtype, 0], rtol=1e-2,
                       atol=1e-2)
    check_vs_jax_value(lambda a: fn(scalar, a), [x], want[name, i, dtype, 1], rtol=1e-2,
                       atol=1e-2)


# --- reductions --------------------------------------------------------------------------------

@st.composite
def array_and_axis(draw, min_dims=0):
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=3))
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1) if nd else st.none(),
                          st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple)
                          if nd else st.none()))
    return shape, axis


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "ptp",
              "count_nonzero", "nansum", "amax"]


@pytest.mark.parametrize("name", REDUCTIONS)
@SETTINGS
@given(sa=array_and_axis(), keepdims=st.booleans(),
       dtype=st.sampled_from(["float32", "int32", "bool", "int8", "uint8", "float16"]),
       seed=st.integers(0, 2 ** 16))
def test_reductions(name, sa, keepdims, dtype, seed):
    shape, axis = sa
    if dtype == "bool" and name in ("ptp", "var", "std", "mean"):
        return
    x = sample(np.random.default_rng(seed), shape, dtype, low=-3, high=3)
    tol = 1e-2 if dtype == "float16" else 1e-5
    check_vs_jax(lambda a: getattr(jnp, name)(a, axis=axis, keepdims=keepdims),
                 lambda a: getattr(jnp_ref, name)(a, axis=axis, keepdims=keepdims), [x],
                 rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
@SETTINGS
@given(sa=array_and_axis(min_dims=1), dtype=st.sampled_from(["float32", "int8", "bool"]),
       seed=st.integers(0, 2 ** 16))
def test_arg_and_cumulative(name, sa, dtype, seed):
    shape, axis = sa
    if isinstance(axis, tuple):
        axis = axis[0] if axis else None
    x = sample(np.random.default_rng(seed), shape, dtype, low=-3, high=3)
    check_vs_jax(lambda a: getattr(jnp, name)(a, axis=axis),
                 lambda a: getattr(jnp_ref, name)(a, axis=axis), [x])
