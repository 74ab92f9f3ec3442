"""What the elementwise family files share: the table builders and the helpers of their rules.

A unary row is `(name, dtype kind, lowering, output dtype function, jvp)` and a binary row is
`(name, dtype kind, lowering, (jvp_x, jvp_y))`; `unary_family`/`binary_family` turn rows into
primitives with their shape rule, lowering, JVP and the elementwise batching rule. A jvp entry is
`rule(t, out, *primals)` (see `defjvp`), `None` for a zero derivative (piecewise constant, or an
integer/bool output), or `_ad_rules.LINEAR` for a primitive linear in its operand.

Operands of an n-ary elementwise primitive share one shape; rank-0 operands broadcast implicitly
(so `mul x 2.0` needs no broadcast equation).
"""

from __future__ import annotations

from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.primitives._ad_rules import broadcast_batcher, table_jvp
from yax.primitives._checks import broadcast_elementwise_shapes, dtype_kind_check, same_dtypes


def broadcast_operands(ctx, operands) -> list:
    """Broadcast rank-0 operands to the output shape inside a lowering rule."""
    shape = ctx.avals_out[0].shape
    return [mlir.broadcast_to(x, a, shape) if a.shape != shape else x
            for x, a in zip(operands, ctx.avals_in, strict=True)]


def all_weak(avals) -> bool:
    return all(a.weak_type for a in avals)


def real_dtype(dt):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dt, dt)


def op_lower(op):
    """The lowering of an elementwise primitive that is one StableHLO/CHLO op."""
    def rule(ctx, *xs, **params):
        return [op(*broadcast_operands(ctx, xs))]
    return rule


def unary_abstract_eval(name, kind, out_dtype=None):
    def rule(x, **params):
        dtype_kind_check(name, x, kind)
        dt = out_dtype(x.dtype) if out_dtype else x.dtype
        return ShapedArray(x.shape, dt, x.weak_type if dt == x.dtype else False)
    return rule


def nary_abstract_eval(name, kind, out_dtype=None):
    def rule(*avals, **params):
        for a in avals:
            dtype_kind_check(name, a, kind)
        same_dtypes(name, avals)
        shape = broadcast_elementwise_shapes(name, avals)
        dt = out_dtype(avals[0].dtype) if out_dtype else avals[0].dtype
        return ShapedArray(shape, dt, all_weak(avals) and dt == avals[0].dtype)
    return rule


def compare_type(dt) -> str:
    """The StableHLO comparison type for operands of dtype `dt`."""
    if dtypes.is_inexact(dt):
        return "FLOAT"
    if dtypes.is_signed_int(dt):
        return "SIGNED"
    return "UNSIGNED"


def dtype_of(x):
    return aval_of_value(x).dtype


def const(like, value):
    """A strongly typed 0-d constant of `like`'s dtype: an inline literal when staged."""
    return TypedScalar(value, dtype_of(like), weak_type=False)


def elementwise_primitive(name, abstract_eval, lower, *jvps) -> Primitive:
    """A primitive with the elementwise JVP (one entry per operand) and batching rules."""
    prim = Primitive(name, abstract_eval=abstract_eval, lower=lower)
    table_jvp(prim, *jvps)
    broadcast_batcher(prim)
    return prim


def unary_family(rows) -> dict[str, Primitive]:
    return {name: elementwise_primitive(name, unary_abstract_eval(name, kind, out), lower, jvp)
            for name, kind, lower, out, jvp in rows}


def binary_family(rows) -> dict[str, Primitive]:
    return {name: elementwise_primitive(name, nary_abstract_eval(name, kind), lower, *jvps)
            for name, kind, lower, jvps in rows}
