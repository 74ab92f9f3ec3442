"""Slicing primitives: slice and dynamic_slice/dynamic_update_slice against NumPy on drawn shapes
and dtypes; gather and the scatter family against jax.lax on a table of dimension numbers (the
NumPy indexing patterns) in every mode; trace-time errors."""

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
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
SEEDS = st.integers(0, 2**16)
FAST = settings(max_examples=15, deadline=None)
FAST_X64 = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


_values = random_values


# --- slice ----------------------------------------------------------------------------------------

@st.composite
def _slice_case(draw):
    shape = draw(SHAPES)
    start, limit, strides = [], [], []
    for d in shape:
        s = draw(st.integers(0, d))
        start.append(s)
        limit.append(draw(st.integers(s, d)))
        strides.append(draw(st.integers(1, 3)))
    return shape, tuple(start), tuple(limit), tuple(strides)


@FAST
@given(case=_slice_case(), dtype=DTYPES, seed=SEEDS, use_strides=st.booleans())
def test_slice(case, dtype, seed, use_strides):
    shape, start, limit, strides = case
    strides = strides if use_strides else None
    x = _values(seed, shape, dtype)
    want = x[tuple(np.s_[s:lim:(st_ if strides else 1)]
                   for s, lim, st_ in zip(start, limit, strides or [1] * len(shape)))]
    check_eager_and_jit(lambda a: lax.slice(a, start, limit, strides), [x], want)


@FAST
@given(data=st.data(), dtype=DTYPES, seed=SEEDS)
def test_slice_in_dim_and_index_in_dim(data, dtype, seed):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    start = data.draw(st.one_of(st.none(), st.integers(-n, n)))
    limit = data.draw(st.one_of(st.none(), st.integers(-n, n)))
    stride = data.draw(st.integers(1, 2))
    x = _values(seed, shape, dtype)
    lo = (0 if start is None else start % n if start < 0 else start)
    hi = (n if limit is None else limit % n if limit < 0 else limit)
    if hi < lo:
        return  # jax.lax.slice_in_dim needs limit >= start too
    idx = [np.s_[:]] * len(shape)
    idx[axis] = np.s_[lo:hi:stride]
    check_eager_and_jit(lambda a: lax.slice_in_dim(a, start, limit, stride, axis), [x],
                        x[tuple(idx)])
    index = data.draw(st.integers(-n, n - 1))
    keep = data.draw(st.booleans())
    want = np.take(x, [index], axis=axis) if keep else np.take(x, index, axis=axis)
    check_eager_and_jit(lambda a: lax.index_in_dim(a, index, axis, keep), [x], want)


# --- dynamic_slice / dynamic_update_slice ---------------------------------------------------------

def _clamped_starts(starts, shape, sizes):
    """XLA's rule after jax.lax's negative wrap: s < 0 -> s + d, then clamp into [0, d - size]."""
    out = []
    for s, d, z in zip(starts, shape, sizes):
        s = s + d if s < 0 else s
        out.append(min(max(s, 0), d - z))
    return out


@st.composite
def _dynamic_case(draw):
    shape = draw(SHAPES)
    sizes = tuple(draw(st.integers(0, d)) for d in shape)
    starts = tuple(draw(st.integers(-d - 2, d + 2)) for d in shape)
    kinds = tuple(draw(st.sampled_from(["python", "numpy", "array"])) for _ in shape)
    return shape, sizes, starts, kinds


def _split_args(starts, kinds, index_dtype):
    """Static starts are closed over; 'array' starts become traced arguments under jit."""
    static = [int(s) if k == "python" else np.dtype(index_dtype).type(s)
              for s, k in zip(starts, kinds)]
    dynamic_pos = [i for i, k in enumerate(kinds) if k == "array"]
    dyn_vals = [np.asarray(starts[i], index_dtype) for i in dynamic_pos]

    def merge(dyn):
        merged = list(static)
        for i, v in zip(dynamic_pos, dyn):
            merged[i] = v
        return merged
    return merge, dyn_vals


@FAST
@given(case=_dynamic_case(), dtype=DTYPES, seed=SEEDS,
       index_dtype=st.sampled_from(["int32", "int8"]))
def test_dynamic_slice(case, dtype, seed, index_dtype):
    shape, sizes, starts, kinds = case
    x = _values(seed, shape, dtype)
    s = _clamped_starts(starts, shape, sizes)
    want = x[tuple(np.s_[a:a + z] for a, z in zip(s, sizes))]
    merge, dyn = _split_args(starts, kinds, index_dtype)
    check_eager_and_jit(lambda a, *d: lax.dynamic_slice(a, merge(d), sizes), [x, *dyn], want)


@FAST
@given(case=_dynamic_case(), dtype=DTYPES, seed=SEEDS)
def test_dynamic_update_slice(case, dtype, seed):
    shape, sizes, starts, kinds = case
    x = _values(seed, shape, dtype)
    update = _values(seed + 1, sizes, dtype)
    s = _clamped_starts(starts, shape, sizes)
    want = x.copy()
    want[tuple(np.s_[a:a + z] for a, z in zip(s, sizes))] = update
    merge, dyn = _split_args(starts, kinds, "int32")
    check_eager_and_jit(lambda a, u, *d: lax.dynamic_update_slice(a, u, merge(d)),
                        [x, update, *dyn], want)


@FAST
@given(data=st.data(), dtype=DTYPES, seed=SEEDS)
def test_dynamic_in_dim_helpers(data, dtype, seed):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    index = np.int32(data.draw(st.integers(-n, n - 1)))
    size = data.draw(st.integers(0, n))
    x = _values(seed, shape, dtype)
    start = _clamped_starts([int(index)], [n], [size])[0]
    check_eager_and_jit(lambda a, i: lax.dynamic_slice_in_dim(a, i, size, axis), [x, index],
                        np.take(x, np.arange(start, start + size), axis=axis))
    check_eager_and_jit(lambda a, i: lax.dynamic_index_in_dim(a, i, axis, False), [x, index],
                        np.take(x, int(index), axis=axis))
    row = _values(seed + 1, shape[:axis] + shape[axis + 1:], dtype)
    want = x.copy()
    want[(np.s_[:],) * axis + (int(index),)] = row
    check_eager_and_jit(lambda a, r, i: lax.dynamic_update_index_in_dim(a, r, i, axis),
                        [x, row, index], want)


def test_dynamic_slice_start_array():
    """A rank-1 array of starts (as jax.lax accepts) is split into scalars."""
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    starts = np.array([1, 3], np.int32)
    check_eager_and_jit(lambda a, s: lax.dynamic_slice(a, s, (2, 2)), [x, starts], x[1:3, 3:5])


def test_dynamic_slice_whole_operand_binds_nothing():
    x = np.zeros((3, 4), np.float32)
    jaxpr = yax.make_jaxpr(lambda a, i: lax.dynamic_slice(a, (i, 0), (3, 4)))(x, np.int32(2))
    assert not [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "dynamic_slice"]
    jaxpr = yax.make_jaxpr(lambda a: lax.slice(a, (0, 0), (3, 4), (1, 1)))(x)
    assert len(jaxpr.jaxpr.eqns) == 0


@FAST_X64
@given(case=_dynamic_case(), dtype=st.sampled_from(["float64", "int64"]), seed=SEEDS)
def test_dynamic_slice_x64(x64, case, dtype, seed):
    shape, sizes, starts, kinds = case
    x = _values(seed, shape, dtype)
    s = _clamped_starts(starts, shape, sizes)
    want = x[tuple(np.s_[a:a + z] for a, z in zip(s, sizes))]
    merge, dyn = _split_args(starts, kinds, "int64")
    check_eager_and_jit(lambda a, *d: lax.dynamic_slice(a, merge(d), sizes), [x, *dyn], want)
    update = _values(seed + 1, sizes, dtype)
    want = x.copy()
    want[tuple(np.s_[a:a + z] for a, z in zip(s, sizes))] = update
    check_eager_and_jit(lambda a, u, *d: lax.dynamic_update_slice(a, u, merge(d)),
                        [x, update, *dyn], want)


# --- gather / scatter against jax.lax -------------------------------------------------------------

# name, operand shape, indices shape, (offset, collapsed, start_index_map, op_batch, idx_batch),
# slice_sizes. Scatter uses the mirrored numbers on updates of the gather's output shape.
GATHER_TABLE = [
    ("x[i]", (5, 3), (4, 1), ((1,), (0,), (0,), (), ()), (1, 3)),
    ("x[:,i]", (3, 5), (4, 1), ((0,), (1,), (1,), (), ()), (3, 1)),
    ("x[i,j]", (4, 5), (6, 2), ((), (0, 1), (0, 1), (), ()), (1, 1)),
    ("x[i] 2-D i", (5, 3), (2, 3, 1), ((2,), (0,), (0,), (), ()), (1, 3)),
    ("windows x[i:i+2]", (6, 5), (3, 1), ((1, 2), (), (0,), (), ()), (2, 5)),
    ("take_along_axis", (3, 5), (3, 4, 1), ((), (1,), (1,), (0,), (0,)), (1, 1)),
    ("x[i] of rank 3", (4, 2, 3), (5, 1), ((1, 2), (0,), (0,), (), ()), (1, 2, 3)),
]
MODES = ["clip", "fill", "promise_in_bounds"]


def _indices(seed, shape, operand_shape, index_map, slice_sizes, in_bounds):
    rng = np.random.default_rng(seed)
    idx = np.empty(shape, np.int32)
    for k, d in enumerate(index_map):
        hi = operand_shape[d] - slice_sizes[d]
        lo, top = (0, hi + 1) if in_bounds else (-3, hi + 4)
        idx[..., k] = rng.integers(lo, top, size=shape[:-1])
    return idx


def _jax():
    jax = pytest.importorskip("jax")
    return jax


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("row", GATHER_TABLE, ids=[r[0] for r in GATHER_TABLE])
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS, dtype=st.sampled_from(["float32", "int32", "uint8", "bool"]))
def test_gather_against_jax(row, mode, seed, dtype):
    jax = _jax()
    _, op_shape, idx_shape, dn_tuple, sizes = row
    x = _values(seed, op_shape, dtype)
    idx = _indices(seed, idx_shape, op_shape, dn_tuple[2], sizes, mode == "promise_in_bounds")
    want = np.asarray(jax.lax.gather(x, idx, jax.lax.GatherDimensionNumbers(*dn_tuple), sizes,
                                     mode=mode))
    dn = lax.GatherDimensionNumbers(*dn_tuple)
    check_eager_and_jit(lambda a, i: lax.gather(a, i, dn, sizes, mode=mode), [x, idx], want)


def test_gather_fill_value_and_default_mode():
    jax = _jax()
    _, op_shape, idx_shape, dn_tuple, sizes = GATHER_TABLE[0]
    x = _values(0, op_shape, "float32")
    idx = np.array([[0], [7], [-1], [4]], np.int32)
    dn, jdn = lax.GatherDimensionNumbers(*dn_tuple), jax.lax.GatherDimensionNumbers(*dn_tuple)
    want = np.asarray(jax.lax.gather(x, idx, jdn, sizes, mode="fill", fill_value=-5.0))
    assert (want[1] == -5).all()
    check_eager_and_jit(lambda a, i: lax.gather(a, i, dn, sizes, mode="fill", fill_value=-5.0),
                        [x, idx], want)
    want = np.asarray(jax.lax.gather(x, idx, jdn, sizes))  # mode None: promise (XLA clamps)
    np.testing.assert_array_equal(want[1], x[4])
    check_eager_and_jit(lambda a, i: lax.gather(a, i, dn, sizes), [x, idx], want)
    jaxpr = yax.make_jaxpr(lambda a, i: lax.gather(a, i, dn, sizes))(x, idx)
    assert jaxpr.jaxpr.eqns[0].params["mode"] is lax.GatherScatterMode.PROMISE_IN_BOUNDS


def _scatter_dn(dn_tuple, module):
    """The scatter mirror of a gather: window dims of updates are the gather's offset dims."""
    offset, collapsed, index_map, op_batch, idx_batch = dn_tuple
    return module.ScatterDimensionNumbers(offset, collapsed, index_map, op_batch, idx_batch)


SCATTERS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


@pytest.mark.parametrize("op", SCATTERS)
@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("row", GATHER_TABLE, ids=[r[0] for r in GATHER_TABLE])
@settings(max_examples=2, deadline=None)
@given(seed=SEEDS, dtype=st.sampled_from(["float32", "int32"]))
def test_scatter_against_jax(row, mode, op, seed, dtype):
    jax = _jax()
    _, op_shape, idx_shape, dn_tuple, sizes = row
    x = _values(seed, op_shape, dtype)
    idx = _indices(seed, idx_shape, op_shape, dn_tuple[2], sizes, False)
    out_shape = jax.eval_shape(lambda a, i: jax.lax.gather(
        a, i, jax.lax.GatherDimensionNumbers(*dn_tuple), sizes), x, idx).shape
    updates = _values(seed + 1, out_shape, dtype)
    if op == "scatter":
        # which duplicate wins is unspecified: keep one in-bounds index per distinct target
        unique = _unique_clip if mode == "clip" else _unique_fill
        idx = unique(idx, op_shape, dn_tuple, sizes)
    want = np.asarray(getattr(jax.lax, op)(x, idx, updates, _scatter_dn(dn_tuple, jax.lax),
                                           mode=mode))
    dn = _scatter_dn(dn_tuple, lax)
    fun = getattr(lax, op)
    check_eager_and_jit(lambda a, i, u: fun(a, i, u, dn, mode=mode), [x, idx, updates], want,
                        rtol=1e-5, atol=1e-4)


def _unique_clip(idx, op_shape, dn_tuple, sizes):
    """Clip mode: choose distinct in-bounds targets per batch group (duplicates would race)."""
    index_map, idx_batch = dn_tuple[2], dn_tuple[4]
    rng = np.random.default_rng(idx.size)
    out = idx.copy()
    ranges = [range(op_shape[d] - sizes[d] + 1) for d in index_map]
    candidates = [tuple(t) for t in np.array(np.meshgrid(*ranges, indexing="ij")).reshape(
        len(index_map), -1).T] if index_map else [()]
    groups: dict = {}
    for pos in np.ndindex(*idx.shape[:-1]):
        groups.setdefault(tuple(pos[b] for b in idx_batch), []).append(pos)
    for members in groups.values():
        if len(members) > len(candidates):
            pytest.skip("fewer in-bounds targets than indices: clipped duplicates would race")
        picks = rng.permutation(len(candidates))[:len(members)]
        for pos, p in zip(members, picks):
            out[pos] = candidates[p]
    return out


def _unique_fill(idx, op_shape, dn_tuple, sizes):
    """Fill mode: in-bounds targets must be distinct; out-of-bounds ones are dropped anyway."""
    index_map, idx_batch = dn_tuple[2], dn_tuple[4]
    out = idx.copy()
    seen = set()
    for pos in np.ndindex(*idx.shape[:-1]):
        vals = tuple(int(v) for v in out[pos])
        inb = all(0 <= v <= op_shape[d] - sizes[d] for v, d in zip(vals, index_map))
        key = (tuple(pos[b] for b in idx_batch), vals)
        if inb and key in seen:
            out[pos] = [op_shape[d] + 5 for d in index_map]
        seen.add(key)
    return out


def test_scatter_add_duplicate_indices_accumulate():
    x = np.zeros((4,), np.float32)
    idx = np.array([[1], [1], [3], [1]], np.int32)
    updates = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    check_eager_and_jit(lambda a, i, u: lax.scatter_add(a, i, u, dn), [x, idx, updates],
                        np.array([0.0, 11.0, 0.0, 4.0], np.float32))


def test_scatter_default_mode_drops_out_of_bounds():
    jax = _jax()
    x = np.arange(5, dtype=np.float32)
    idx = np.array([[1], [7], [-1], [4]], np.int32)
    updates = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
    dn, jdn = (m.ScatterDimensionNumbers((), (0,), (0,)) for m in (lax, jax.lax))
    want = np.asarray(jax.lax.scatter(x, idx, updates, jdn))
    np.testing.assert_array_equal(want, [0, 10, 2, 3, 40])
    check_eager_and_jit(lambda a, i, u: lax.scatter(a, i, u, dn), [x, idx, updates], want)


def test_dynamic_slice_narrow_index_dtype_long_axis():
    x = np.arange(300, dtype=np.float32)
    i = np.int8(-3)
    check_eager_and_jit(lambda a, s: lax.dynamic_slice(a, (s,), (2,)), [x, i], x[297:299])
    check_eager_and_jit(lambda a, s: lax.dynamic_slice(a, (s,), (2,)), [x, np.uint8(250)],
                        x[250:252])


@FAST_X64
@given(seed=SEEDS, mode=st.sampled_from(["clip", "fill"]))
def test_gather_scatter_x64(x64, seed, mode):
    jax = _jax()
    _, op_shape, idx_shape, dn_tuple, sizes = GATHER_TABLE[2]
    x = _values(seed, op_shape, "float64")
    idx = _indices(seed, idx_shape, op_shape, dn_tuple[2], sizes, False).astype(np.int64)
    want = np.asarray(jax.lax.gather(x, idx, jax.lax.GatherDimensionNumbers(*dn_tuple), sizes,
                                     mode=mode))
    dn = lax.GatherDimensionNumbers(*dn_tuple)
    check_eager_and_jit(lambda a, i: lax.gather(a, i, dn, sizes, mode=mode), [x, idx], want)
    updates = _values(seed + 1, want.shape, "float64")
    want = np.asarray(jax.lax.scatter_add(x, idx, updates, _scatter_dn(dn_tuple, jax.lax),
                                          mode=mode))
    sdn = _scatter_dn(dn_tuple, lax)
    check_eager_and_jit(lambda a, i, u: lax.scatter_add(a, i, u, sdn, mode=mode),
                        [x, idx, updates], want)


def test_gather_mode_parsing():
    assert lax.GatherScatterMode.from_any(None) is lax.GatherScatterMode.FILL_OR_DROP
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP
    with pytest.raises(ValueError, match="wrap"):
        lax.GatherScatterMode.from_any("wrap")


# --- trace-time errors ----------------------------------------------------------------------------

F34 = np.zeros((3, 4), np.float32)
I21 = np.zeros((2, 1), np.int32)
GDN = lax.GatherDimensionNumbers((1,), (0,), (0,))
SDN = lax.ScatterDimensionNumbers((1,), (0,), (0,))

ERRORS = [
    ("slice_bounds", lambda a, i: lax.slice(a, (0, 0), (4, 4)), "f32[3,4]", "limit"),
    ("slice_len", lambda a, i: lax.slice(a, (0,), (3,)), "f32[3,4]", "(3,)"),
    ("slice_stride", lambda a, i: lax.slice(a, (0, 0), (3, 4), (1, 0)), "f32[3,4]", "stride"),
    ("dynamic_slice_size", lambda a, i: lax.dynamic_slice(a, (0, 0), (2, 5)), "f32[3,4]",
     "(2, 5)"),
    ("dynamic_slice_count", lambda a, i: lax.dynamic_slice(a, (0,), (2,)), "(3, 4)", "1 start"),
    ("dus_update_too_big", lambda a, i: lax.dynamic_update_slice(
        a, lax.pad(a, 0.0, [(0, 0, 0), (0, 1, 0)]), (0, 0)), "f32[3,4]", "f32[3,5]"),
    ("gather_slice_sizes", lambda a, i: lax.gather(a, i, GDN, (1, 5)), "f32[3,4]", "(1, 5)"),
    ("gather_index_map", lambda a, i: lax.gather(
        a, i, lax.GatherDimensionNumbers((1,), (0,), (0, 1)), (1, 4)), "i32[2,1]", "(0, 1)"),
    ("gather_offset_dims", lambda a, i: lax.gather(
        a, i, lax.GatherDimensionNumbers((), (0,), (0,)), (1, 4)), "f32[3,4]", "offset_dims"),
    ("gather_collapsed_size", lambda a, i: lax.gather(
        a, i, lax.GatherDimensionNumbers((1,), (0,), (0,)), (2, 4)), "f32[3,4]", "slice size"),
    ("scatter_updates_shape", lambda a, i: lax.scatter_add(a, i, a, SDN), "f32[3,4]",
     "i32[2,1]"),
    ("scatter_window_too_big", lambda a, i: lax.scatter(
        a, i, lax.pad(a, 0.0, [(-1, 0, 0), (0, 1, 0)]), SDN), "f32[2,5]", "window sizes"),
]


@pytest.mark.parametrize("name,fun,shape_text,param_text", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_at_trace_time(name, fun, shape_text, param_text):
    with pytest.raises(yax.errors.YaxError) as info:
        yax.make_jaxpr(fun)(F34, I21)
    assert shape_text in str(info.value)
    assert param_text in str(info.value)


def test_dtype_errors():
    with pytest.raises(yax.errors.DTypeError, match="f32\\[\\]"):
        yax.make_jaxpr(lambda a, s: lax.dynamic_slice(a, (s, 0), (1, 1)))(F34, np.float32(1))
    with pytest.raises(yax.errors.DTypeError, match="f32\\[3,4\\].*i32\\[2,4\\]"):
        yax.make_jaxpr(lambda a, i, u: lax.scatter(a, i, u, SDN))(
            F34, I21, np.zeros((2, 4), np.int32))
    with pytest.raises(yax.errors.ShapeError, match="integer"):
        yax.make_jaxpr(lambda a, i: lax.gather(a, i, GDN, (1, 4)))(F34, I21.astype(np.float32))
