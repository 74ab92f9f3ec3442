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
globals().update({f"{name}_p": prim for name, prim in scatter_primitives.items()})
