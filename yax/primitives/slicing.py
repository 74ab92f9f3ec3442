"""Slicing primitives: static slices, dynamic (traced-start) slices and updates, gather, scatter.

In NumPy terms:
    slice(x, start, limit, strides)        x[start_0:limit_0:stride_0, ...]
    dynamic_slice(x, *starts, slice_sizes) x[s_0:s_0 + size_0, ...], each start clamped into
                                           [0, dim - size] (XLA's semantics, never out of bounds)
    dynamic_update_slice(x, u, *starts)    x with x[s_0:s_0 + u.shape[0], ...] = u, starts clamped
Gather and scatter follow XLA: the last axis of `indices` holds index vectors; the other axes are
batch ("scatter") axes. Gather's equivalent loop, for each batch position b:
    start = [0] * operand.ndim; start[start_index_map[k]] = indices[b][k] for each k
    window = operand[start_d : start_d + slice_sizes[d] for each d]
    out[b placed at the non-offset_dims axes, window axes (less collapsed ones) at offset_dims]
Scatter is the inverse: each update window is combined into the operand at its start.
Out-of-bounds indices follow `mode` (GatherScatterMode): CLIP clamps them, FILL_OR_DROP fills
(gather) or drops (scatter) any window that does not fit entirely, PROMISE_IN_BOUNDS trusts the
caller (XLA then clamps gathers; what happens to scatters is unspecified).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.primitives._checks import dtype_kind_check, same_dtypes

ir = mlir.ir


def _make(name, abstract_eval, lower) -> Primitive:
    prim = Primitive(name)
    prim.abstract_eval = abstract_eval
    prim.lower = lower
    return prim


# --- slice(x, start_indices, limit_indices, strides) ----------------------------------------------

def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    strides = (1,) * x.ndim if strides is None else strides
    where = (f"slice of {x.str_short()} with start_indices {start_indices}, limit_indices "
             f"{limit_indices}, strides {strides}")
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise errors.ShapeError(f"{where}: each needs one entry per operand axis ({x.ndim})")
    shape = []
    for axis, (s, lim, st, d) in enumerate(zip(start_indices, limit_indices, strides, x.shape,
                                               strict=True)):
        if not 0 <= s <= lim <= d:
            raise errors.ShapeError(f"{where}: axis {axis} needs 0 <= start <= limit <= {d}, got "
                                    f"start {s} and limit {lim}")
        if st < 1:
            raise errors.ShapeError(f"{where}: stride {st} on axis {axis} must be >= 1")
        shape.append(-(-(lim - s) // st))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_lower(ctx, x, *, start_indices, limit_indices, strides):
    strides = (1,) * len(start_indices) if strides is None else strides
    return [hlo.slice(x, mlir.dense_i64(start_indices), mlir.dense_i64(limit_indices),
                      mlir.dense_i64(strides))]


slice_p = _make("slice", _slice_abstract_eval, _slice_lower)


# --- dynamic_slice(x, *starts, slice_sizes) / dynamic_update_slice(x, update, *starts) ------------

def _check_starts(name: str, x, starts) -> None:
    if len(starts) != x.ndim:
        raise errors.ShapeError(f"{name} of {x.str_short()}: got {len(starts)} start indices, one "
                                f"per operand axis ({x.ndim}) is needed")
    for s in starts:
        if s.ndim != 0 or not dtypes.is_int(s.dtype):
            raise errors.DTypeError(f"{name} of {x.str_short()}: start indices must be integer "
                                    f"scalars, got {s.str_short()}")
    if starts:
        same_dtypes(f"{name} start indices", starts)


def _dynamic_slice_abstract_eval(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= d for s, d in zip(slice_sizes, x.shape)):
        raise errors.ShapeError(
            f"dynamic_slice of {x.str_short()}: slice_sizes {slice_sizes} needs one size per axis, "
            f"each between 0 and the axis size")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _dynamic_slice_lower(ctx, x, *starts, slice_sizes):
    return [hlo.dynamic_slice(x, list(starts), mlir.dense_i64(slice_sizes))]


dynamic_slice_p = _make("dynamic_slice", _dynamic_slice_abstract_eval, _dynamic_slice_lower)


def _dynamic_update_slice_abstract_eval(x, update, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    same_dtypes("dynamic_update_slice (operand and update)", [x, update])
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise errors.ShapeError(
            f"dynamic_update_slice of operand {x.str_short()} with update "
            f"{update.str_short()}: the update needs the operand's rank and no axis larger than "
            f"the operand's")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dynamic_update_slice_lower(ctx, x, update, *starts):
    return [hlo.dynamic_update_slice(x, update, list(starts))]


dynamic_update_slice_p = _make("dynamic_update_slice", _dynamic_update_slice_abstract_eval,
                               _dynamic_update_slice_lower)


# --- gather / scatter params ----------------------------------------------------------------------

class GatherScatterMode(enum.Enum):
    """How gather and scatter treat indices whose window does not fit in the operand."""

    CLIP = 1  # clamp the start so the window fits
    FILL_OR_DROP = 2  # gather: fill the window with fill_value; scatter: skip the update
    PROMISE_IN_BOUNDS = 3  # the caller promises the indices fit; no extra code is emitted

    @staticmethod
    def from_any(s) -> GatherScatterMode:
        """Accept a mode, its name ('clip', 'fill', 'drop', 'promise_in_bounds') or None."""
        if isinstance(s, GatherScatterMode):
            return s
        if s is None:  # as jax's from_any; lax.gather maps None to PROMISE_IN_BOUNDS first
            return GatherScatterMode.FILL_OR_DROP
        names = {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
                 "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
        if isinstance(s, str) and s.lower() in names:
            return names[s.lower()]
        raise ValueError(f"unknown gather/scatter mode {s!r}; use one of {sorted(names)} or a "
                         f"GatherScatterMode")


class GatherDimensionNumbers(NamedTuple):
    """Which axes of a gather do what (see the module docstring and jax.lax.gather).

    offset_dims: result axes holding the window axes (those not collapsed or batching).
    collapsed_slice_dims: operand axes whose window size is 1 and that the result drops.
    start_index_map: the operand axis each entry of an index vector starts.
    operand_batching_dims / start_indices_batching_dims: paired axes indexed together.
    """

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """Which axes of a scatter do what (see jax.lax.scatter).

    update_window_dims: axes of `updates` that are window axes.
    inserted_window_dims: operand axes with window size 1 that `updates` does not have.
    scatter_dims_to_operand_dims: the operand axis each entry of an index vector starts.
    operand_batching_dims / scatter_indices_batching_dims: paired axes indexed together.
    """

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _sorted_axes(name: str, what: str, axes, ndim: int) -> None:
    if any(not 0 <= a < ndim for a in axes) or list(axes) != sorted(set(axes)):
        raise errors.ShapeError(f"{name}: {what} {tuple(axes)} must be sorted, distinct axes in "
                                f"[0, {ndim})")


def _check_index_map(name, operand, indices, index_map, map_name, batching, batch_name) -> None:
    if indices.ndim == 0 or not dtypes.is_int(indices.dtype):
        raise errors.ShapeError(f"{name}: indices must be an integer array of rank >= 1 whose last "
                                f"axis holds index vectors, got {indices.str_short()}")
    if len(index_map) != indices.shape[-1]:
        raise errors.ShapeError(
            f"{name} of {operand.str_short()} with indices {indices.str_short()}: {map_name} "
            f"{tuple(index_map)} needs one operand axis per index-vector entry "
            f"({indices.shape[-1]})")
    if any(not 0 <= a < operand.ndim for a in index_map) or len(set(index_map)) != len(index_map):
        raise errors.ShapeError(f"{name} of {operand.str_short()}: {map_name} {tuple(index_map)} "
                                f"must be distinct operand axes")
    if set(index_map) & set(batching):
        raise errors.ShapeError(f"{name}: {map_name} {tuple(index_map)} and {batch_name} "
                                f"{tuple(batching)} must not share axes")


def _check_batching(name, operand, indices, op_dims, idx_dims, idx_name) -> None:
    _sorted_axes(name, "operand_batching_dims", op_dims, operand.ndim)
    if len(op_dims) != len(idx_dims):
        raise errors.ShapeError(f"{name}: operand_batching_dims {tuple(op_dims)} and {idx_name} "
                                f"{tuple(idx_dims)} must have equal lengths")
    if (any(not 0 <= a < indices.ndim - 1 for a in idx_dims)
            or len(set(idx_dims)) != len(idx_dims)):
        raise errors.ShapeError(f"{name}: {idx_name} {tuple(idx_dims)} must be distinct batch axes "
                                f"of indices {indices.str_short()} (not its last axis)")
    for o, i in zip(op_dims, idx_dims, strict=True):
        if operand.shape[o] != indices.shape[i]:
            raise errors.ShapeError(
                f"{name}: operand {operand.str_short()} axis {o} and indices "
                f"{indices.str_short()} axis {i} are batched together, so their sizes must match")


# --- gather(operand, indices, dimension_numbers, slice_sizes, ...) --------------------------------

def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                          unique_indices, mode, fill_value):
    name = "gather"
    dn = dimension_numbers
    where = f"gather of {operand.str_short()} with indices {indices.str_short()}"
    _check_index_map(name, operand, indices, dn.start_index_map, "start_index_map",
                     dn.operand_batching_dims, "operand_batching_dims")
    _check_batching(name, operand, indices, dn.operand_batching_dims,
                    dn.start_indices_batching_dims, "start_indices_batching_dims")
    _sorted_axes(name, "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim)
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise errors.ShapeError(f"{where}: collapsed_slice_dims and operand_batching_dims must "
                                f"not share axes")
    if len(slice_sizes) != operand.ndim or any(
            not 0 <= s <= d for s, d in zip(slice_sizes, operand.shape)):
        raise errors.ShapeError(f"{where}: slice_sizes {tuple(slice_sizes)} needs one size per "
                                f"operand axis, each between 0 and the axis size")
    for d in dn.collapsed_slice_dims + tuple(dn.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise errors.ShapeError(f"{where}: axis {d} is collapsed or batching, so its slice "
                                    f"size must be 0 or 1, got {slice_sizes[d]}")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = [s for i, s in enumerate(slice_sizes) if i not in dropped]
    batch = list(indices.shape[:-1])
    out_ndim = len(batch) + len(window)
    if len(dn.offset_dims) != len(window):
        raise errors.ShapeError(f"{where}: offset_dims {tuple(dn.offset_dims)} needs one result "
                                f"axis per window axis ({len(window)})")
    _sorted_axes(name, "offset_dims", dn.offset_dims, out_ndim)
    window_it, batch_it = iter(window), iter(batch)
    shape = [next(window_it) if i in dn.offset_dims else next(batch_it) for i in range(out_ndim)]
    if not isinstance(mode, GatherScatterMode):
        raise errors.YaxError(f"gather: mode must be a GatherScatterMode, got {mode!r}")
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _default_fill(dt):
    """jax.lax.gather's documented fill: NaN, the most negative int, the largest uint, True."""
    if dtypes.is_inexact(dt):
        return np.nan
    if dtypes.is_bool(dt):
        return True
    return dtypes.iinfo(dt).min if dtypes.is_signed_int(dt) else dtypes.iinfo(dt).max


def _compare(a, b, direction, dt):
    ctype = "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(ctype))


def _index_bounds(indices_aval, upper):
    """Constants 0 and `upper` (per index-vector entry), broadcast to the indices' shape."""
    shape, dt = indices_aval.shape, indices_aval.dtype
    lo = mlir.constant(np.zeros(shape, dt))
    # upper >= 0 is guaranteed by the shape checks (window size <= axis size)
    hi = mlir.constant(np.broadcast_to(np.asarray(upper, dt), shape))
    return lo, hi


def _clamp_indices(indices, indices_aval, upper):
    lo, hi = _index_bounds(indices_aval, upper)
    return hlo.clamp(lo, indices, hi)


def _in_bounds(indices, indices_aval, upper):
    """bool[batch]: whether every entry of each index vector lies in [0, upper]."""
    lo, hi = _index_bounds(indices_aval, upper)
    dt = indices_aval.dtype
    ok = hlo.and_(_compare(indices, lo, "GE", dt), _compare(indices, hi, "LE", dt))
    batch_type = mlir.tensor_type(indices_aval.shape[:-1], dtypes.bool_)
    init = mlir.constant(np.array(True))
    op = hlo.ReduceOp([batch_type], [ok], [init], mlir.dense_i64([indices_aval.ndim - 1]))
    scalar = mlir.tensor_type((), dtypes.bool_)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.and_(*block.arguments)])
    return op.results[0]


def _gather_lower(ctx, operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  unique_indices, mode, fill_value):
    dn = dimension_numbers
    op_aval, idx_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    upper = [op_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
    mask = None
    if mode == GatherScatterMode.FILL_OR_DROP:
        mask = _in_bounds(indices, idx_aval, upper)
    if mode != GatherScatterMode.PROMISE_IN_BOUNDS:
        indices = _clamp_indices(indices, idx_aval, upper)
    attr = hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims), collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map), index_vector_dim=idx_aval.ndim - 1)
    out = hlo.gather(operand, indices, attr, mlir.dense_i64(slice_sizes),
                     indices_are_sorted=bool(indices_are_sorted))
    if mask is None:
        return [out]
    batch_axes = [i for i in range(out_aval.ndim) if i not in dn.offset_dims]
    mask = hlo.broadcast_in_dim(mlir.tensor_type(out_aval.shape, dtypes.bool_), mask,
                                mlir.dense_i64(batch_axes))
    fill = _default_fill(out_aval.dtype) if fill_value is None else fill_value
    # a rank-0 constant broadcast: a NaN fill defeats the splat detection of `mlir.constant`
    fill = mlir.broadcast_to(mlir.constant(np.asarray(fill, out_aval.dtype)),
                             ShapedArray((), out_aval.dtype), out_aval.shape)
    return [hlo.select(mask, out, fill)]


gather_p = _make("gather", _gather_abstract_eval, _gather_lower)


# --- scatter family(operand, indices, updates, dimension_numbers, ...) ----------------------------

def _scatter_window_sizes(operand, updates, dn) -> list:
    """The window size along each operand axis (1 for inserted and batching axes)."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_it = iter(updates.shape[d] for d in dn.update_window_dims)
    return [1 if i in dropped else next(window_it) for i in range(operand.ndim)]


def _scatter_abstract_eval(name):
    def rule(operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
             mode):
        dn = dimension_numbers
        where = (f"{name} into {operand.str_short()} with indices {indices.str_short()} and "
                 f"updates {updates.str_short()}")
        same_dtypes(f"{name} (operand and updates)", [operand, updates])
        _check_index_map(name, operand, indices, dn.scatter_dims_to_operand_dims,
                         "scatter_dims_to_operand_dims", dn.operand_batching_dims,
                         "operand_batching_dims")
        _check_batching(name, operand, indices, dn.operand_batching_dims,
                        dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
        _sorted_axes(name, "update_window_dims", dn.update_window_dims, updates.ndim)
        _sorted_axes(name, "inserted_window_dims", dn.inserted_window_dims, operand.ndim)
        if set(dn.inserted_window_dims) & set(dn.operand_batching_dims):
            raise errors.ShapeError(f"{where}: inserted_window_dims and operand_batching_dims "
                                    f"must not share axes")
        n_window = operand.ndim - len(dn.inserted_window_dims) - len(dn.operand_batching_dims)
        if len(dn.update_window_dims) != n_window:
            raise errors.ShapeError(
                f"{where}: update_window_dims {tuple(dn.update_window_dims)} needs one updates "
                f"axis per operand axis that is not inserted or batching ({n_window})")
        scatter_shape = [s for i, s in enumerate(updates.shape) if i not in dn.update_window_dims]
        if scatter_shape != list(indices.shape[:-1]):
            raise errors.ShapeError(
                f"{where}: the updates axes that are not window axes have sizes "
                f"{tuple(scatter_shape)}, but must equal the indices' batch shape "
                f"{indices.shape[:-1]}")
        sizes = _scatter_window_sizes(operand, updates, dn)
        if any(s > d for s, d in zip(sizes, operand.shape, strict=True)):
            raise errors.ShapeError(f"{where}: update window sizes {tuple(sizes)} must not exceed "
                                    f"the operand's axis sizes")
        if not isinstance(mode, GatherScatterMode):
            raise errors.YaxError(f"{name}: mode must be a GatherScatterMode, got {mode!r}")
        if name in ("scatter_add", "scatter_mul"):
            dtype_kind_check(name, operand, "numeric")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)
    return rule


def _scatter_lower(combine):
    def rule(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
             unique_indices, mode):
        dn = dimension_numbers
        op_aval, idx_aval, upd_aval = ctx.avals_in
        if mode == GatherScatterMode.CLIP:
            sizes = _scatter_window_sizes(op_aval, upd_aval, dn)
            upper = [op_aval.shape[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims]
            indices = _clamp_indices(indices, idx_aval, upper)
        # FILL_OR_DROP needs no code: XLA's scatter skips any window that does not fit entirely.
        attr = hlo.ScatterDimensionNumbers.get(
            update_window_dims=list(dn.update_window_dims),
            inserted_window_dims=list(dn.inserted_window_dims),
            input_batching_dims=list(dn.operand_batching_dims),
            scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
            scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
            index_vector_dim=idx_aval.ndim - 1)
        op = hlo.ScatterOp([mlir.aval_type(op_aval)], [operand], indices, [updates], attr,
                           indices_are_sorted=bool(indices_are_sorted),
                           unique_indices=bool(unique_indices))
        scalar = mlir.tensor_type((), op_aval.dtype)
        block = op.update_computation.blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([combine(*block.arguments)])
        return list(op.results)
    return rule


SCATTER_TABLE = [
    # name, combiner (current value, update) -> new value
    ("scatter", lambda old, new: new),
    ("scatter_add", hlo.add),
    ("scatter_mul", hlo.multiply),
    ("scatter_min", hlo.minimum),
    ("scatter_max", hlo.maximum),
]

scatter_primitives = {name: _make(name, _scatter_abstract_eval(name), _scatter_lower(combine))
                      for name, combine in SCATTER_TABLE}
scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p = (
    scatter_primitives[name] for name, _ in SCATTER_TABLE)


# --- differentiation and batching rules -----------------------------------------------------------
# Slices, gathers and scatter/scatter_add are linear in their array operands (jointly), never in
# their integer indices, which stay fixed: the JVP applies the primitive to the tangents, and the
# transposes pair up as slice <-> pad, dynamic_slice <-> dynamic_update_slice, gather <->
# scatter_add. Batched indices turn dynamic slices into gathers/scatters with batching dims.
import functools  # noqa: E402
import math  # noqa: E402

from yax.core.avals import TypedScalar, aval_of_value  # noqa: E402
from yax.interpreters.ad_util import Zero, add_tangents, instantiate, zeros_like_aval  # noqa: E402
from yax.interpreters.batching import axis_size_of, move_batch_axis  # noqa: E402
from yax.interpreters.transpose import is_undefined  # noqa: E402
from yax.primitives._lax import lax  # noqa: E402

_MODE = GatherScatterMode


def _aval(x):
    return aval_of_value(x)


def _shift(axes) -> tuple:
    """Axis params once a batch axis sits in front."""
    return tuple(a + 1 for a in axes)


def _zero_tangent(out):
    return Zero(_aval(out).strip_weak_type())


def _jvp_linear_in(prim, linear: tuple) -> None:
    """JVP of a primitive linear (jointly) in the operands at positions `linear`; the other
    operands are integer indices, which have no tangent and are reused as they are."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(tangents[i]) is Zero for i in linear):
            return [out], [_zero_tangent(out)]
        args = [instantiate(t) if i in linear else p
                for i, (p, t) in enumerate(zip(primals, tangents, strict=True))]
        return [out], [prim.bind(*args, **params)]
    prim.jvp = jvp


# slice
def _slice_transpose(cts, x, *, start_indices, limit_indices, strides):
    ct, = cts
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    config = []
    for start, size, stride, n in zip(start_indices, shape, strides, _aval(ct).shape,
                                      strict=True):
        extent = (n - 1) * stride + 1 if n else 0  # from the first to the last taken element
        config.append((start, size - start - extent, stride - 1))
    return [lax.pad(ct, 0, config)]


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    x = move_batch_axis(args[0], dims[0], 0, None)
    size = _aval(x).shape[0]
    strides = None if strides is None else (1,) + tuple(strides)
    return [slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                         limit_indices=(size,) + tuple(limit_indices), strides=strides)], [0]


_jvp_linear_in(slice_p, (0,))
slice_p.transpose = _slice_transpose
slice_p.batch = _slice_batch


# dynamic_slice / dynamic_update_slice
def _dynamic_slice_transpose(cts, x, *starts, slice_sizes):
    ct, = cts
    # both primitives clamp the starts the same way, so the update lands where the slice was taken
    out = dynamic_update_slice_p.bind(zeros_like_aval(x.aval.strip_weak_type()), ct, *starts)
    return [out] + [None] * len(starts)


def _stack_starts(starts, dims, size):
    """Per-axis start scalars (some batched) as one index array of shape (size, n), batched at 0."""
    cols = [lax.broadcast_in_dim(s, (size, 1), () if d is None else (0,))
            for s, d in zip(starts, dims, strict=True)]
    return lax.concatenate(cols, 1)


def _start_zero(starts):
    dt = _aval(starts[0]).dtype if starts else np.dtype(np.int32)
    return TypedScalar(0, dt, weak_type=False)


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    (x, *starts), (x_bdim, *start_bdims) = args, dims
    size = axis_size_of(args, dims)
    if all(d is None for d in start_bdims):
        x = move_batch_axis(x, x_bdim, 0, size)
        return [dynamic_slice_p.bind(x, _start_zero(starts), *starts,
                                     slice_sizes=(size,) + tuple(slice_sizes))], [0]
    # per-example starts: a gather of one clamped window per example
    n = len(starts)
    dn = GatherDimensionNumbers(offset_dims=tuple(range(n)), collapsed_slice_dims=(),
                                start_index_map=tuple(range(n)))
    indices = _stack_starts(starts, start_bdims, size)
    return _gather_batch([x, indices], [x_bdim, 0], dimension_numbers=dn,
                         slice_sizes=tuple(slice_sizes), indices_are_sorted=False,
                         unique_indices=False, mode=_MODE.CLIP, fill_value=None)


def _dynamic_update_slice_transpose(cts, x, update, *starts):
    ct, = cts
    upd_aval = _aval(update) if not is_undefined(update) else update.aval
    ct_x = ct_update = None
    if is_undefined(x):  # the overwritten block does not reach the output
        zeros = zeros_like_aval(upd_aval.strip_weak_type())
        ct_x = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *starts, slice_sizes=upd_aval.shape)
    return [ct_x, ct_update] + [None] * len(starts)


def _dynamic_update_slice_batch(args, dims):
    (x, update, *starts), (x_bdim, upd_bdim, *start_bdims) = args, dims
    size = axis_size_of(args, dims)
    x = move_batch_axis(x, x_bdim, 0, size)
    update = move_batch_axis(update, upd_bdim, 0, size)
    if all(d is None for d in start_bdims):
        return [dynamic_update_slice_p.bind(x, update, _start_zero(starts), *starts)], [0]
    # per-example starts: a scatter of one clamped window per example
    n = len(starts)
    dn = ScatterDimensionNumbers(update_window_dims=tuple(range(n)), inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=tuple(range(n)))
    indices = _stack_starts(starts, start_bdims, size)
    return _scatter_batch(scatter_p)([x, indices, update], [0, 0, 0], dimension_numbers=dn,
                                     indices_are_sorted=True, unique_indices=True,
                                     mode=_MODE.CLIP)


_jvp_linear_in(dynamic_slice_p, (0,))
dynamic_slice_p.transpose = _dynamic_slice_transpose
dynamic_slice_p.batch = _dynamic_slice_batch
_jvp_linear_in(dynamic_update_slice_p, (0, 1))
dynamic_update_slice_p.transpose = _dynamic_update_slice_transpose
dynamic_update_slice_p.batch = _dynamic_update_slice_batch


# gather
def _gather_jvp(primals, tangents, **params):
    (x, indices), (x_dot, _) = primals, tangents
    out = gather_p.bind(x, indices, **params)
    if type(x_dot) is Zero:
        return [out], [_zero_tangent(out)]
    # windows that are filled take no value from the operand: their tangent is 0, not the fill
    fill = 0 if params["mode"] == _MODE.FILL_OR_DROP else None
    return [out], [gather_p.bind(x_dot, indices, **{**params, "fill_value": fill})]


def _gather_transpose(cts, x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                      unique_indices, mode, fill_value):
    ct, = cts
    dn = dimension_numbers
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    # XLA clamps the starts of an in-bounds-promised gather, so its transpose clamps them too
    mode = _MODE.CLIP if mode == _MODE.PROMISE_IN_BOUNDS else mode
    zeros = zeros_like_aval(x.aval.strip_weak_type())
    return [scatter_add_p.bind(zeros, indices, ct, dimension_numbers=sdn,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode), None]


def _gather_batch(args, dims, *, dimension_numbers, slice_sizes, **params):
    (x, indices), (x_bdim, idx_bdim) = args, dims
    size = axis_size_of(args, dims)
    dn = dimension_numbers
    if idx_bdim is None:  # the batch axis is one more window axis, taken whole
        x = move_batch_axis(x, x_bdim, 0, size)
        dn = GatherDimensionNumbers(
            (0,) + _shift(dn.offset_dims), _shift(dn.collapsed_slice_dims),
            _shift(dn.start_index_map), _shift(dn.operand_batching_dims),
            dn.start_indices_batching_dims)
        slice_sizes = (size,) + tuple(slice_sizes)
    elif x_bdim is None:  # one more batch axis of the indices, placed first in the result
        indices = move_batch_axis(indices, idx_bdim, 0, size)
        dn = dn._replace(offset_dims=_shift(dn.offset_dims),
                         start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
    else:  # example b's indices read example b's operand: a batching-dims pair
        x = move_batch_axis(x, x_bdim, 0, size)
        indices = move_batch_axis(indices, idx_bdim, 0, size)
        dn = GatherDimensionNumbers(
            _shift(dn.offset_dims), _shift(dn.collapsed_slice_dims), _shift(dn.start_index_map),
            (0,) + _shift(dn.operand_batching_dims),
            (0,) + _shift(dn.start_indices_batching_dims))
        slice_sizes = (1,) + tuple(slice_sizes)
    return [gather_p.bind(x, indices, dimension_numbers=dn, slice_sizes=slice_sizes,
                          **params)], [0]


gather_p.jvp = _gather_jvp
gather_p.transpose = _gather_transpose
gather_p.batch = _gather_batch


# scatter family: shared helpers
def _gather_windows(y, indices, upd_aval, dn, mode):
    """For each update entry, the entry of `y` (operand-shaped) it is scattered onto; entries of
    windows the scatter drops read 0."""
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    sizes = tuple(_scatter_window_sizes(_aval(y), upd_aval, dn))
    # a scatter that is not clamping drops windows that do not fit (XLA skips them)
    gmode = _MODE.CLIP if mode == _MODE.CLIP else _MODE.FILL_OR_DROP
    return gather_p.bind(y, indices, dimension_numbers=gdn, slice_sizes=sizes,
                         indices_are_sorted=False, unique_indices=False, mode=gmode,
                         fill_value=0 if gmode == _MODE.FILL_OR_DROP else None)


def _scatter_batch(prim):
    def batch(args, dims, *, dimension_numbers, **params):
        (x, indices, updates), (x_bdim, idx_bdim, upd_bdim) = args, dims
        size = axis_size_of(args, dims)
        dn = dimension_numbers
        x = move_batch_axis(x, x_bdim, 0, size)
        updates = move_batch_axis(updates, upd_bdim, 0, size)
        if idx_bdim is None:  # the batch axis is one more (whole) window axis
            dn = ScatterDimensionNumbers(
                (0,) + _shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                _shift(dn.scatter_dims_to_operand_dims), _shift(dn.operand_batching_dims),
                dn.scatter_indices_batching_dims)
        else:  # example b's indices write into example b's operand: a batching-dims pair
            indices = move_batch_axis(indices, idx_bdim, 0, size)
            dn = ScatterDimensionNumbers(
                _shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                _shift(dn.scatter_dims_to_operand_dims), (0,) + _shift(dn.operand_batching_dims),
                (0,) + _shift(dn.scatter_indices_batching_dims))
        return [prim.bind(x, indices, updates, dimension_numbers=dn, **params)], [0]
    return batch


for _prim in scatter_primitives.values():
    _prim.batch = _scatter_batch(_prim)


# scatter_add
def _scatter_add_transpose(cts, x, indices, updates, *, dimension_numbers, indices_are_sorted,
                           unique_indices, mode):
    ct, = cts
    ct_updates = None
    if is_undefined(updates):
        ct_updates = _gather_windows(ct, indices, updates.aval, dimension_numbers, mode)
    return [ct if is_undefined(x) else None, None, ct_updates]


_jvp_linear_in(scatter_add_p, (0, 2))
scatter_add_p.transpose = _scatter_add_transpose


# scatter: with duplicate indices one update wins each entry, and XLA picks the same winner for
# the primal and the tangent scatter (same indices), so the JVP is the scatter of the tangents.
def _winner_mask(x_aval, indices, upd_aval, dn, mode, dtype):
    """1 for each update entry a scatter keeps, 0 where a duplicate index overwrote it: every entry
    scatters its own id, and the ids read back tell which one won."""
    n = math.prod(upd_aval.shape)
    ids = lax.add(lax.reshape(lax.iota(np.int32, n), upd_aval.shape), np.int32(1))
    canvas = zeros_like_aval(ShapedArray(x_aval.shape, np.dtype(np.int32)))
    won = scatter_p.bind(canvas, indices, ids, dimension_numbers=dn, indices_are_sorted=False,
                         unique_indices=False, mode=mode)
    back = _gather_windows(won, indices, upd_aval, dn, mode)
    return lax.convert_element_type(lax.eq(back, ids), dtype)


def _scatter_transpose(cts, x, indices, updates, *, dimension_numbers, indices_are_sorted,
                       unique_indices, mode):
    ct, = cts
    dn = dimension_numbers
    params = dict(dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    upd_aval = updates.aval if is_undefined(updates) else _aval(updates)
    ct_x = ct_updates = None
    if is_undefined(x):  # overwritten entries do not reach the output
        zeros = zeros_like_aval(upd_aval.strip_weak_type())
        ct_x = scatter_p.bind(ct, indices, zeros, **params)
    if is_undefined(updates):
        ct_updates = _gather_windows(ct, indices, upd_aval, dn, mode)
        if not unique_indices:  # (a NaN/inf cotangent on a losing entry would leak through)
            x_aval = x.aval if is_undefined(x) else _aval(x)
            ct_updates = lax.mul(ct_updates, _winner_mask(x_aval, indices, upd_aval, dn, mode,
                                                          _aval(ct).dtype))
    return [ct_x, None, ct_updates]


_jvp_linear_in(scatter_p, (0, 2))
scatter_p.transpose = _scatter_transpose


# scatter_mul: linear in the operand only
def _scatter_mul_jvp(primals, tangents, **params):
    (x, indices, updates), (x_dot, _, upd_dot) = primals, tangents
    out = scatter_mul_p.bind(x, indices, updates, **params)
    t_out = _zero_tangent(out)
    if type(x_dot) is not Zero:
        t_out = scatter_mul_p.bind(x_dot, indices, updates, **params)
    if type(upd_dot) is not Zero:
        t_out = add_tangents(t_out, _scatter_mul_updates_jvp(x, indices, updates, upd_dot,
                                                             **params))
    return [out], [t_out]


def _scatter_mul_updates_jvp(x, indices, updates, upd_dot, *, dimension_numbers, **params):
    # out = x * (product of the updates reaching an entry): d out = x * sum_k u_dot_k * (product
    # of the other updates reaching that entry), so each update needs that exclusive product
    dn = dimension_numbers
    scatter_add = functools.partial(scatter_add_p.bind, dimension_numbers=dn, **params)
    dt = _aval(upd_dot).dtype
    zeros = zeros_like_aval(ShapedArray(_aval(x).shape, dt))
    if params["unique_indices"]:  # no other update reaches the entry
        return lax.mul(x, scatter_add(zeros, indices, upd_dot))
    return lax.mul(x, scatter_add(zeros, indices, lax.mul(upd_dot, _exclusive_products(
        x, indices, updates, dn, params["mode"]))))


def _exclusive_products(x, indices, updates, dn, mode):
    """For each update entry, the product of the other update entries scattered onto the same
    operand entry. Dividing the full product by the entry itself fails at zeros, so zeros are
    counted apart: the product of the nonzero updates is exact, and a zero entry's exclusive
    product is it when the entry is the only zero there (0 when there are more)."""
    dt = _aval(updates).dtype
    params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                  mode=mode)
    upd_aval, x_shape = _aval(updates), _aval(x).shape

    def full(shape, value):
        return lax.broadcast_in_dim(np.asarray(value, dt), shape, ())

    is_zero = lax.eq(updates, np.zeros((), dt))
    nonzero = lax.select(is_zero, full(upd_aval.shape, 1), updates)
    prod = scatter_mul_p.bind(full(x_shape, 1), indices, nonzero, **params)
    count = scatter_add_p.bind(full(x_shape, 0), indices, lax.convert_element_type(is_zero, dt),
                               **params)
    prod, count = (_gather_windows(v, indices, upd_aval, dn, mode) for v in (prod, count))
    none = full(upd_aval.shape, 0)
    lone_zero = lax.select(lax.eq(count, np.ones((), dt)), prod, none)
    no_zero = lax.select(lax.eq(count, np.zeros((), dt)), lax.div(prod, nonzero), none)
    return lax.select(is_zero, lone_zero, no_zero)


def _scatter_mul_transpose(cts, x, indices, updates, **params):
    if is_undefined(updates):
        raise errors.NotImplementedRuleError(
            "transposition of `scatter_mul` with respect to its updates: it is not linear in them")
    return [scatter_mul_p.bind(cts[0], indices, updates, **params), None, None]


scatter_mul_p.jvp = _scatter_mul_jvp
scatter_mul_p.transpose = _scatter_mul_transpose


# scatter_min / scatter_max: the tangent of each output entry is the mean of the tangents of the
# values that reach it (the operand's and the updates' entries equal to the result), as in JAX
def _scatter_extremum_jvp(prim):
    def jvp(primals, tangents, *, dimension_numbers, **params):
        (x, indices, updates), (x_dot, _, upd_dot) = primals, tangents
        dn, mode = dimension_numbers, params["mode"]
        out = prim.bind(x, indices, updates, dimension_numbers=dn, **params)
        if type(x_dot) is Zero and type(upd_dot) is Zero:
            return [out], [_zero_tangent(out)]
        dt = _aval(out).dtype
        upd_aval = _aval(updates)
        x_wins = lax.convert_element_type(lax.eq(x, out), dt)
        upd_reached = _gather_windows(out, indices, upd_aval, dn, mode)
        upd_wins = lax.convert_element_type(lax.eq(updates, upd_reached), dt)
        zeros = zeros_like_aval(ShapedArray(_aval(x).shape, dt))
        add = functools.partial(scatter_add_p.bind, dimension_numbers=dn, **params)
        count = lax.add(x_wins, add(zeros, indices, upd_wins))
        share = lax.div(np.ones((), dt), lax.max(count, np.ones((), dt)))
        t_out = _zero_tangent(out)
        if type(x_dot) is not Zero:
            t_out = lax.mul(x_dot, x_wins)
        if type(upd_dot) is not Zero:
            t_out = add_tangents(t_out, add(zeros, indices, lax.mul(upd_dot, upd_wins)))
        return [out], [lax.mul(t_out, share)]
    return jvp


scatter_min_p.jvp = _scatter_extremum_jvp(scatter_min_p)
scatter_max_p.jvp = _scatter_extremum_jvp(scatter_max_p)
