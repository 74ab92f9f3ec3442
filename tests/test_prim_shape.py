"""Shape primitives (broadcast_in_dim, reshape, transpose, squeeze, expand_dims, rev, concatenate,
pad, iota) against NumPy, eagerly and under jit, on drawn shapes and dtypes; plus trace-time
errors and the absence of no-op equations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import yax
from tests.harness import check_eager_and_jit, random_values
from yax import lax

DTYPES = st.sampled_from(["float32", "int32", "bool", "float16", "uint8"])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3)
NONEMPTY_SHAPES = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3)
FAST = settings(max_examples=15, deadline=None)
FAST_X64 = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


_values = random_values


SEEDS = st.integers(0, 2**16)


# --- broadcast_in_dim / broadcast / broadcast_to_rank ---------------------------------------------

@st.composite
def _broadcast_case(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    n_new = draw(st.integers(0, 4 - len(shape)))
    out_ndim = len(shape) + n_new
    dims = tuple(sorted(draw(st.permutations(range(out_ndim)))[:len(shape)]))
    out = [draw(st.integers(0, 3)) for _ in range(out_ndim)]
    for i, d in enumerate(dims):
        if shape[i] != 1 or draw(st.booleans()):
            out[d] = shape[i]
    return shape, tuple(out), dims


@FAST
@given(case=_broadcast_case(), dtype=DTYPES, seed=SEEDS)
def test_broadcast_in_dim(case, dtype, seed):
    shape, out_shape, dims = case
    x = _values(seed, shape, dtype)
    expanded = [1] * len(out_shape)
    for i, d in enumerate(dims):
        expanded[d] = shape[i]
    want = np.broadcast_to(x.reshape(expanded), out_shape)
    check_eager_and_jit(lambda a: lax.broadcast_in_dim(a, out_shape, dims), [x], want)


@FAST
@given(shape=SHAPES, sizes=st.lists(st.integers(0, 3), max_size=2), dtype=DTYPES, seed=SEEDS)
def test_broadcast_and_broadcast_to_rank(shape, sizes, dtype, seed):
    x = _values(seed, shape, dtype)
    want = np.broadcast_to(x, tuple(sizes) + shape)
    check_eager_and_jit(lambda a: lax.broadcast(a, sizes), [x], want)
    ranked = x.reshape((1,) * max(0, 5 - x.ndim) + shape)
    check_eager_and_jit(lambda a: lax.broadcast_to_rank(a, 5), [x], ranked)


# --- reshape / transpose --------------------------------------------------------------------------

@st.composite
def _reshape_case(draw):
    shape = draw(SHAPES)
    perm = draw(st.one_of(st.none(), st.permutations(range(len(shape)))))
    permuted = list(shape) if perm is None else [shape[p] for p in perm]
    # regroup the (shuffled) sizes into new axes: same element count, different shape
    sizes = draw(st.permutations(permuted))
    new, i = [], 0
    while i < len(sizes):
        k = draw(st.integers(1, len(sizes) - i))
        new.append(int(np.prod(sizes[i:i + k])))
        i += k
    if draw(st.booleans()):
        new.insert(draw(st.integers(0, len(new))), 1)
    return shape, tuple(new), None if perm is None else tuple(perm)


@FAST
@given(case=_reshape_case(), dtype=DTYPES, seed=SEEDS)
def test_reshape(case, dtype, seed):
    shape, new_sizes, perm = case
    x = _values(seed, shape, dtype)
    want = (x if perm is None else np.transpose(x, perm)).reshape(new_sizes)
    check_eager_and_jit(lambda a: lax.reshape(a, new_sizes, perm), [x], want)


def test_reshape_infers_minus_one():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    check_eager_and_jit(lambda a: lax.reshape(a, (2, -1)), [x], x.reshape(2, 6))


@FAST
@given(data=st.data(), shape=SHAPES, dtype=DTYPES, seed=SEEDS)
def test_transpose(data, shape, dtype, seed):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = _values(seed, shape, dtype)
    check_eager_and_jit(lambda a: lax.transpose(a, perm), [x], np.transpose(x, perm))


# --- squeeze / expand_dims / rev ------------------------------------------------------------------

@FAST
@given(data=st.data(), dtype=DTYPES, seed=SEEDS)
def test_squeeze(data, dtype, seed):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=2))
    ones = [i for i, d in enumerate(shape) if d == 1]
    dims = data.draw(st.lists(st.sampled_from(ones), unique=True) if ones else st.just([]))
    # negative axes count from the end, as in jax.lax.squeeze
    dims = [d - len(shape) if data.draw(st.booleans()) else d for d in dims]
    x = _values(seed, shape, dtype)
    check_eager_and_jit(lambda a: lax.squeeze(a, dims), [x], np.squeeze(x, tuple(dims)))


@FAST
@given(data=st.data(), dtype=DTYPES, seed=SEEDS)
def test_expand_dims(data, dtype, seed):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    out_ndim = len(shape) + data.draw(st.integers(0, 2))
    n_new = out_ndim - len(shape)
    dims = data.draw(st.lists(st.integers(0, out_ndim - 1), unique=True, min_size=n_new,
                              max_size=n_new) if n_new else st.just([]))
    x = _values(seed, shape, dtype)
    want = np.expand_dims(x, tuple(dims)) if dims else x
    check_eager_and_jit(lambda a: lax.expand_dims(a, dims), [x], want)


@FAST
@given(data=st.data(), shape=SHAPES, dtype=DTYPES, seed=SEEDS)
def test_rev(data, shape, dtype, seed):
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True)
                     if shape else st.just([]))
    x = _values(seed, shape, dtype)
    check_eager_and_jit(lambda a: lax.rev(a, dims), [x], np.flip(x, tuple(dims)))


# --- concatenate ----------------------------------------------------------------------------------

@FAST
@given(data=st.data(), dtype=DTYPES, seed=SEEDS)
def test_concatenate(data, dtype, seed):
    shape = data.draw(NONEMPTY_SHAPES)
    dim = data.draw(st.integers(0, len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    xs = []
    for k in range(n):
        s = list(shape)
        s[dim] = data.draw(st.integers(0, 3))
        xs.append(_values(seed + k, tuple(s), dtype))
    check_eager_and_jit(lambda *a: lax.concatenate(a, dim), xs, np.concatenate(xs, dim))


# --- pad ------------------------------------------------------------------------------------------

def _np_pad(x, value, config):
    """NumPy reference: interior padding by strided placement, then edge pad or crop."""
    shape = [d + max(d - 1, 0) * interior for d, (_, _, interior) in zip(x.shape, config)]
    out = np.full(shape, value, x.dtype)
    out[tuple(np.s_[::interior + 1] for (_, _, interior) in config)] = x
    for axis, (lo, hi, _) in enumerate(config):
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
        n = out.shape[axis]
        out = np.take(out, np.arange(max(-lo, 0), n - max(-hi, 0)), axis=axis)
    return out


@st.composite
def _pad_case(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    config = []
    for d in shape:
        interior = draw(st.integers(0, 2))
        full = d + max(d - 1, 0) * interior
        lo = draw(st.integers(-min(full, 2), 2))
        hi = draw(st.integers(-min(full + lo, 2) if full + lo > 0 else 0, 2))
        config.append((lo, hi, interior))
    return shape, config


@FAST
@given(case=_pad_case(), dtype=DTYPES, seed=SEEDS)
def test_pad(case, dtype, seed):
    shape, config = case
    x = _values(seed, shape, dtype)
    value = _values(seed + 1, (), dtype)
    check_eager_and_jit(lambda a, v: lax.pad(a, v, config), [x, value],
                        _np_pad(x, value, config))


def test_pad_python_scalar_value():
    x = np.arange(3, dtype=np.float16)
    want = np.array([7, 0, 7, 1, 7, 2, 7, 7], np.float16)
    check_eager_and_jit(lambda a: lax.pad(a, 7, [(1, 2, 1)]), [x], want)


# --- iota -----------------------------------------------------------------------------------------

@FAST
@given(shape=NONEMPTY_SHAPES, data=st.data(),
       dtype=st.sampled_from(["float32", "int32", "float16", "uint8"]))
def test_broadcasted_iota(shape, data, dtype):
    dim = data.draw(st.integers(0, len(shape) - 1))
    idx = np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))])
    want = np.broadcast_to(idx, shape).astype(dtype)
    check_eager_and_jit(lambda: lax.broadcasted_iota(dtype, shape, dim), [], want)
    check_eager_and_jit(lambda: lax.iota(dtype, shape[0]), [], np.arange(shape[0], dtype=dtype))


# --- 64-bit dtypes --------------------------------------------------------------------------------

@FAST_X64
@given(data=st.data(), dtype=st.sampled_from(["float64", "int64"]), seed=SEEDS)
def test_shape_ops_x64(x64, data, dtype, seed):
    shape = data.draw(NONEMPTY_SHAPES)
    x = _values(seed, shape, dtype)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    check_eager_and_jit(lambda a: lax.transpose(a, perm), [x], np.transpose(x, perm))
    check_eager_and_jit(lambda a: lax.reshape(lax.rev(a, (0,)), (-1,)), [x],
                        np.flip(x, 0).reshape(-1))
    check_eager_and_jit(lambda a: lax.concatenate([a, a], 0), [x], np.concatenate([x, x], 0))
    check_eager_and_jit(lambda a: lax.pad(a, np.array(5, dtype), [(1, 0, 1)] * a.ndim), [x],
                        _np_pad(x, np.array(5, dtype), [(1, 0, 1)] * x.ndim))
    check_eager_and_jit(lambda: lax.iota(dtype, 4), [], np.arange(4, dtype=dtype))


# --- trace-time errors ----------------------------------------------------------------------------

F34 = np.zeros((3, 4), np.float32)

ERRORS = [
    ("broadcast_size", lambda a: lax.broadcast_in_dim(a, (3, 5), (0, 1)), "f32[3,4]", "(3, 5)"),
    ("broadcast_dims_len", lambda a: lax.broadcast_in_dim(a, (3, 4), (0,)), "f32[3,4]", "(0,)"),
    ("broadcast_dims_order", lambda a: lax.broadcast_in_dim(a, (4, 3), (1, 0)), "f32[3,4]",
     "(1, 0)"),
    ("reshape_count", lambda a: lax.reshape(a, (5, 2)), "f32[3,4]", "(5, 2)"),
    ("reshape_dims", lambda a: lax.reshape(a, (12,), (0, 0)), "f32[3,4]", "(0, 0)"),
    ("transpose_perm", lambda a: lax.transpose(a, (0, 2)), "f32[3,4]", "(0, 2)"),
    ("squeeze_size", lambda a: lax.squeeze(a, (1,)), "f32[3,4]", "(4,)"),
    ("squeeze_range", lambda a: lax.squeeze(a, (2,)), "rank 2", "2"),
    ("expand_dims_repeat", lambda a: lax.expand_dims(a, (0, 0)), "f32[3,4]", "repeated"),
    ("rev_range", lambda a: lax.rev(a, (3,)), "rank 2", "3"),
    ("concat_sizes", lambda a: lax.concatenate([a, lax.transpose(a, (1, 0))], 0), "f32[3,4]",
     "f32[4,3]"),
    ("concat_rank", lambda a: lax.concatenate([a, lax.reshape(a, (12,))], 0), "f32[3,4]",
     "f32[12]"),
    ("pad_config_len", lambda a: lax.pad(a, 0.0, [(0, 0, 0)]), "f32[3,4]", "triples"),
    ("pad_crop", lambda a: lax.pad(a, 0.0, [(-2, -2, 0), (0, 0, 0)]), "f32[3,4]", "crops"),
    ("pad_interior", lambda a: lax.pad(a, 0.0, [(0, 0, -1), (0, 0, 0)]), "f32[3,4]",
     "interior"),
]


@pytest.mark.parametrize("name,fun,shape_text,param_text", ERRORS, ids=[e[0] for e in ERRORS])
def test_shape_errors_at_trace_time(name, fun, shape_text, param_text):
    with pytest.raises(yax.errors.ShapeError) as info:
        yax.make_jaxpr(fun)(F34)
    assert shape_text in str(info.value)
    assert param_text in str(info.value)


def test_dtype_errors():
    i32 = np.zeros((3,), np.int32)
    with pytest.raises(yax.errors.DTypeError, match="f32\\[3,4\\].*i32\\[3\\]"):
        yax.make_jaxpr(lambda a, b: lax.concatenate([a, b], 0))(F34, i32)
    with pytest.raises(yax.errors.DTypeError):
        yax.make_jaxpr(lambda a: lax.pad(a, np.int32(0), [(1, 0, 0)] * 2))(F34)
    with pytest.raises(yax.errors.DTypeError, match="bool"):
        lax.iota(np.bool_, 3)


# --- no-op equations ------------------------------------------------------------------------------

NOOPS = [
    ("reshape", lambda a: lax.reshape(a, (3, 4))),
    ("reshape_identity_dims", lambda a: lax.reshape(a, (3, 4), (0, 1))),
    ("transpose", lambda a: lax.transpose(a, (0, 1))),
    ("broadcast_in_dim", lambda a: lax.broadcast_in_dim(a, (3, 4), (0, 1))),
    ("squeeze", lambda a: lax.squeeze(a, ())),
    ("expand_dims", lambda a: lax.expand_dims(a, ())),
    ("rev", lambda a: lax.rev(a, ())),
    ("concatenate", lambda a: lax.concatenate([a], 1)),
    ("pad", lambda a: lax.pad(a, 0.0, [(0, 0, 0), (0, 0, 0)])),
    ("broadcast_to_rank", lambda a: lax.broadcast_to_rank(a, 2)),
]


@pytest.mark.parametrize("name,fun", NOOPS, ids=[n[0] for n in NOOPS])
def test_noop_has_no_equations(name, fun):
    jaxpr = yax.make_jaxpr(fun)(F34)
    assert len(jaxpr.jaxpr.eqns) == 0, str(jaxpr)


def test_ops_bind_one_equation():
    jaxpr = yax.make_jaxpr(lambda a: lax.transpose(lax.reshape(a, (4, 3)), (1, 0)))(F34)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names == ["reshape", "transpose"]
