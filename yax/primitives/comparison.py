"""Comparison primitives (eq, ne, lt, le, gt, ge, is_finite: boolean outputs, zero derivatives),
declared as table rows, and the selections built on comparisons: select_n(which, *cases) and
clamp(lo, x, hi).

select_n is linear in its cases (not in its selector), so its transpose routes the cotangent to
the picked case; at clamp's boundaries nothing gets the tangent (as JAX).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero, instantiate
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._ad_rules import broadcast_batcher, defjvp, unbroadcast
from yax.primitives._checks import broadcast_elementwise_shapes, dtype_kind_check, same_dtypes
from yax.primitives._elementwise_family import (
    all_weak,
    broadcast_operands,
    compare_type,
    const,
    elementwise_primitive,
    nary_abstract_eval,
    op_lower,
    unary_family,
)
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import without_nan_check


def _compare_lower(direction: str):
    def rule(ctx, x, y):
        x, y = broadcast_operands(ctx, [x, y])
        ctype = compare_type(ctx.avals_in[0].dtype)
        return [hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                            compare_type=hlo.ComparisonTypeAttr.get(ctype))]
    return rule


def _to_bool(dt):
    return dtypes.bool_


COMPARISON_TABLE = [("eq", "EQ"), ("ne", "NE"), ("lt", "LT"), ("le", "LE"), ("gt", "GT"),
                    ("ge", "GE")]
comparison_primitives = {
    name: elementwise_primitive(
        name, nary_abstract_eval(name, "any" if name in ("eq", "ne") else "real_or_bool",
                                 _to_bool),
        _compare_lower(direction), None, None)
    for name, direction in COMPARISON_TABLE
}

UNARY_TABLE = [
    # name, dtype kind, lowering, output dtype function, jvp (a bool output: none)
    ("is_finite", "float", op_lower(hlo.is_finite), _to_bool, None),
]
unary_primitives = unary_family(UNARY_TABLE)


# --- select_n(which, *cases) ---------------------------------------------------------------------

def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise errors.ShapeError("select_n needs at least one case")
    same_dtypes("select_n cases", cases)
    shape = broadcast_elementwise_shapes("select_n", [which, *cases])
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise errors.DTypeError(f"select_n needs a bool or int32 selector, got {which.str_short()}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise errors.DTypeError(f"select_n with a bool selector takes at most 2 cases, got "
                                f"{len(cases)}")
    return ShapedArray(shape, cases[0].dtype, all_weak(cases))


def _select_n_lower(ctx, which, *cases):
    which, *cases = broadcast_operands(ctx, [which, *cases])
    if len(cases) == 1:
        return [cases[0]]
    waval = ctx.avals_in[0]
    if waval.dtype == dtypes.bool_:
        return [hlo.select(which, cases[1], cases[0])]
    # int32 selector: a balanced tree of selects on `which < mid`
    shape = ctx.avals_out[0].shape

    def pick(lo, hi):
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        bound = mlir.constant(np.full(shape, mid, np.int32))
        lt = hlo.compare(which, bound, hlo.ComparisonDirectionAttr.get("LT"),
                         compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
        return hlo.select(lt, pick(lo, mid), pick(mid, hi))
    return [pick(0, len(cases))]


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [select_n_p.bind(which, *(instantiate(t) for t in case_tangents))]


def _select_n_transpose(cts, which, *cases):
    ct, = cts
    if is_undefined(which):
        raise ValueError("select_n is not linear in its selector `which`")
    zero = const(ct, 0)
    result = [None]
    for i, case in enumerate(cases):
        if not is_undefined(case):
            result.append(None)
            continue
        picked = select_n_p.bind(which, *(ct if j == i else zero for j in range(len(cases))))
        result.append(unbroadcast(picked, case.aval))
    return result


select_n_p = Primitive("select_n", abstract_eval=_select_n_abstract_eval, lower=_select_n_lower,
                       jvp=_select_n_jvp, transpose=_select_n_transpose)
broadcast_batcher(select_n_p)


# --- clamp(lo, x, hi) ----------------------------------------------------------------------------

def _clamp_abstract_eval(lo, x, hi):
    dtype_kind_check("clamp", x, "real")
    same_dtypes("clamp", [lo, x, hi])
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise errors.ShapeError(f"clamp bounds must be scalars or have the operand's shape "
                                    f"{x.str_short()}, got {bound.str_short()}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _clamp_lower(ctx, lo, x, hi):
    return [hlo.clamp(*broadcast_operands(ctx, [lo, x, hi]))]


def _where(pred, t):
    return lax.select(pred, t, 0.0)


def _clamp_batch(args, dims):
    """Only the bounds may be rank 0 (x fixes the shape), so x always gets the batch axis."""
    size = axis_size_of(args, dims)
    (lo, x, hi), (lo_dim, x_dim, hi_dim) = args, dims
    x = move_batch_axis(x, x_dim, 0, size)

    def bound(b, bdim):
        if bdim is None and not np.shape(b):
            return b  # an unbatched scalar bound broadcasts by itself
        b = move_batch_axis(b, bdim, 0, size)
        return b if tuple(b.shape) == tuple(x.shape) else lax.broadcast_in_dim(b, x.shape, (0,))
    return [clamp_p.bind(bound(lo, lo_dim), x, bound(hi, hi_dim))], [0]


clamp_p = Primitive("clamp", abstract_eval=_clamp_abstract_eval, lower=_clamp_lower,
                    batch=_clamp_batch)
defjvp(clamp_p,
       lambda t, out, lo, x, hi: _where(lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi)), t),
       lambda t, out, lo, x, hi: _where(lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi)), t),
       lambda t, out, lo, x, hi: _where(lax.lt(hi, x), t))

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
select_n_p.define(checkify=without_nan_check)
