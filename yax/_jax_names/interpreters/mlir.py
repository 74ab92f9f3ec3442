"""`jax.interpreters.mlir`: lowering rules of primitives to StableHLO, the jax way.

    mlir.register_lowering(my_p, lambda ctx, x, **params: [hlo.sine(x)])
    mlir.register_lowering(my_p, mlir.lower_fun(my_impl, multiple_results=False))

A rule receives a context with `avals_in`/`avals_out` and one `ir.Value` per operand, and
returns the output values. `lower_fun` lowers a Python function written with yax operations.
"""

from __future__ import annotations

import numpy as np

from yax._jax_names.interpreters._registry import RuleRegistry
from yax.core.primitive import Primitive
from yax.interpreters.lowering import RuleContext, lower_jaxpr_body
from yax.interpreters.mlir import aval_type, constant, element_type, hlo, ir
from yax.interpreters.staging import trace_to_jaxpr

__all__ = ["LoweringRuleContext", "aval_to_ir_type", "dtype_to_ir_type", "hlo", "ir",
           "ir_constant", "lower_fun", "lowerings", "register_lowering"]

LoweringRuleContext = RuleContext


def _adapt_lower(primitive: Primitive, rule):
    def lower(ctx, *operands, **params):
        out = rule(ctx, *operands, **params)
        return [out] if isinstance(out, ir.Value) else list(out)
    return lower


lowerings = RuleRegistry("lower", _adapt_lower)


def register_lowering(primitive: Primitive, rule, platform: str | None = None):
    """Set `primitive`'s lowering. A rule for one platform only is used on that platform; the
    primitive's other lowering (if any) stays for the others."""
    if platform is not None and lowerings.get(primitive) is not None:
        general = primitive.lower

        def by_platform(ctx, *operands, **params):
            chosen = rule if ctx.platform == platform else general
            return _adapt_lower(primitive, chosen)(ctx, *operands, **params)
        primitive.define(lower=by_platform)
        return rule
    lowerings[primitive] = rule
    return rule


def lower_fun(fun, multiple_results: bool = True):
    """A lowering rule that traces `fun(*operands, **params)` (yax operations) and emits it."""
    def rule(ctx, *operands, **params):
        def flat(*xs):
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]
        closed = trace_to_jaxpr(flat, list(ctx.avals_in), name=getattr(fun, "__name__", "fun"))
        consts = [constant(np.asarray(c)) for c in closed.consts]
        return lower_jaxpr_body(ctx.module_ctx, closed.jaxpr, consts, list(operands))
    return rule


def ir_constant(value) -> ir.Value:
    return constant(value)


def aval_to_ir_type(aval) -> ir.Type:
    return aval_type(aval)


def dtype_to_ir_type(dtype) -> ir.Type:
    return element_type(dtype)
