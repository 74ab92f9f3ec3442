"""`jax.interpreters.mlir`: lowering rules of primitives to StableHLO, the jax way.

    mlir.register_lowering(my_p, lambda ctx, x, **params: [hlo.sine(x)])
    mlir.register_lowering(my_p, mlir.lower_fun(my_impl, multiple_results=False))

A rule receives a context with `avals_in`/`avals_out` and one `ir.Value` per operand, and
returns the output values. `lower_fun` lowers a Python function written with yax operations.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import numpy as np

from yax._jax_names.interpreters._registry import RuleRegistry
from yax.core.primitive import Primitive
from yax.interpreters.lowering import ModuleContext as _ModuleContext
from yax.interpreters.lowering import RuleContext, lower_jaxpr_body
from yax.interpreters.mlir import aval_type, constant, element_type, hlo, ir, make_context
from yax.interpreters.staging import trace_to_jaxpr

__all__ = ["LoweringRule", "LoweringRuleContext", "ModuleContext", "Value", "aval_to_ir_type",
           "aval_to_ir_types", "dense_int_array", "dense_int_elements", "dtype_to_ir_type",
           "flatten_ir_types", "flatten_ir_values", "hlo", "i32_attr", "i64_attr", "ir",
           "ir_attribute", "ir_constant", "ir_constants", "jaxpr_subcomp", "lower_fun",
           "lowerable_effects", "lowerings", "make_ir_context", "module_to_bytecode",
           "module_to_string", "register_lowering", "shape_tensor", "token_type",
           "unflatten_ir_values_like_types"]

LoweringRuleContext = RuleContext


def _adapt_lower(primitive: Primitive, rule):
    def lower(ctx, *operands, **params):
        # lowering loads only the dialects yax emits; a rule written for jax may use any
        ctx.module_ctx.context.load_all_available_dialects()
        out = rule(ctx, *operands, **params)
        return [out] if isinstance(out, ir.Value) else list(out)
    return lower


lowerings = RuleRegistry("lower", _adapt_lower)


def register_lowering(primitive: Primitive, rule, platform: str | None = None) -> None:
    """Set `primitive`'s lowering. A rule for one platform only is used on that platform; the
    primitive's other lowering (if any) stays for the others. Returns None, as jax's."""
    if platform is not None and lowerings.get(primitive) is not None:
        general = primitive.lower

        def by_platform(ctx, *operands, **params):
            chosen = rule if ctx.platform == platform else general
            return _adapt_lower(primitive, chosen)(ctx, *operands, **params)
        primitive.define(lower=by_platform)
        return
    lowerings[primitive] = rule


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


# --- helpers lowering rules use to build StableHLO (jaxlib's MLIR bindings, as yax's own) ----

ModuleContext = _ModuleContext
Value = ir.Value
LoweringRule = Callable[..., Sequence[ir.Value]]
lowerable_effects: set = set()  # effects a lowering must thread; yax threads its own tokens


def make_ir_context() -> ir.Context:
    """An MLIR context with the dialects yax lowers to (StableHLO, CHLO, Shardy) loaded."""
    return make_context()


def i32_attr(i: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i)


def i64_attr(i: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)


def dense_int_array(values) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def dense_int_elements(values) -> ir.DenseIntElementsAttr:
    return ir.DenseIntElementsAttr.get(np.asarray(values, np.int64))


def ir_constants(value) -> list[ir.Value]:
    """`value` as a list of StableHLO constants (one: yax has no multi-value constants)."""
    return [constant(np.asarray(value))]


def ir_attribute(value) -> ir.Attribute:
    """A Python scalar, string, sequence or array as an MLIR attribute."""
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return i64_attr(value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in value])
    return ir.DenseElementsAttr.get(np.asarray(value))


def aval_to_ir_types(aval) -> tuple[ir.Type, ...]:
    return (aval_type(aval),)


def flatten_ir_types(types) -> list[ir.Type]:
    out = []
    for t in types:
        out.extend(t if isinstance(t, (list, tuple)) else [t])
    return out


def flatten_ir_values(values) -> list[ir.Value]:
    out = []
    for v in values:
        out.extend(v if isinstance(v, (list, tuple)) else [v])
    return out


def unflatten_ir_values_like_types(values, types) -> list:
    """`values` regrouped as `types` is grouped (a list per tuple of types, else one value)."""
    values, out = iter(values), []
    for t in types:
        out.append([next(values) for _ in t] if isinstance(t, (list, tuple)) else next(values))
    return out


def module_to_string(module: ir.Module, enable_debug_info=None) -> str:
    del enable_debug_info  # yax prints locations as MLIR does by default
    return str(module)


def module_to_bytecode(module: ir.Module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def shape_tensor(sizes) -> ir.Value:
    """A 1-d int32 tensor of the (static) `sizes`, as dynamic-shape ops take."""
    return constant(np.asarray(sizes, np.int32))


def token_type() -> ir.Type:
    return hlo.TokenType.get()


def jaxpr_subcomp(ctx, jaxpr, name_stack, tokens, consts, *args, dim_var_values=None):
    """Emit `jaxpr`'s equations at the current insertion point (a rule lowering a sub-program);
    returns (outputs, tokens) as JAX's."""
    del name_stack, dim_var_values
    module_ctx = getattr(ctx, "module_ctx", ctx)
    return lower_jaxpr_body(module_ctx, jaxpr, list(consts), list(args)), tokens
