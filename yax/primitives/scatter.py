"""The scatter family: scatter, scatter_add, scatter_mul, scatter_min, scatter_max.

`scatter*(operand, indices, updates, dimension_numbers, ...)` is the inverse of gather (see
yax/primitives/slicing.py for the index layout): each update window is combined into the operand
at its start, by the table's combiner. Out-of-bounds windows follow `mode`: CLIP clamps the start,
FILL_OR_DROP skips the window (XLA's own behaviour), PROMISE_IN_BOUNDS trusts the caller.
All rules of the family (abstract eval, lowering, JVP, transpose, batching) are here.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero, add_tangents, zeros_like_aval
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._checks import dtype_kind_check, same_dtypes
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import checked_by, index_check
from yax.primitives.slicing import (
    _MODE,
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    _check_batching,
    _check_index_map,
    _clamp_indices,
    _jvp_linear_in,
    _shift,
    _sorted_axes,
    _zero_tangent,
    gather_p,
)
from yax.runtime.values import aval_of

ir = mlir.ir

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


# checkify: the start indices of every update window must fit in the operand
def _scatter_bounds(error, args, outs):
    operand, updates = error.eqn.inputs[0].aval, error.eqn.inputs[2].aval
    dn = error.eqn.params["dimension_numbers"]
    sizes = _scatter_window_sizes(operand, updates, dn)
    dims = list(dn.scatter_dims_to_operand_dims)
    return index_check(error, dims, [operand.shape[d] - sizes[d] for d in dims],
                       [operand.shape[d] for d in dims], args[1])


SCATTER_TABLE = [
    # name, combiner (current value, update) -> new value
    ("scatter", lambda old, new: new),
    ("scatter_add", hlo.add),
    ("scatter_mul", hlo.multiply),
    ("scatter_min", hlo.minimum),
    ("scatter_max", hlo.maximum),
]

scatter_primitives = {name: Primitive(name, abstract_eval=_scatter_abstract_eval(name),
                                      lower=_scatter_lower(combine),
                                      checkify=checked_by(_scatter_bounds))
                      for name, combine in SCATTER_TABLE}
scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p = (
    scatter_primitives[name] for name, _ in SCATTER_TABLE)


# --- differentiation and batching rules -------------------------------------------------------

# scatter family: shared helpers
def _gather_windows(y, indices, upd_aval, dn, mode):
    """For each update entry, the entry of `y` (operand-shaped) it is scattered onto; entries of
    windows the scatter drops read 0."""
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    sizes = tuple(_scatter_window_sizes(aval_of(y), upd_aval, dn))
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
    _prim.define(batch=_scatter_batch(_prim))


# scatter_add
def _scatter_add_transpose(cts, x, indices, updates, *, dimension_numbers, indices_are_sorted,
                           unique_indices, mode):
    ct, = cts
    ct_updates = None
    if is_undefined(updates):
        ct_updates = _gather_windows(ct, indices, updates.aval, dimension_numbers, mode)
    return [ct if is_undefined(x) else None, None, ct_updates]


_jvp_linear_in(scatter_add_p, (0, 2))
scatter_add_p.define(transpose=_scatter_add_transpose)


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
    upd_aval = updates.aval if is_undefined(updates) else aval_of(updates)
    ct_x = ct_updates = None
    if is_undefined(x):  # overwritten entries do not reach the output
        zeros = zeros_like_aval(upd_aval.strip_weak_type())
        ct_x = scatter_p.bind(ct, indices, zeros, **params)
    if is_undefined(updates):
        ct_updates = _gather_windows(ct, indices, upd_aval, dn, mode)
        if not unique_indices:  # (a NaN/inf cotangent on a losing entry would leak through)
            x_aval = x.aval if is_undefined(x) else aval_of(x)
            ct_updates = lax.mul(ct_updates, _winner_mask(x_aval, indices, upd_aval, dn, mode,
                                                          aval_of(ct).dtype))
    return [ct_x, None, ct_updates]


_jvp_linear_in(scatter_p, (0, 2))
scatter_p.define(transpose=_scatter_transpose)


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
    dt = aval_of(upd_dot).dtype
    zeros = zeros_like_aval(ShapedArray(aval_of(x).shape, dt))
    if params["unique_indices"]:  # no other update reaches the entry
        return lax.mul(x, scatter_add(zeros, indices, upd_dot))
    return lax.mul(x, scatter_add(zeros, indices, lax.mul(upd_dot, _exclusive_products(
        x, indices, updates, dn, params["mode"]))))


def _exclusive_products(x, indices, updates, dn, mode):
    """For each update entry, the product of the other update entries scattered onto the same
    operand entry. Dividing the full product by the entry itself fails at zeros, so zeros are
    counted apart: the product of the nonzero updates is exact, and a zero entry's exclusive
    product is it when the entry is the only zero there (0 when there are more)."""
    dt = aval_of(updates).dtype
    params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                  mode=mode)
    upd_aval, x_shape = aval_of(updates), aval_of(x).shape

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


scatter_mul_p.define(jvp=_scatter_mul_jvp, transpose=_scatter_mul_transpose)


# scatter_min / scatter_max: the tangent of each output entry is the mean of the tangents of the
# values that reach it (the operand's and the updates' entries equal to the result), as in JAX
def _scatter_extremum_jvp(prim):
    def jvp(primals, tangents, *, dimension_numbers, **params):
        (x, indices, updates), (x_dot, _, upd_dot) = primals, tangents
        dn, mode = dimension_numbers, params["mode"]
        out = prim.bind(x, indices, updates, dimension_numbers=dn, **params)
        if type(x_dot) is Zero and type(upd_dot) is Zero:
            return [out], [_zero_tangent(out)]
        dt = aval_of(out).dtype
        upd_aval = aval_of(updates)
        x_wins = lax.convert_element_type(lax.eq(x, out), dt)
        upd_reached = _gather_windows(out, indices, upd_aval, dn, mode)
        upd_wins = lax.convert_element_type(lax.eq(updates, upd_reached), dt)
        zeros = zeros_like_aval(ShapedArray(aval_of(x).shape, dt))
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


scatter_min_p.define(jvp=_scatter_extremum_jvp(scatter_min_p))
scatter_max_p.define(jvp=_scatter_extremum_jvp(scatter_max_p))


# a plain scatter only moves data (its combining siblings can make a NaN: inf - inf)
scatter_p.define(checkify=checked_by(_scatter_bounds, nan_check=False))
