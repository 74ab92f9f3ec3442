"""dot_general against np.einsum, and conv_general_dilated against jax.lax (the oracle)."""

from __future__ import annotations

import jax
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
LETTERS = "abcdefgh"


def values(rng, shape, dtype) -> np.ndarray:
    """Small integers: exact products and sums in every dtype (uint8 sums stay below 256)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)


@st.composite
def dot_problems(draw):
    """Random dims: (batch, contracting, lhs free, rhs free) sizes and random axis orders."""
    n_batch = draw(st.integers(0, 2))
    n_contract = draw(st.integers(0, 2))
    n_lfree = draw(st.integers(0, min(1, 4 - n_batch - n_contract)))
    n_rfree = draw(st.integers(0, min(1, 4 - n_batch - n_contract)))
    size = st.integers(0, 3)
    batch = [draw(size) for _ in range(n_batch)]
    contract = [draw(size) for _ in range(n_contract)]
    lfree = [draw(size) for _ in range(n_lfree)]
    rfree = [draw(size) for _ in range(n_rfree)]
    # logical axes: ('b', i), ('c', i), ('l', i) / ('r', i); then shuffle each side
    lhs_axes = draw(st.permutations([("b", i) for i in range(n_batch)]
                                    + [("c", i) for i in range(n_contract)]
                                    + [("l", i) for i in range(n_lfree)]))
    rhs_axes = draw(st.permutations([("b", i) for i in range(n_batch)]
                                    + [("c", i) for i in range(n_contract)]
                                    + [("r", i) for i in range(n_rfree)]))
    sizes = {"b": batch, "c": contract, "l": lfree, "r": rfree}
    return lhs_axes, rhs_axes, sizes


def _letter(axis) -> str:
    kind, i = axis
    return LETTERS["bclr".index(kind) * 2 + i]


def dot_setup(problem):
    lhs_axes, rhs_axes, sizes = problem
    lhs_shape = tuple(sizes[k][i] for k, i in lhs_axes)
    rhs_shape = tuple(sizes[k][i] for k, i in rhs_axes)

    def where(axes, kind):
        return tuple(axes.index((kind, i)) for i in range(len(sizes[kind])))
    dnums = ((where(lhs_axes, "c"), where(rhs_axes, "c")),
             (where(lhs_axes, "b"), where(rhs_axes, "b")))
    out = ([("b", i) for i in range(len(sizes["b"]))] + [a for a in lhs_axes if a[0] == "l"]
           + [a for a in rhs_axes if a[0] == "r"])
    spec = (f"{''.join(map(_letter, lhs_axes))},{''.join(map(_letter, rhs_axes))}->"
            f"{''.join(map(_letter, out))}")
    return lhs_shape, rhs_shape, dnums, spec


def numpy_dot(spec, lhs, rhs, out_dtype):
    if lhs.dtype == np.bool_ and out_dtype == np.bool_:
        return np.einsum(spec, lhs.astype(np.int32), rhs.astype(np.int32)) != 0
    return np.einsum(spec, lhs.astype(out_dtype), rhs.astype(out_dtype)).astype(out_dtype)


@SETTINGS
@given(data=st.data())
def test_dot_general(x64_mode, data):
    lhs_shape, rhs_shape, dnums, spec = dot_setup(data.draw(dot_problems(), "problem"))
    pool = DTYPES_32 + (DTYPES_64 if x64_mode else [])
    dtype = np.dtype(data.draw(st.sampled_from(pool), "dtype"))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    lhs, rhs = values(rng, lhs_shape, dtype), values(rng, rhs_shape, dtype)
    want = numpy_dot(spec, lhs, rhs, dtype)
    check_eager_and_jit(lambda a, b: lax.dot_general(a, b, dnums), [lhs, rhs], want)


@pytest.mark.parametrize("in_dtype, out_dtype", [
    (np.int8, np.int32), (np.float16, np.float32), (np.bool_, np.int32), (np.int32, np.float32),
])
def test_dot_preferred_element_type(in_dtype, out_dtype):
    rng = np.random.default_rng(0)
    lhs, rhs = values(rng, (3, 4), in_dtype), values(rng, (4, 2), in_dtype)
    if in_dtype == np.int8:
        lhs, rhs = np.full((3, 4), 100, np.int8), np.full((4, 2), -100, np.int8)
    want = lhs.astype(out_dtype) @ rhs.astype(out_dtype)
    check_eager_and_jit(lambda a, b: lax.dot(a, b, preferred_element_type=out_dtype),
                        [lhs, rhs], want)


@pytest.mark.parametrize("lhs_shape, rhs_shape", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                                  ((2, 3), (3, 4))])
def test_dot_ranks_and_precision(lhs_shape, rhs_shape):
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal(lhs_shape).astype(np.float32)
    rhs = rng.standard_normal(rhs_shape).astype(np.float32)
    check_eager_and_jit(lambda a, b: lax.dot(a, b, precision="highest"), [lhs, rhs],
                        np.dot(lhs, rhs), rtol=1e-5, atol=1e-5)


def _raises(exc, fun, *args):
    with pytest.raises(exc) as info:
        yax.make_jaxpr(fun)(*args)
    assert isinstance(info.value, yax.errors.YaxError)
    return str(info.value)


def test_dot_general_errors():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    msg = _raises(yax.errors.ShapeError, lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((),
                                                                                           ()))),
                  a, b)
    assert "f32[2,3]" in msg and "f32[4,5]" in msg and "(1,)" in msg and "(0,)" in msg
    msg = _raises(yax.errors.ShapeError,
                  lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((0,), (0,)))), a,
                  np.ones((4, 3), np.float32))
    assert "batch" in msg and "f32[2,3]" in msg
    msg = _raises(yax.errors.DTypeError, lambda x, y: lax.dot(x, y), a,
                  np.ones((3, 2), np.int32))
    assert "f32[2,3]" in msg and "i32[3,2]" in msg
    _raises(yax.errors.ShapeError, lambda x, y: lax.dot_general(x, y, (((2,), (0,)), ((), ()))),
            a, b)
    msg = _raises(yax.errors.ShapeError, lambda x, y: lax.dot(x, y),
                  np.ones((2, 2, 2), np.float32), a)
    assert "f32[2,2,2]" in msg


# --- conv_general_dilated against jax.lax ---------------------------------------------------

CONV_CASES = [
    # lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil, dimension_numbers, fgc, bgc
    ((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME", None, None, None, 1, 1),
    ((2, 3, 8, 8), (4, 3, 3, 3), (2, 2), "VALID", None, None, ("NCHW", "OIHW", "NCHW"), 1, 1),
    ((2, 7, 6, 3), (3, 2, 3, 5), (1, 2), ((1, 2), (0, 1)), None, (2, 1),
     ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((1, 5, 5, 4), (3, 3, 2, 6), (1, 1), ((1, 1), (2, 1)), (2, 2), None,
     ("NHWC", "HWIO", "NHWC"), 2, 1),
    ((2, 4, 9), (4, 1, 3), (2,), "SAME", None, (3,), ("NCH", "OIH", "NCH"), 4, 1),
    ((4, 2, 6, 6), (6, 2, 2, 2), (1, 1), "VALID", None, None, None, 1, 2),
    ((2, 3, 5, 5), (4, 3, 2, 2), (3, 2), "SAME_LOWER", None, (2, 1), None, 1, 1),
    ((2, 3, 5, 5), (4, 3, 2, 2), (3, 2), ((0, 1), (2, 0)), (1, 2), (2, 1), None, 1, 1),
    ((1, 6, 4, 2), (3, 2, 3, 2), (1, 1), ((0, 0), (2, 2)), None, None,
     ("NHWC", "OHWI", "NCHW"), 1, 1),
    ((1, 2, 4, 3, 3), (2, 2, 2, 2, 2), (1, 1, 1), "SAME", None, None, None, 1, 1),
    ((1, 2, 3), (1, 2, 5), (1,), "VALID", None, None, None, 1, 1),  # kernel larger: empty out
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[str(i) for i in range(len(CONV_CASES))])
def test_conv_general_dilated_matches_jax(case):
    lhs_shape, rhs_shape, strides, padding, ldil, rdil, dn, fgc, bgc = case
    rng = np.random.default_rng(2)
    lhs = rng.standard_normal(lhs_shape).astype(np.float32)
    rhs = rng.standard_normal(rhs_shape).astype(np.float32)
    kwargs = dict(window_strides=strides, padding=padding, lhs_dilation=ldil, rhs_dilation=rdil,
                  dimension_numbers=dn, feature_group_count=fgc, batch_group_count=bgc)
    want = np.asarray(jax.lax.conv_general_dilated(lhs, rhs, precision="highest", **kwargs))
    check_eager_and_jit(lambda a, b: lax.conv_general_dilated(a, b, precision="highest", **kwargs),
                        [lhs, rhs], want, rtol=1e-4, atol=1e-4)


def test_conv_simple_and_dimension_numbers_helper():
    rng = np.random.default_rng(3)
    lhs = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    rhs = rng.standard_normal((3, 2, 2, 2)).astype(np.float32)
    want = np.asarray(jax.lax.conv(lhs, rhs, (1, 1), "SAME"))
    check_eager_and_jit(lambda a, b: lax.conv(a, b, (1, 1), "SAME"), [lhs, rhs], want,
                        rtol=1e-4, atol=1e-4)
    for spec in [("NHWC", "HWIO", "NHWC"), ("NWHC", "HWIO", "NCWH"), ("NCHW", "OIHW", "NCHW")]:
        ours = lax.conv_dimension_numbers((1, 2, 3, 4), (2, 3, 4, 5), spec)
        theirs = jax.lax.conv_dimension_numbers((1, 2, 3, 4), (2, 3, 4, 5), spec)
        assert tuple(ours) == tuple(tuple(s) for s in theirs)
    # a ConvDimensionNumbers passes through and is hashable (it is a primitive param)
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, None)
    assert hash(dn) == hash(lax.ConvDimensionNumbers(*dn))


def test_conv_int_and_preferred_element_type():
    rng = np.random.default_rng(4)
    lhs = rng.integers(-3, 4, (1, 2, 4, 4)).astype(np.int32)
    rhs = rng.integers(-3, 4, (2, 2, 2, 2)).astype(np.int32)
    want = np.asarray(jax.lax.conv_general_dilated(lhs, rhs, (1, 1), "VALID"))
    check_eager_and_jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID"),
                        [lhs, rhs], want)
    h_lhs, h_rhs = lhs.astype(np.float16), rhs.astype(np.float16)
    want32 = np.asarray(jax.lax.conv_general_dilated(
        h_lhs, h_rhs, (1, 1), "VALID", preferred_element_type=np.float32))
    check_eager_and_jit(lambda a, b: lax.conv_general_dilated(
        a, b, (1, 1), "VALID", preferred_element_type=np.float32), [h_lhs, h_rhs], want32)


def test_conv_errors():
    lhs, rhs = np.ones((1, 3, 5, 5), np.float32), np.ones((4, 2, 3, 3), np.float32)
    msg = _raises(yax.errors.ShapeError,
                  lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID"), lhs, rhs)
    assert "f32[1,3,5,5]" in msg and "f32[4,2,3,3]" in msg
    msg = _raises(yax.errors.ShapeError,
                  lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID"), lhs,
                  np.ones((4, 3, 3, 3), np.float32))
    assert "window_strides" in msg and "f32[1,3,5,5]" in msg
    msg = _raises(yax.errors.DTypeError,
                  lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID"), lhs,
                  np.ones((4, 3, 3, 3), np.int32))
    assert "f32[1,3,5,5]" in msg and "i32[4,3,3,3]" in msg
    msg = _raises(yax.errors.ShapeError,
                  lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID",
                                                        feature_group_count=2), lhs, rhs)
    assert "feature_group_count" in msg
    _raises(yax.errors.ShapeError,
            lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID",
                                                  dimension_numbers=("NCHW", "OIHW", "NCXW")),
            lhs, rhs)
    msg = _raises(yax.errors.ShapeError,
                  lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME", lhs_dilation=(2, 2)),
                  lhs, np.ones((4, 3, 3, 3), np.float32))
    assert "explicit" in msg
