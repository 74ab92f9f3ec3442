"""The sort primitive against np.sort(kind='stable') and np.lexsort, eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yax
from tests.harness import check_eager_and_jit
from yax import lax

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

DTYPES_32 = [np.float32, np.int32, np.bool_, np.float16, np.uint8]
DTYPES_64 = [np.float64, np.int64]


def values(seed: int, shape, dtype) -> np.ndarray:
    """Few distinct values (many ties); floats add NaN, -NaN, +-0.0 and +-inf."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        pool = np.array([np.nan, -np.nan, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, 3.0], dtype)
        return rng.choice(pool, shape)
    return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)


shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)


def _rows(x, axis):
    """Move `axis` last and flatten the rest: one row per 1-D slice."""
    moved = np.moveaxis(x, axis, -1)
    rows = int(np.prod(moved.shape[:-1]))
    return moved.reshape(rows, moved.shape[-1]), moved.shape


def numpy_lexsort(operands, axis, num_keys):
    """Sort every operand by the first `num_keys` keys, lexicographically, stably."""
    rows = [_rows(x, axis) for x in operands]
    n_rows, moved_shape = rows[0][0].shape[0], rows[0][1]
    outs = [np.empty_like(r) for r, _ in rows]
    for i in range(n_rows):
        keys = [rows[k][0][i] for k in range(num_keys)]
        order = np.lexsort(keys[::-1])  # np.lexsort's primary key is the last one
        for out, (r, _) in zip(outs, rows, strict=True):
            out[i] = r[i][order]
    return [np.moveaxis(o.reshape(moved_shape), -1, axis) for o in outs]


@SETTINGS
@given(data=st.data())
def test_sort_one_operand(x64_mode, data):
    shape = data.draw(shapes, "shape")
    dtype = data.draw(st.sampled_from(DTYPES_32 + (DTYPES_64 if x64_mode else [])), "dtype")
    dimension = data.draw(st.integers(-len(shape), len(shape) - 1), "dimension")
    x = values(data.draw(st.integers(0, 2**16)), shape, dtype)
    want = np.sort(x, axis=dimension, kind="stable")
    check_eager_and_jit(lambda a: lax.sort(a, dimension=dimension), [x], want)


@SETTINGS
@given(data=st.data())
def test_sort_several_operands(x64_mode, data):
    shape = data.draw(shapes, "shape")
    pool = DTYPES_32 + (DTYPES_64 if x64_mode else [])
    dts = [data.draw(st.sampled_from(pool), f"dtype{i}") for i in range(3)]
    num_keys = data.draw(st.integers(1, 3), "num_keys")
    dimension = data.draw(st.integers(0, len(shape) - 1), "dimension")
    seed = data.draw(st.integers(0, 2**16))
    operands = [values(seed + i, shape, dt) for i, dt in enumerate(dts)]
    want = numpy_lexsort(operands, dimension, num_keys)
    check_eager_and_jit(lambda *ops: lax.sort(ops, dimension=dimension, num_keys=num_keys),
                        operands, tuple(want))


def test_sort_nan_and_signed_zero_order():
    x = np.array([np.nan, 1.0, -0.0, -np.nan, 0.0, -np.inf, np.inf], np.float32)
    idx = np.arange(7, dtype=np.int32)
    got_keys, got_idx = lax.sort_key_val(yax.device_put(x), yax.device_put(idx))
    np.testing.assert_array_equal(np.asarray(got_idx), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(np.asarray(got_keys), np.sort(x, kind="stable"))


def test_sort_single_returns_array_and_sequence_returns_tuple():
    x = yax.device_put(np.array([3, 1, 2], np.int32))
    assert not isinstance(lax.sort(x), (tuple, list))
    out = lax.sort([x])
    assert isinstance(out, tuple) and len(out) == 1


def test_sort_errors():
    def raises(exc, fun, *args):
        with pytest.raises(exc) as info:
            yax.make_jaxpr(fun)(*args)
        assert isinstance(info.value, yax.errors.YaxError)
        return str(info.value)

    a, b = np.ones((2, 3), np.float32), np.ones((3, 2), np.int32)
    msg = raises(yax.errors.ShapeError, lambda x, y: lax.sort((x, y)), a, b)
    assert "f32[2,3]" in msg and "i32[3,2]" in msg
    msg = raises(yax.errors.ShapeError, lambda x: lax.sort(x), np.float32(1.0))
    assert "f32[]" in msg
    raises(yax.errors.ShapeError, lambda x: lax.sort(x, dimension=2), a)
    raises(yax.errors.ShapeError, lambda x, y: lax.sort((x, y), num_keys=3), a, a)
    # complex operands sort (real part, then imaginary part) as in jax: tests/test_complex_order.py
