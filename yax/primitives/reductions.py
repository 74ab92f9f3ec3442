"""Reduction primitives, declared as table rows: monoid reductions over axes (reduce_sum, ...),
argmax/argmin, and cumulative reductions along one axis (cumsum, ...).

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
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.primitives._checks import check_axes, dtype_kind_check

ir = mlir.ir


# --- identities of the monoids ----------------------------------------------------------------

def _lowest(dt):
    if dtypes.is_bool(dt):
        return False
    return -np.inf if dtypes.is_inexact(dt) else dtypes.iinfo(dt).min


def _highest(dt):
    if dtypes.is_bool(dt):
        return True
    return np.inf if dtypes.is_inexact(dt) else dtypes.iinfo(dt).max


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


MONOID_TABLE = [
    # name, dtype kind, cumulative name, combining op, identity
    ("reduce_sum", "numeric", "cumsum", hlo.add, lambda dt: 0),
    ("reduce_prod", "numeric", "cumprod", hlo.multiply, lambda dt: 1),
    ("reduce_max", "real_or_bool", "cummax", hlo.maximum, _lowest),
    ("reduce_min", "real_or_bool", "cummin", hlo.minimum, _highest),
    ("reduce_and", "int_or_bool", None, hlo.and_, _all_ones),
    ("reduce_or", "int_or_bool", None, hlo.or_, lambda dt: 0),
]

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


def _make(name, abstract_eval, lower, multiple_results=False) -> Primitive:
    prim = Primitive(name, multiple_results=multiple_results)
    prim.abstract_eval = abstract_eval
    prim.lower = lower
    return prim


reduce_primitives = {
    name: _make(name, _reduce_abstract_eval(name, kind), _reduce_lower(combine, identity))
    for name, kind, _, combine, identity in MONOID_TABLE
}
globals().update({f"{name}_p": prim for name, prim in reduce_primitives.items()})


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


cumulative_primitives = {
    cname: _make(cname, _cumulative_abstract_eval(cname, _CUMULATIVE_KIND[cname]),
                 _cumulative_lower(combine, identity))
    for _, _, cname, combine, identity in MONOID_TABLE if cname is not None
}
globals().update({f"{name}_p": prim for name, prim in cumulative_primitives.items()})


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


argmax_p = _make("argmax", _arg_abstract_eval("argmax"), _arg_lower("GT", _lowest))
argmin_p = _make("argmin", _arg_abstract_eval("argmin"), _arg_lower("LT", _highest))


# --- differentiation rules -------------------------------------------------------------------
from yax.primitives._ad_rules import linear_jvp  # noqa: E402
from yax.primitives._lax import lax  # noqa: E402


def _reduce_sum_transpose(cts, x, *, axes):
    ct, = cts
    kept = tuple(d for d in range(len(x.aval.shape)) if d not in axes)
    return [lax.broadcast_in_dim(ct, x.aval.shape, kept)]


linear_jvp(reduce_primitives["reduce_sum"])
reduce_primitives["reduce_sum"].transpose = _reduce_sum_transpose
