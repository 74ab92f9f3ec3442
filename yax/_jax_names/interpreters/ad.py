"""`jax.interpreters.ad`: forward- and reverse-mode rules of primitives, the jax way.

    ad.primitive_jvps[my_p] = lambda primals, tangents, **params: (out, out_dot)
    ad.primitive_transposes[my_p] = lambda ct, *args, **params: [ct_x, None]
    ad.deflinear2(my_p, transpose_rule)   # linear primitives

Tangents and cotangents may be symbolic zeros (`Zero`); `instantiate_zeros` makes them real.
A transpose rule sees `UndefinedPrimal` for the operands it solves for.
"""

from __future__ import annotations

from yax._jax_names.interpreters._registry import RuleRegistry, as_list
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import (
    Zero,
    add_tangents,
    instantiate,
    is_zero,
    tangent_aval,
    zeros_like_aval,
)
from yax.interpreters.jvp import JVPTrace, JVPTracer
from yax.interpreters.transpose import UndefinedPrimal, is_undefined
from yax.runtime.values import aval_of

__all__ = ["JVPTrace", "JVPTracer", "defbilinear", "defjvp2", "get_primitive_transpose",
            "UndefinedPrimal", "Zero", "add_jaxvals", "defjvp", "deflinear",
           "deflinear2", "defjvp_zero", "instantiate_zeros", "is_undefined_primal",
           "primitive_jvps",
           "primitive_transposes", "zeros_like_aval"]


def _adapt_jvp(primitive: Primitive, rule):
    def jvp(primals, tangents, **params):
        out, out_dot = rule(tuple(primals), tuple(tangents), **params)  # tuples, as JAX
        return as_list(primitive, out), as_list(primitive, out_dot)
    return jvp


def _adapt_transpose(primitive: Primitive, rule):
    def transpose(cts, *operands, **params):
        ct = list(cts) if primitive.multiple_results else cts[0]
        return list(rule(ct, *operands, **params))
    return transpose


primitive_jvps = RuleRegistry("jvp", _adapt_jvp)
primitive_transposes = RuleRegistry("transpose", _adapt_transpose)


def instantiate_zeros(tangent):
    """A real array for a possibly symbolic zero tangent."""
    return instantiate(tangent)


def is_undefined_primal(x) -> bool:
    return is_undefined(x)


def add_jaxvals(x, y):
    return add_tangents(x, y)


def defjvp(primitive: Primitive, *jvp_rules) -> None:
    """One rule per operand, `rule(tangent, *primals, **params) -> output tangent` (None for an
    operand without one); the output tangent is their sum."""
    def jvp(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = Zero(tangent_aval(aval_of(out)))
        for rule, t in zip(jvp_rules, tangents, strict=True):
            if rule is not None and not is_zero(t):
                total = add_tangents(total, rule(t, *primals, **params))
        return out, total
    primitive_jvps[primitive] = jvp


def deflinear2(primitive: Primitive, transpose_rule) -> None:
    """A primitive linear in all its operands: its jvp applies it to the tangents, and
    `transpose_rule(ct, *operands, **params)` is its transpose."""
    def jvp(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        tangents = [instantiate(t) for t in tangents]
        return out, primitive.bind(*tangents, **params)
    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose_rule


def defjvp_zero(primitive: Primitive) -> None:
    """A primitive whose output does not change with its operands (integer-valued, or
    piecewise constant): its tangent is a symbolic zero."""
    def jvp(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        outs = out if primitive.multiple_results else [out]
        zeros = [Zero(tangent_aval(aval_of(o))) for o in outs]
        return out, (zeros if primitive.multiple_results else zeros[0])
    primitive_jvps[primitive] = jvp


def deflinear(primitive: Primitive, transpose_rule) -> None:
    """As deflinear2, with `transpose_rule(ct, **params)` (it does not see the operands)."""
    deflinear2(primitive, lambda ct, *operands, **params: transpose_rule(ct, **params))


def defjvp2(primitive: Primitive, *jvp_rules) -> None:
    """As defjvp, with rules that also see the primal output:
    `rule(tangent, out, *primals, **params)`."""
    def jvp(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = Zero(tangent_aval(aval_of(out)))
        for rule, t in zip(jvp_rules, tangents, strict=True):
            if rule is not None and not is_zero(t):
                total = add_tangents(total, rule(t, out, *primals, **params))
        return out, total
    primitive_jvps[primitive] = jvp


def defbilinear(primitive: Primitive, lhs_rule, rhs_rule) -> None:
    """A primitive linear in each of its two operands separately (a product): its jvp binds it
    with each tangent in turn; `lhs_rule(ct, x, y, **params)` transposes it for x (x
    undefined), `rhs_rule(ct, x, y, **params)` for y."""
    defjvp(primitive, lambda t, x, y, **params: primitive.bind(t, y, **params),
           lambda t, x, y, **params: primitive.bind(x, t, **params))

    def transpose(ct, x, y, **params):
        if is_undefined(x):
            return [None if is_zero(ct) else lhs_rule(ct, x, y, **params), None]
        return [None, None if is_zero(ct) else rhs_rule(ct, x, y, **params)]
    primitive_transposes[primitive] = transpose


def get_primitive_transpose(primitive: Primitive):
    """The transpose rule of `primitive`, or NotImplementedError naming it."""
    try:
        return primitive_transposes[primitive]
    except KeyError as e:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{primitive.name}' not implemented") from e
