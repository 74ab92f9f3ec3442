"""Lowering: a closed jaxpr becomes one StableHLO module (entry function `main`).

Each primitive's `lower(ctx, *operands, **params)` rule emits ops at the current insertion point.
`ctx` is a RuleContext: it carries the module context, `avals_in`, `avals_out` and the source
location. Sub-jaxprs held in params are lowered once per module into private functions.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from yax.core.ir import ClosedJaxpr, Jaxpr, Literal
from yax.interpreters import mlir
from yax.interpreters.mlir import func


class ModuleContext:
    """State shared by the whole module: MLIR context, module, platform, lowered functions."""

    def __init__(self, platform: str):
        self.platform = platform
        self.context = mlir.make_context(all_dialects=False)
        self.module = None
        self.functions: dict[int, tuple] = {}  # id(jaxpr) -> (func op, jaxpr kept alive)
        self._names: set[str] = set()
        self.unused_donations: list[int] = []
        # Python callables the module's host-callback custom calls name by position (`index`)
        self.host_callbacks: list = []
        # the ordering token of the function body being lowered (ordered effects), or None
        self.token = None
        self.has_scopes = False  # some equation was staged inside a named_scope

    def unique_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "fn"
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name


class RuleContext:
    __slots__ = ("module_ctx", "avals_in", "avals_out", "source")

    def __init__(self, module_ctx, avals_in, avals_out, source=None):
        self.module_ctx = module_ctx
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.source = source

    @property
    def platform(self) -> str:
        return self.module_ctx.platform


def _location(source) -> ir.Location:
    if source is None:
        return ir.Location.unknown()
    loc = ir.Location.file(source.filename, source.lineno, 0)
    scope = getattr(source, "scope", None)  # named_scope: a named location around the file one
    return ir.Location.name(scope, childLoc=loc) if scope else loc


def jaxpr_environment(jaxpr: Jaxpr, consts: list, args: list) -> tuple[dict, object]:
    """The MLIR value of each of `jaxpr`'s bound variables, and `read(atom)`: a variable's
    value, or a literal as a constant (shared by every lowering of a jaxpr body)."""
    env: dict = {}
    for v, val in zip(jaxpr.constvars, consts, strict=True):
        env[v] = val
    for v, val in zip(jaxpr.invars, args, strict=True):
        env[v] = val

    def read(atom):
        if isinstance(atom, Literal):
            return mlir.constant(np.asarray(atom.val, dtype=atom.aval.dtype))
        return env[atom]
    return env, read


def lower_jaxpr_body(mctx: ModuleContext, jaxpr: Jaxpr, consts: list, args: list) -> list:
    """Emit `jaxpr`'s equations at the current insertion point; returns the output values."""
    env, read = jaxpr_environment(jaxpr, consts, args)
    saved_token, mctx.token = mctx.token, None  # each body orders its own effects
    try:
        _lower_eqns(mctx, jaxpr.eqns, env, read)
    finally:
        mctx.token = saved_token
    return [read(v) for v in jaxpr.outvars]


def _lower_eqns(mctx: ModuleContext, eqns, env: dict, read) -> None:
    for eqn in eqns:
        ins = [read(a) for a in eqn.inputs]
        ctx = RuleContext(mctx, [a.aval for a in eqn.inputs], [v.aval for v in eqn.outvars],
                          eqn.source)
        if getattr(eqn.source, "scope", None):
            mctx.has_scopes = True
        with _location(eqn.source):
            outs = eqn.primitive.lower(ctx, *ins, **eqn.params)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for v, val in zip(eqn.outvars, outs, strict=True):
            env[v] = val


def _const_values(consts) -> list:
    return [mlir.constant(np.asarray(c)) for c in consts]


def lower_function(mctx: ModuleContext, closed: ClosedJaxpr, name: str) -> func.FuncOp:
    """Lower `closed` into a private function once per module; later calls reuse it."""
    hit = mctx.functions.get(id(closed))
    if hit is not None:
        return hit[0]
    jaxpr = closed.jaxpr
    in_types = [mlir.aval_type(a) for a in jaxpr.in_avals]
    out_types = [mlir.aval_type(a) for a in jaxpr.out_avals]
    with ir.InsertionPoint(mctx.module.body):
        fn = func.FuncOp(mctx.unique_name(name), ir.FunctionType.get(in_types, out_types))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = fn.add_entry_block()
    with ir.InsertionPoint(block):
        outs = lower_jaxpr_body(mctx, jaxpr, _const_values(closed.consts), list(block.arguments))
        func.ReturnOp(outs)
    mctx.functions[id(closed)] = (fn, closed)
    return fn


def call_function(mctx: ModuleContext, closed: ClosedJaxpr, name: str, args: list) -> list:
    fn = lower_function(mctx, closed, name)
    out_types = [mlir.aval_type(a) for a in closed.out_avals]
    call = func.CallOp(out_types, ir.FlatSymbolRefAttr.get(fn.name.value), args)
    return list(call.results)


def lower_module(jaxpr: Jaxpr, *, platform: str, consts_as_args: bool = True, consts=(),
                 donated: tuple = (), device_ids=None) -> ModuleContext:
    """Lower `jaxpr` into a fresh module with entry `main`.

    With `consts_as_args`, constvars become the leading parameters of `main` (large captured arrays
    are passed at run time rather than embedded in the program). `donated` lists indices of `main`'s
    parameters whose buffers may be reused for an output of the same type. `device_ids` (a
    multi-device program) lists the program's devices in partition order, so meshes laid out in
    another order are declared with their partition numbers.
    """
    mctx = ModuleContext(platform)
    if device_ids is not None:
        mctx.device_ids = list(device_ids)
    with mctx.context, ir.Location.unknown():
        mctx.module = ir.Module.create()
        params = (list(jaxpr.constvars) if consts_as_args else []) + list(jaxpr.invars)
        in_types = [mlir.aval_type(v.aval) for v in params]
        out_types = [mlir.aval_type(a) for a in jaxpr.out_avals]
        with ir.InsertionPoint(mctx.module.body):
            main = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
            mctx._names.add("main")
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            mctx.unused_donations = _set_donation(main, params, jaxpr, donated)
            block = main.add_entry_block()
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            if consts_as_args:
                const_vals, args = args[:len(jaxpr.constvars)], args[len(jaxpr.constvars):]
            else:
                const_vals = _const_values(consts)
            outs = lower_jaxpr_body(mctx, jaxpr, const_vals, args)
            func.ReturnOp(outs)
    return mctx


def _set_donation(main, params, jaxpr, donated) -> list[int]:
    """Alias each donated parameter with the first unclaimed output of identical type.

    Returns the donated parameters that no output could reuse.
    """
    if not donated:
        return []
    unused = []
    out_avals = [(a.shape, a.dtype) for a in jaxpr.out_avals]
    claimed: set[int] = set()
    attrs = []
    for i, v in enumerate(params):
        attr = {}
        if i in donated:
            for j, oa in enumerate(out_avals):
                if j not in claimed and oa == (v.aval.shape, v.aval.dtype):
                    claimed.add(j)
                    attr["tf.aliasing_output"] = ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(32), j)
                    break
            else:
                unused.append(i)
        attrs.append(ir.DictAttr.get(attr))
    main.arg_attrs = ir.ArrayAttr.get(attrs)
    return unused


def module_text(mctx: ModuleContext) -> str:
    """The module's StableHLO text; with locations when a named_scope was used (so its names
    show), without otherwise (shorter)."""
    with mctx.context:
        if mctx.has_scopes:
            return mctx.module.operation.get_asm(enable_debug_info=True)
        return str(mctx.module)
