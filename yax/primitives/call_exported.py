"""`call_exported`: run a StableHLO module that `yax.export` produced, as one primitive.

The param `module` is an `ExportedModule`: the module's portable bytecode with its parameter
and result avals. Lowered inside a larger program, the module's functions are copied in (renamed
so they cannot collide) and its `main` becomes a private function that is called; eagerly, the
one-equation program is compiled once per module like any primitive. Reverse-mode
differentiation is not a rule here: `Exported.call` wraps the primitive in a custom_vjp whose
backward pass is another exported module (see yax/export/exported.py); forward mode is refused,
as jax.export does. Under vmap the module runs once per batch element (`lax.map`): its shapes
are fixed, so no batched program exists.
"""

from __future__ import annotations

import hashlib

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from yax import errors
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters import batching
from yax.interpreters.mlir import aval_type, func
from yax.primitives._lax import lax


class ExportedModule:
    """Portable StableHLO bytecode plus its avals; equal (and hashed) by content, so the eager
    cache compiles one executable per distinct module."""

    __slots__ = ("bytecode", "in_avals", "out_avals", "name", "_key", "_hash")

    def __init__(self, bytecode: bytes, in_avals, out_avals, name: str):
        self.bytecode = bytes(bytecode)
        self.in_avals, self.out_avals, self.name = tuple(in_avals), tuple(out_avals), name
        self._key = (hashlib.sha256(self.bytecode).digest(), self.in_avals, self.out_avals)
        self._hash = hash(self._key)

    def __eq__(self, other):
        return isinstance(other, ExportedModule) and self._key == other._key

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"ExportedModule({self.name})"


def _call_exported_abstract_eval(*avals, module):
    want = module.in_avals
    if len(avals) != len(want) or any(a.shape != w.shape or a.dtype != w.dtype
                                      for a, w in zip(avals, want)):
        got = ", ".join(a.str_short() for a in avals)
        expected = ", ".join(a.str_short() for a in want)
        raise errors.ExportError(f"exported function {module.name} was called with ({got}) "
                                 f"but was exported for ({expected})")
    return list(module.out_avals)


def _inline(mctx, module: ExportedModule) -> str:
    """Copy the module's functions into `mctx.module` under fresh names; returns `main`'s."""
    cache = getattr(mctx, "exported_mains", None)
    if cache is None:
        cache = mctx.exported_mains = {}
    if module in cache:
        return cache[module]
    sub = stablehlo.deserialize_portable_artifact(mctx.context, module.bytecode)
    funcs = [op for op in sub.body.operations if op.operation.name == "func.func"]
    renamed = {}
    for op in funcs:
        old = ir.StringAttr(op.attributes["sym_name"]).value
        renamed[old] = mctx.unique_name(f"{module.name}_{old}")
    for old, new in renamed.items():
        ir.SymbolTable.replace_all_symbol_uses(old, new, sub.operation)
    for op in funcs:
        old = ir.StringAttr(op.attributes["sym_name"]).value
        op.attributes["sym_name"] = ir.StringAttr.get(renamed[old])
        op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        mctx.module.body.append(op.operation.detach_from_parent())
    cache[module] = renamed["main"]
    return renamed["main"]


def _call_exported_lower(ctx, *args, module):
    name = _inline(ctx.module_ctx, module)
    call = func.CallOp([aval_type(a) for a in module.out_avals], ir.FlatSymbolRefAttr.get(name),
                       list(args))
    return list(call.results)


def _call_exported_jvp(primals, tangents, *, module):
    raise errors.NotImplementedRuleError(
        f"forward-mode differentiation (jvp, jacfwd, linearize) of exported function "
        f"{module.name} is not supported, as in jax.export: an export carries a VJP; use grad, "
        f"vjp or jacrev")


def _call_exported_batch(args, dims, *, module):
    size = batching.axis_size_of(args, dims)
    mapped = [i for i, d in enumerate(dims) if d is not batching.not_mapped]
    xs = [batching.move_batch_axis(args[i], dims[i], 0, size) for i in mapped]

    def one(slices):
        full = list(args)
        for i, x in zip(mapped, slices, strict=True):
            full[i] = x
        return tuple(bind(call_exported_p, *full, module=module))
    outs = lax.map(one, xs)
    return list(outs), [0] * len(outs)


call_exported_p = Primitive("call_exported", multiple_results=True,
                            abstract_eval=_call_exported_abstract_eval,
                            lower=_call_exported_lower, batch=_call_exported_batch,
                            jvp=_call_exported_jvp)
