"""Reduction primitives, declared as table rows (MONOID_TABLE, at the end, after the rules its
rows name): monoid reductions over axes (reduce_sum, ...), argmax/argmin, and cumulative
reductions along one axis (cumsum, ...).

A monoid reduction is `stablehlo.reduce` with a scalar region applying the binary op, started from
the op's identity. argmax/argmin reduce (value, index) pairs together so that ties and NaNs are
decided inside one reduction. A cumulative reduction at position i covers the prefix [0, i]; it is
a `stablehlo.reduce_window` whose window spans the whole axis and whose low padding (filled with the
identity) makes window i end at element i.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.primitives._ad_rules import LINEAR, table_jvp
from yax.primitives._checks import check_axes, dtype_kind_check
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import without_nan_check

ir = mlir.ir


# --- identities of the monoids ----------------------------------------------------------------

_lowest, _highest = dtypes.lowest, dtypes.highest  # identities of max and min


def _all_ones(dt):
    return True if dtypes.is_bool(dt) else ~np.zeros((), dt)  # every bit set: identity of `and`


def _identity(fn, dt) -> np.ndarray:
    return np.asarray(fn(dt), dtype=dt)


def _scalar_block(op, dtype_list):
    """Append to `op`'s first region a block taking rank-0 tensors of the given dtypes."""
    return op.regions[0].blocks.append(*[mlir.tensor_type((), dt) for dt in dtype_list])


def _reduce_region(op, dt, combine) -> None:
    block = _scalar_block(op, [dt, dt])
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])


# Cumulative ops also take bool: a running sum/max of bools is a running `or` (as NumPy's
# `np.cumsum(x, dtype=bool)`), a running product/min a running `and`; XLA's add/mul on PRED agree.
_CUMULATIVE_KIND = {"cumsum": "any", "cumprod": "any",
                    "cummax": "real_or_bool", "cummin": "real_or_bool"}


# --- reduce_<monoid>(x, axes) -------------------------------------------------------------------

def _reduce_abstract_eval(name, kind):
    def rule(x, *, axes):
        dtype_kind_check(name, x, kind)
        check_axes(name, axes, x.ndim)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return rule


def _reduce_lower(combine, identity):
    def rule(ctx, x, *, axes):
        dt = ctx.avals_in[0].dtype
        init = mlir.constant(_identity(identity, dt))
        op = hlo.ReduceOp([mlir.aval_type(ctx.avals_out[0])], [x], [init], mlir.dense_i64(axes))
        _reduce_region(op, dt, combine)
        return list(op.results)
    return rule


# --- cum<monoid>(x, axis, reverse) ---------------------------------------------------------------

def _cumulative_abstract_eval(name, kind):
    def rule(x, *, axis, reverse):
        dtype_kind_check(name, x, kind)
        if x.ndim == 0:
            raise errors.ShapeError(f"{name} needs an array of rank >= 1, got {x.str_short()}")
        check_axes(name, (axis,), x.ndim)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return rule


def _cumulative_lower(combine, identity):
    def rule(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        if aval.size == 0:  # reduce_window needs positive windows; nothing to compute anyway
            return [x]
        n = aval.shape[axis]
        window = [n if i == axis else 1 for i in range(aval.ndim)]
        # window i spans [i - n + 1, i] (or [i, i + n - 1] reversed); the padding is identity
        pads = np.zeros((aval.ndim, 2), np.int64)
        pads[axis] = (0, n - 1) if reverse else (n - 1, 0)
        init = mlir.constant(_identity(identity, aval.dtype))
        op = hlo.ReduceWindowOp([mlir.aval_type(aval)], [x], [init], mlir.dense_i64(window),
                                padding=ir.DenseIntElementsAttr.get(pads))
        _reduce_region(op, aval.dtype, combine)
        return list(op.results)
    return rule


# --- argmax / argmin(x, axes=(axis,), index_dtype) ---------------------------------------------

def _arg_abstract_eval(name):
    def rule(x, *, axes, index_dtype):
        dtype_kind_check(name, x, "real_or_bool")
        if len(axes) != 1:
            raise errors.ShapeError(f"{name} reduces exactly one axis, got axes={axes}")
        check_axes(name, axes, x.ndim)
        if not dtypes.is_int(index_dtype):
            raise errors.DTypeError(f"{name} needs an integer index_dtype, got {index_dtype}")
        if x.shape[axes[0]] == 0:
            raise errors.ShapeError(f"{name} of {x.str_short()} along axis {axes[0]}: the axis is "
                                    f"empty, so there is no index to return")
        shape = tuple(d for i, d in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, index_dtype)
    return rule


def _compare(a, b, direction, dt):
    if dtypes.is_inexact(dt):
        ctype = "FLOAT"
    else:
        ctype = "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(ctype))


def _arg_region(op, dt, idx_dt, direction) -> None:
    """Keep (a, i) over (b, j) if a beats b, or they tie and i < j; NaN beats all (as NumPy)."""
    block = _scalar_block(op, [dt, idx_dt, dt, idx_dt])
    a, i, b, j = block.arguments
    with ir.InsertionPoint(block):
        first = _compare(i, j, "LT", idx_dt)
        # comparisons with NaN are false, so `beats` and `ties` only hold between numbers
        beats = _compare(a, b, direction, dt)
        ties = _compare(a, b, "EQ", dt)
        keep_a = hlo.or_(beats, hlo.and_(ties, first))
        if dtypes.is_inexact(dt):
            a_nan, b_nan = _compare(a, a, "NE", dt), _compare(b, b, "NE", dt)
            keep_a = hlo.or_(keep_a, hlo.and_(a_nan, hlo.or_(hlo.not_(b_nan), first)))
        hlo.return_([hlo.select(keep_a, a, b), hlo.select(keep_a, i, j)])


def _arg_lower(direction, identity):
    def rule(ctx, x, *, axes, index_dtype):
        aval, out = ctx.avals_in[0], ctx.avals_out[0]
        idx = hlo.iota(mlir.tensor_type(aval.shape, index_dtype), axes[0])
        # the init index is the largest, so any real element tying with the init value wins
        inits = [mlir.constant(_identity(identity, aval.dtype)),
                 mlir.constant(_identity(_highest, np.dtype(index_dtype)))]
        types = [mlir.tensor_type(out.shape, aval.dtype), mlir.aval_type(out)]
        op = hlo.ReduceOp(types, [x, idx], inits, mlir.dense_i64(axes))
        _arg_region(op, aval.dtype, np.dtype(index_dtype), direction)
        return [op.results[1]]
    return rule


# --- differentiation and batching rules ----------------------------------------------------------

def _reduce_sum_transpose(cts, x, *, axes):
    ct, = cts
    kept = tuple(d for d in range(len(x.aval.shape)) if d not in axes)
    return [lax.broadcast_in_dim(ct, x.aval.shape, kept)]


def _shape(x) -> tuple:
    return tuple(aval_of_value(x).shape)


def _full(value, shape, dt):
    return lax.broadcast_in_dim(np.asarray(value, dt), tuple(shape), ())


def _kept(axes, ndim) -> tuple:
    return tuple(d for d in range(ndim) if d not in axes)


def _chooser_tangent(t, out, x, *, axes):
    """max/min: the tangent of the chosen element; ties share it equally (JAX's convention)."""
    shape = _shape(x)
    hit = lax.eq(x, lax.broadcast_in_dim(out, shape, _kept(axes, len(shape))))
    weight = lax.convert_element_type(hit, t.dtype)
    count = lax.broadcast_in_dim(lax.reduce_sum(weight, axes), shape, _kept(axes, len(shape)))
    # the weights depend on x only through comparisons, so they carry no derivative
    return lax.reduce_sum(lax.mul(t, lax.div(weight, count)), axes)


def _shifted(x, axis: int, by: int):
    """x moved one place along `axis` (right for by=1, left for by=-1), the vacated slot filled
    with 1: a pad that adds one element at one end and removes one at the other."""
    config = [(0, 0, 0)] * len(_shape(x))
    config[axis] = (1, -1, 0) if by > 0 else (-1, 1, 0)
    return lax.pad(x, np.asarray(1, aval_of_value(x).dtype), config)


def _reduce_prod_tangent(t, out, x, *, axes):
    """sum_j t_j prod_{k != j} x_k, one axis at a time; the products of the other elements are
    exclusive prefix times exclusive suffix products, so no division (zeros are fine)."""
    for a in sorted(axes, reverse=True):  # descending: the remaining axis numbers stay valid
        if _shape(x)[a] == 0:
            t = lax.reduce_sum(t, (a,))
        else:
            others = lax.mul(_shifted(lax.cumprod(x, a), a, 1),
                             _shifted(lax.cumprod(x, a, reverse=True), a, -1))
            t = lax.reduce_sum(lax.mul(t, others), (a,))
        x = lax.reduce_prod(x, (a,))
    return t


def _pair_grid(x, axis: int):
    """Shapes for the (i, j) grids of the cumulative rules: axis `axis` indexes the prefix end
    i (or the running k), axis + 1 the source element j. Returns the grid shape, the
    broadcast dims putting x's axis at i and at j, and the i, j index grids."""
    shape = _shape(x)
    grid = shape[:axis] + (shape[axis],) + shape[axis:]
    at_i = tuple(d if d <= axis else d + 1 for d in range(len(shape)))
    at_j = tuple(d if d < axis else d + 1 for d in range(len(shape)))
    i = lax.broadcasted_iota(np.int32, grid, axis)
    j = lax.broadcasted_iota(np.int32, grid, axis + 1)
    return grid, at_i, at_j, i, j


def _in_prefix(i, j, reverse: bool):
    """Element j takes part in the cumulative result at i."""
    return lax.ge(j, i) if reverse else lax.le(j, i)


def _cumprod_tangent(t, out, x, *, axis, reverse):
    """d out_i = sum_{j <= i} t_j prod_{k <= i, k != j} x_k, from a cumprod over an (i, j) grid
    in which x_j is replaced by 1: O(n^2) but division-free, so exact at zeros."""
    if _shape(x)[axis] == 0:
        return t
    grid, at_i, at_j, i, j = _pair_grid(x, axis)
    dt = aval_of_value(x).dtype
    skip_j = lax.select(lax.eq(i, j), _full(1, grid, dt), lax.broadcast_in_dim(x, grid, at_i))
    others = lax.cumprod(skip_j, axis, reverse=reverse)
    others = lax.select(_in_prefix(i, j, reverse), others, _full(0, grid, dt))
    return lax.reduce_sum(lax.mul(others, lax.broadcast_in_dim(t, grid, at_j)), (axis + 1,))


def _cum_chooser_tangent(t, out, x, *, axis, reverse):
    """cummax/cummin: out_i's tangent is that of the prefix elements equal to out_i, shared
    equally among ties (the reduce_max convention applied to each prefix)."""
    if _shape(x)[axis] == 0:
        return t
    grid, at_i, at_j, i, j = _pair_grid(x, axis)
    hit = lax.bitwise_and(_in_prefix(i, j, reverse),
                          lax.eq(lax.broadcast_in_dim(x, grid, at_j),
                                 lax.broadcast_in_dim(out, grid, at_i)))
    weight = lax.convert_element_type(hit, t.dtype)
    count = lax.broadcast_in_dim(lax.reduce_sum(weight, (axis + 1,)), grid, at_i)
    weight = lax.div(weight, count)
    return lax.reduce_sum(lax.mul(weight, lax.broadcast_in_dim(t, grid, at_j)), (axis + 1,))


def _cumsum_transpose(cts, x, *, axis, reverse):
    # each input element feeds every later (earlier, reversed) output: the adjoint runs backwards
    return [lax.cumsum(cts[0], axis, reverse=not reverse)]


def _reduce_batch(prim):
    """Batch rule for `axes` reductions (and argmax/argmin): renumber the axes past the batch
    axis; the batch axis moves left by the number of reduced axes in front of it."""
    def batch(args, dims, *, axes, **params):
        (x,), (bdim,) = args, dims
        moved = tuple(a if a < bdim else a + 1 for a in axes)
        out = prim.bind(x, axes=moved, **params)
        return [out], [bdim - sum(a < bdim for a in axes)]
    prim.define(batch=batch)


def _cumulative_batch(prim):
    def batch(args, dims, *, axis, reverse):
        (x,), (bdim,) = args, dims
        out = prim.bind(x, axis=axis if axis < bdim else axis + 1, reverse=reverse)
        return [out], [bdim]
    prim.define(batch=batch)


# =================================================================================================
# The family: one row per monoid, its reduction over axes and (where it has one) its cumulative
# form along one axis, each with its JVP: `rule(t, out, x, **params)`, LINEAR (the primitive
# applied to the tangent) or None (an integer/bool result carries no tangent).
# =================================================================================================

MONOID_TABLE = [
    # name, dtype kind, combining op, identity, jvp, cumulative name, cumulative jvp
    ("reduce_sum", "numeric", hlo.add, lambda dt: 0, LINEAR, "cumsum", LINEAR),
    ("reduce_prod", "numeric", hlo.multiply, lambda dt: 1, _reduce_prod_tangent,
     "cumprod", _cumprod_tangent),
    ("reduce_max", "real_or_bool", hlo.maximum, _lowest, _chooser_tangent,
     "cummax", _cum_chooser_tangent),
    ("reduce_min", "real_or_bool", hlo.minimum, _highest, _chooser_tangent,
     "cummin", _cum_chooser_tangent),
    ("reduce_and", "int_or_bool", hlo.and_, _all_ones, None, None, None),
    ("reduce_or", "int_or_bool", hlo.or_, lambda dt: 0, None, None, None),
]


def _reduction(name, abstract_eval, lower, jvp, batch_rule) -> Primitive:
    prim = Primitive(name, abstract_eval=abstract_eval, lower=lower)
    table_jvp(prim, jvp)
    batch_rule(prim)
    return prim


reduce_primitives = {
    name: _reduction(name, _reduce_abstract_eval(name, kind), _reduce_lower(combine, identity),
                     jvp, _reduce_batch)
    for name, kind, combine, identity, jvp, _, _ in MONOID_TABLE
}
cumulative_primitives = {
    cname: _reduction(cname, _cumulative_abstract_eval(cname, _CUMULATIVE_KIND[cname]),
                      _cumulative_lower(combine, identity), cjvp, _cumulative_batch)
    for _, _, combine, identity, _, cname, cjvp in MONOID_TABLE if cname is not None
}
reduce_primitives["reduce_sum"].define(transpose=_reduce_sum_transpose)
cumulative_primitives["cumsum"].define(transpose=_cumsum_transpose)
globals().update({f"{name}_p": prim for table in (reduce_primitives, cumulative_primitives)
                  for name, prim in table.items()})

argmax_p = _reduction("argmax", _arg_abstract_eval("argmax"), _arg_lower("GT", _lowest), None,
                      _reduce_batch)
argmin_p = _reduction("argmin", _arg_abstract_eval("argmin"), _arg_lower("LT", _highest), None,
                      _reduce_batch)

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
for _moves_data in (reduce_primitives["reduce_max"], reduce_primitives["reduce_min"], argmax_p,
                    argmin_p):
    _moves_data.define(checkify=without_nan_check)
