"""Reduction primitives (reduce_*, argmax/argmin, cum*) against NumPy, eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yax
from tests.harness import check_eager_and_jit
from yax import lax

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

DTYPES_32 = [np.float32, np.int32, np.bool_, np.float16, np.uint8]
DTYPES_64 = [np.float64, np.int64]


def dtypes_for(x64_on: bool, allowed=None) -> list:
    pool = DTYPES_32 + (DTYPES_64 if x64_on else [])
    return [d for d in pool if allowed is None or np.dtype(d).kind in allowed]


def values(seed: int, shape, dtype, nan: bool = False) -> np.ndarray:
    """Small integers (exact in every dtype, many ties), optionally with NaNs for floats."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if dtype.kind == "u" else -3
    x = rng.integers(lo, 4, shape).astype(dtype)
    if nan and dtype.kind == "f" and x.size:
        x[rng.random(shape) < 0.2] = np.nan
    return x


shapes = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple)


def _identity(name: str, dtype):
    dtype = np.dtype(dtype)
    if name in ("max", "min"):
        if dtype == np.bool_:
            return name == "min"
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
        big = np.inf if dtype.kind == "f" else info.max
        small = -np.inf if dtype.kind == "f" else info.min
        return small if name == "max" else big
    if name == "and":
        return True if dtype == np.bool_ else ~np.zeros((), dtype)
    return 0 if name in ("sum", "or") else 1


NUMPY_REDUCE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                "and": np.bitwise_and, "or": np.bitwise_or}
REDUCE_KINDS = {"sum": "fiu", "prod": "fiu", "max": "fiub", "min": "fiub", "and": "iub",
                "or": "iub"}


def numpy_reduce(name, x, axes):
    ufunc = NUMPY_REDUCE[name]
    return ufunc.reduce(x, axis=axes, dtype=x.dtype,
                        initial=np.asarray(_identity(name, x.dtype), x.dtype))


@pytest.mark.parametrize("name", list(NUMPY_REDUCE))
@SETTINGS
@given(data=st.data())
def test_reduce(x64_mode, name, data):
    shape = data.draw(shapes, "shape")
    dtype = data.draw(st.sampled_from(dtypes_for(x64_mode, REDUCE_KINDS[name])), "dtype")
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, max(len(shape) - 1, 0)),
                                          max_size=len(shape)), "axes")))
    x = values(data.draw(st.integers(0, 2**16)), shape, dtype, nan=name in ("max", "min"))
    fun = getattr(lax, f"reduce_{name}")
    check_eager_and_jit(lambda a: fun(a, axes), [x], numpy_reduce(name, x, axes))


def test_reduce_over_no_axes_binds_nothing():
    x = np.ones((2, 3), np.float32)
    jaxpr = yax.make_jaxpr(lambda a: lax.reduce_sum(a, ()))(x)
    assert not jaxpr.eqns
    check_eager_and_jit(lambda a: lax.reduce_max(a, ()), [x], x)


def test_reduce_negative_axes_and_nan_propagation():
    x = np.array([[1.0, np.nan], [3.0, 4.0]], np.float32)
    check_eager_and_jit(lambda a: lax.reduce_max(a, (-1,)), [x], np.array([np.nan, 4.0],
                                                                           np.float32))
    check_eager_and_jit(lambda a: lax.reduce_min(a, (0,)), [x], np.array([1.0, np.nan],
                                                                          np.float32))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@SETTINGS
@given(data=st.data())
def test_arg_reduce(x64_mode, name, data):
    shape = data.draw(nonempty_shapes, "shape")
    dtype = data.draw(st.sampled_from(dtypes_for(x64_mode)), "dtype")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    index_pool = [np.int32, np.uint8] + ([np.int64] if x64_mode else [])
    index_dtype = data.draw(st.sampled_from(index_pool), "index_dtype")
    x = values(data.draw(st.integers(0, 2**16)), shape, dtype, nan=True)
    want = getattr(np, name)(x, axis=axis).astype(index_dtype)
    fun = getattr(lax, name)
    check_eager_and_jit(lambda a: fun(a, axis, index_dtype), [x], want)


def test_argmax_nan_and_ties_pick_first():
    x = np.array([[1.0, 5.0, 5.0, np.nan, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf, 0]],
                 np.float32)
    check_eager_and_jit(lambda a: lax.argmax(a, 1, np.int32), [x], np.array([3, 4], np.int32))
    check_eager_and_jit(lambda a: lax.argmin(a, 1, np.int32), [x], np.array([3, 0], np.int32))


def numpy_cumulative(name, x, axis, reverse):
    ufunc = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
             "cummin": np.minimum}[name]
    if x.dtype == np.bool_ and name in ("cumsum", "cumprod"):
        ufunc = np.logical_or if name == "cumsum" else np.logical_and
    if reverse:
        x = np.flip(x, axis)
    out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@SETTINGS
@given(data=st.data())
def test_cumulative(x64_mode, name, data):
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple), "shape")
    dtype = data.draw(st.sampled_from(dtypes_for(x64_mode)), "dtype")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    reverse = data.draw(st.booleans(), "reverse")
    x = values(data.draw(st.integers(0, 2**16)), shape, dtype, nan=name in ("cummax", "cummin"))
    if name == "cumprod" and x.dtype.kind in "iu":
        x = np.clip(x, -2, 2).astype(dtype)  # keep products within range
    fun = getattr(lax, name)
    want = numpy_cumulative(name, x, axis % len(shape), reverse)
    check_eager_and_jit(lambda a: fun(a, axis=axis, reverse=reverse), [x], want)


def test_cumsum_bool_and_int_large_axis():
    x = np.arange(100, dtype=np.int32)
    check_eager_and_jit(lambda a: lax.cumsum(a), [x], np.cumsum(x, dtype=np.int32))
    b = np.array([False, False, True, False])
    check_eager_and_jit(lambda a: lax.cumsum(a, reverse=True), [b],
                        np.array([True, True, True, False]))


# --- errors at trace time --------------------------------------------------------------------

def _raises(exc, fun, *args, match=None):
    with pytest.raises(exc, match=match) as info:
        yax.make_jaxpr(fun)(*args)
    assert isinstance(info.value, yax.errors.YaxError)
    return str(info.value)


def test_reduce_errors():
    f32 = np.ones((2, 3), np.float32)
    msg = _raises(yax.errors.ShapeError, lambda a: lax.reduce_sum(a, (2,)), f32)
    assert "rank 2" in msg
    _raises(yax.errors.ShapeError, lambda a: lax.reduce_sum(a, (0, 0)), f32, match="repeated")
    msg = _raises(yax.errors.DTypeError, lambda a: lax.reduce_and(a, (0,)), f32)
    assert "f32[2,3]" in msg
    msg = _raises(yax.errors.DTypeError, lambda a: lax.reduce_sum(a, (0,)),
                  np.ones(3, np.bool_))
    assert "bool[3]" in msg


def test_arg_and_cumulative_errors():
    empty = np.ones((2, 0), np.float32)
    msg = _raises(yax.errors.ShapeError, lambda a: lax.argmax(a, 1, np.int32), empty)
    assert "f32[2,0]" in msg
    _raises(yax.errors.DTypeError, lambda a: lax.argmin(a, 0, np.float32),
            np.ones(3, np.float32), match="index_dtype")
    msg = _raises(yax.errors.ShapeError, lambda a: lax.cumsum(a, axis=0), np.float32(1.0))
    assert "f32[]" in msg
    _raises(yax.errors.ShapeError, lambda a: lax.cummax(a, axis=3), np.ones((2, 2), np.int32))
