"""Slicing primitives: static slices, dynamic (traced-start) slices and updates, gather.

The scatter family (scatter, scatter_add, ...) is in yax/primitives/scatter.py, with the two rules
of these primitives that are scatters (gather's transpose, batched dynamic_update_slice).

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
from yax.core.avals import ShapedArray, TypedScalar
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero, instantiate, zeros_like_aval
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._checks import same_dtypes
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import checked_by, index_check, without_nan_check
from yax.runtime.values import aval_of

ir = mlir.ir


# --- slice(x, start_indices, limit_indices, strides) ----------------------------------------------

def _slice_in_bounds(s, lim, d) -> bool:
    try:
        return 0 <= s <= lim <= d
    except errors.ExportError:  # a symbolic size (yax.export): static bounds taken as within it
        return True


def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    strides = (1,) * x.ndim if strides is None else strides
    where = (f"slice of {x.str_short()} with start_indices {start_indices}, limit_indices "
             f"{limit_indices}, strides {strides}")
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise errors.ShapeError(f"{where}: each needs one entry per operand axis ({x.ndim})")
    shape = []
    for axis, (s, lim, st, d) in enumerate(zip(start_indices, limit_indices, strides, x.shape,
                                               strict=True)):
        if not _slice_in_bounds(s, lim, d):
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


# --- differentiation and batching rules -----------------------------------------------------------
# Slices, gathers and scatter/scatter_add are linear in their array operands (jointly), never in
# their integer indices, which stay fixed: the JVP applies the primitive to the tangents, and the
# transposes pair up as slice <-> pad, dynamic_slice <-> dynamic_update_slice, gather <->
# scatter_add. Batched indices turn dynamic slices into gathers/scatters with batching dims.

_MODE = GatherScatterMode


def _shift(axes) -> tuple:
    """Axis params once a batch axis sits in front."""
    return tuple(a + 1 for a in axes)


def _zero_tangent(out):
    return Zero(aval_of(out).strip_weak_type())


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
    prim.define(jvp=jvp)


# checkify: the start indices of every window must fit in the operand
def _gather_bounds(error, args, outs):
    operand, dn = error.eqn.inputs[0].aval, error.eqn.params["dimension_numbers"]
    sizes, dims = error.eqn.params["slice_sizes"], list(dn.start_index_map)
    return index_check(error, dims, [operand.shape[d] - sizes[d] for d in dims],
                       [operand.shape[d] for d in dims], args[1])


def _window_bounds(first_start: int, window):
    def check(error, args, outs):
        operand, starts = error.eqn.inputs[0].aval, args[first_start:]
        if not starts:
            return error
        size = window(error.eqn)
        stacked = lax.concatenate([lax.reshape(lax.convert_element_type(s, np.int32), (1,))
                                   for s in starts], 0)
        return index_check(error, list(range(operand.ndim)),
                           [operand.shape[d] - size[d] for d in range(operand.ndim)],
                           list(operand.shape), stacked)
    return check


# slice
def _slice_transpose(cts, x, *, start_indices, limit_indices, strides):
    ct, = cts
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    config = []
    for start, size, stride, n in zip(start_indices, shape, strides, aval_of(ct).shape,
                                      strict=True):
        extent = (n - 1) * stride + 1 if n else 0  # from the first to the last taken element
        config.append((start, size - start - extent, stride - 1))
    return [lax.pad(ct, 0, config)]


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    x = move_batch_axis(args[0], dims[0], 0, None)
    size = aval_of(x).shape[0]
    strides = None if strides is None else (1,) + tuple(strides)
    return [slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                         limit_indices=(size,) + tuple(limit_indices), strides=strides)], [0]


slice_p = Primitive("slice", abstract_eval=_slice_abstract_eval, lower=_slice_lower,
                    transpose=_slice_transpose, batch=_slice_batch)
_jvp_linear_in(slice_p, (0,))


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
    dt = aval_of(starts[0]).dtype if starts else np.dtype(np.int32)
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
    upd_aval = aval_of(update) if not is_undefined(update) else update.aval
    ct_x = ct_update = None
    if is_undefined(x):  # the overwritten block does not reach the output
        zeros = zeros_like_aval(upd_aval.strip_weak_type())
        ct_x = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *starts, slice_sizes=upd_aval.shape)
    return [ct_x, ct_update] + [None] * len(starts)


dynamic_slice_p = Primitive(
    "dynamic_slice", abstract_eval=_dynamic_slice_abstract_eval, lower=_dynamic_slice_lower,
    transpose=_dynamic_slice_transpose, batch=_dynamic_slice_batch,
    checkify=checked_by(_window_bounds(1, lambda eqn: eqn.params["slice_sizes"]),
                        nan_check=False))
_jvp_linear_in(dynamic_slice_p, (0,))


# at per-example starts its batching rule is a scatter
# (scatters are reached through the `lax` proxy when the rule runs: scatter.py sits above this
# module, which it builds on)
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
    return lax.scatter_p.batch([x, indices, update], [0, 0, 0], dimension_numbers=dn,
                               indices_are_sorted=True, unique_indices=True, mode=_MODE.CLIP)


dynamic_update_slice_p = Primitive(
    "dynamic_update_slice", abstract_eval=_dynamic_update_slice_abstract_eval,
    lower=_dynamic_update_slice_lower, transpose=_dynamic_update_slice_transpose,
    batch=_dynamic_update_slice_batch,
    checkify=checked_by(_window_bounds(2, lambda eqn: eqn.inputs[1].aval.shape),
                        nan_check=False))
_jvp_linear_in(dynamic_update_slice_p, (0, 1))


# gather
def _gather_jvp(primals, tangents, **params):
    (x, indices), (x_dot, _) = primals, tangents
    out = gather_p.bind(x, indices, **params)
    if type(x_dot) is Zero:
        return [out], [_zero_tangent(out)]
    # windows that are filled take no value from the operand: their tangent is 0, not the fill
    fill = 0 if params["mode"] == _MODE.FILL_OR_DROP else None
    return [out], [gather_p.bind(x_dot, indices, **{**params, "fill_value": fill})]


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


# its transpose is a scatter_add
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
    return [lax.scatter_add_p.bind(zeros, indices, ct, dimension_numbers=sdn,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode), None]


gather_p = Primitive("gather", abstract_eval=_gather_abstract_eval, lower=_gather_lower,
                     jvp=_gather_jvp, transpose=_gather_transpose, batch=_gather_batch,
                     checkify=checked_by(_gather_bounds, nan_check=False))

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
slice_p.define(checkify=without_nan_check)
