"""Windowed reductions: reduce_window_{sum,prod,max,min}, declared as table rows (WINDOW_TABLE,
at the end, after the rules its rows name).

Per axis the operand is dilated by `base_dilation` (holes between elements), padded by (lo, hi),
and a window of `window_dimensions` elements, `window_dilation` apart, is placed every
`window_strides` elements; each output element combines the operand elements its window covers
(holes and padding hold the monoid's identity, so they never matter). As a loop, in 1-D:

    xp = [identity] * lo + dilate(x, base_dilation) + [identity] * hi
    dw = (k - 1) * window_dilation + 1
    out = [reduce(xp[o * stride + j * window_dilation] for j in range(k))
           for o in range(max(0, (len(xp) - dw) // stride + 1))]

All four lower to `stablehlo.reduce_window`. The sum is linear: its transpose is another windowed
sum over the cotangent spread out by the strides. The JVPs of max/min/prod look at the windows
as "patches" (one strided slice of the padded operand per window offset, stacked on a new last
axis), where they become ordinary reductions over one axis: max/min pass on the tangent of the
first element (in window order) that equals the result, as jax does, so that ties match it.
"""

from __future__ import annotations

import itertools

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.primitives._ad_rules import LINEAR, table_jvp
from yax.primitives._checks import dtype_kind_check
from yax.primitives._lax import lax
from yax.primitives.reductions import (
    _highest,
    _identity,
    _lowest,
    _reduce_prod_tangent,
    _reduce_region,
)

ir = mlir.ir


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def window_out_shape(shape, window_dimensions, window_strides, padding, base_dilation,
                     window_dilation) -> tuple:
    """The result shape; an axis whose padded operand is shorter than the window is empty."""
    out = []
    for n, k, s, (lo, hi), b, d in zip(shape, window_dimensions, window_strides, padding,
                                       base_dilation, window_dilation, strict=True):
        span = _dilated(n, b) + lo + hi - _dilated(k, d)
        out.append(max(0, span // s + 1) if span >= 0 else 0)
    return tuple(out)


def _check_params(name, x, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation) -> None:
    given = {"window_dimensions": window_dimensions, "window_strides": window_strides,
             "padding": padding, "base_dilation": base_dilation,
             "window_dilation": window_dilation}
    for what, value in given.items():
        if len(value) != x.ndim:
            raise errors.ShapeError(
                f"{name} of {x.str_short()}: {what}={tuple(value)} has {len(value)} entries; "
                f"one per operand axis ({x.ndim}) is needed")
    for what in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if any(v < 1 for v in given[what]):
            raise errors.ShapeError(f"{name} of {x.str_short()}: every entry of {what}="
                                    f"{tuple(given[what])} must be >= 1")
    if any(len(p) != 2 or p[0] < 0 or p[1] < 0 for p in padding):
        raise errors.ShapeError(f"{name} of {x.str_short()}: padding={tuple(padding)} must be "
                                f"(lo, hi) pairs of non-negative ints, one per axis")


def _window_abstract_eval(name, kind):
    def rule(x, **params):
        dtype_kind_check(name, x, kind)
        _check_params(name, x, **params)
        return ShapedArray(window_out_shape(x.shape, **params), x.dtype, x.weak_type)
    return rule


def _window_lower(combine, identity):
    def rule(ctx, x, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        aval, out = ctx.avals_in[0], ctx.avals_out[0]
        init = _identity(identity, aval.dtype)
        if out.size == 0 or aval.size == 0:  # no element of x reaches any window
            return [mlir.full_like_aval(init, out)]
        op = hlo.ReduceWindowOp([mlir.aval_type(out)], [x], [mlir.constant(init)],
                                mlir.dense_i64(window_dimensions),
                                window_strides=mlir.dense_i64(window_strides),
                                base_dilations=mlir.dense_i64(base_dilation),
                                window_dilations=mlir.dense_i64(window_dilation),
                                padding=ir.DenseIntElementsAttr.get(
                                    np.asarray(padding, np.int64).reshape(len(padding), 2)))
        _reduce_region(op, aval.dtype, combine)
        return list(op.results)
    return rule


# --- differentiation and batching rules -----------------------------------------------------------

def _shape(x) -> tuple:
    return tuple(aval_of_value(x).shape)


def _patches(x, fill, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
    """x's windows as an array of shape out_shape + (window size,): entry [o..., w] is the
    element at window offset w (row-major over the window) of the window of output o. Linear in
    x; padding and holes are `fill`."""
    shape = _shape(x)
    out_shape = window_out_shape(shape, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation)
    dt = aval_of_value(x).dtype
    config = [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=True)]
    xp = lax.pad(x, np.asarray(fill, dt), config)
    columns = []
    for offset in itertools.product(*(range(k) for k in window_dimensions)):
        start = [j * d for j, d in zip(offset, window_dilation, strict=True)]
        limit = [st + (m - 1) * s + 1 for st, m, s in zip(start, out_shape, window_strides,
                                                          strict=True)]
        column = lax.slice(xp, start, limit, window_strides)
        columns.append(lax.broadcast_in_dim(column, out_shape + (1,), tuple(range(len(shape)))))
    return lax.concatenate(columns, len(shape))


def _zeros(shape, dt):
    return lax.broadcast_in_dim(np.zeros((), dt), tuple(shape), ())


def _chooser_tangent(name):
    """max/min: the tangent of the first element of each window equal to its result (NaN
    results pick the first NaN)."""
    def rule(t, out, x, **params):
        out_shape = _shape(out)
        t_dt = aval_of_value(t).dtype
        if int(np.prod(out_shape)) == 0:
            return _zeros(out_shape, t_dt)
        axis = len(out_shape)
        fill = _identity(IDENTITIES[name], aval_of_value(x).dtype)
        px, pt = _patches(x, fill, **params), _patches(t, 0, **params)
        shape = _shape(px)
        wide_out = lax.broadcast_in_dim(out, shape, tuple(range(axis)))
        hit = lax.bitwise_or(lax.eq(px, wide_out),
                             lax.bitwise_and(lax.ne(px, px), lax.ne(wide_out, wide_out)))
        first = lax.argmax(hit, axis, np.int32)  # index of the first True
        chosen = lax.eq(lax.broadcasted_iota(np.int32, shape, axis),
                        lax.broadcast_in_dim(first, shape, tuple(range(axis))))
        # the weights come from comparisons of primal values, so they carry no derivative
        return lax.reduce_sum(lax.mul(pt, lax.convert_element_type(chosen, t_dt)), (axis,))
    return rule


def _prod_tangent(t, out, x, **params):
    """prod: the reduce_prod tangent rule (division-free) applied to each window's patch."""
    out_shape = _shape(out)
    if int(np.prod(out_shape)) == 0:
        return _zeros(out_shape, aval_of_value(t).dtype)
    px, pt = _patches(x, 1, **params), _patches(t, 0, **params)
    return _reduce_prod_tangent(pt, out, px, axes=(len(out_shape),))


def _sum_transpose(cts, x, *, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    """Element i of x (at lo + i * b in the padded operand) receives ct[o] for every window o
    covering it. Spreading ct out by the strides (interior padding) and padding it so that
    position lo + i * b lines up with window start i * b, that is the windowed sum with stride b
    and the same window dilation: the all-ones window is symmetric, so no reversal is needed."""
    ct, = cts
    shape, ct_shape = x.aval.shape, _shape(ct)
    if 0 in shape or 0 in ct_shape:
        return [_zeros(shape, x.aval.dtype)]
    config, crop = [], []
    for n, k, s, (lo, _), b, d, m in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation, ct_shape, strict=True):
        pad_lo, pad_hi = (k - 1) * d - lo, (n - 1) * b + lo - (m - 1) * s
        # grow with non-negative padding first, then crop what negative padding would remove
        config.append((max(pad_lo, 0), max(pad_hi, 0), s - 1))
        crop.append((max(-pad_lo, 0), max(-pad_hi, 0)))
    spread = lax.pad(ct, np.zeros((), x.aval.dtype), config)
    spread_shape = _shape(spread)
    spread = lax.slice(spread, [c[0] for c in crop],
                       [size - c[1] for size, c in zip(spread_shape, crop, strict=True)])
    ones = (1,) * len(shape)
    out = reduce_window_sum_p.bind(spread, window_dimensions=window_dimensions,
                                   window_strides=base_dilation,
                                   padding=((0, 0),) * len(shape), base_dilation=ones,
                                   window_dilation=window_dilation)
    return [out]


def _window_batch(prim):
    """The batch axis becomes one more axis with a window of one element."""
    def batch(args, dims, *, window_dimensions, window_strides, padding, base_dilation,
              window_dilation):
        (x,), (bdim,) = args, dims

        def insert(values, value):
            return values[:bdim] + (value,) + values[bdim:]
        out = prim.bind(x, window_dimensions=insert(window_dimensions, 1),
                        window_strides=insert(window_strides, 1),
                        padding=insert(padding, (0, 0)),
                        base_dilation=insert(base_dilation, 1),
                        window_dilation=insert(window_dilation, 1))
        return [out], [bdim]
    prim.define(batch=batch)


# --- the family ---------------------------------------------------------------------------------

WINDOW_TABLE = [
    # name, dtype kind, combining op, identity, jvp (LINEAR: the primitive on the tangent)
    ("reduce_window_sum", "numeric", hlo.add, lambda dt: 0, LINEAR),
    ("reduce_window_prod", "numeric", hlo.multiply, lambda dt: 1, _prod_tangent),
    ("reduce_window_max", "real_or_bool", hlo.maximum, _lowest,
     _chooser_tangent("reduce_window_max")),
    ("reduce_window_min", "real_or_bool", hlo.minimum, _highest,
     _chooser_tangent("reduce_window_min")),
]
IDENTITIES = {name: identity for name, _, _, identity, _ in WINDOW_TABLE}


def _make(name, kind, combine, identity, jvp) -> Primitive:
    prim = Primitive(name, abstract_eval=_window_abstract_eval(name, kind),
                     lower=_window_lower(combine, identity))
    table_jvp(prim, jvp)
    _window_batch(prim)
    return prim


window_primitives = {row[0]: _make(*row) for row in WINDOW_TABLE}
reduce_window_sum_p = window_primitives["reduce_window_sum"]
reduce_window_prod_p = window_primitives["reduce_window_prod"]
reduce_window_max_p = window_primitives["reduce_window_max"]
reduce_window_min_p = window_primitives["reduce_window_min"]
reduce_window_sum_p.define(transpose=_sum_transpose)
