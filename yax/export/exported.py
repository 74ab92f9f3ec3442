"""`Exported`: a function lowered to StableHLO for fixed argument types, callable again later.

`export(fun)(*args)` traces `fun` for the arguments' types (arrays or `ShapeDtypeStruct`s),
lowers it with the same lowering jit uses, and keeps the module as portable StableHLO bytecode
with the metadata a caller needs (pytree structures, avals, platform). `Exported.call` runs the
module through the `call_exported` primitive, eagerly or inside a traced program, and is
differentiable through a custom_vjp whose backward pass is the export of the function's VJP:
computed from the function for an export made in this process, or read from the blob (stored
up to `serialize(vjp_order=N)`) for a deserialized one.

An export with symbolic dimensions is traced once with symbolic avals and lowered into one
module with dynamic (`?`) dimensions (dynamic_lowering.py); each call binds the dimension
variables from the argument shapes, refines the module to those static shapes (refine.py) and
runs it, cached per binding. Such an export serializes like any other.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.trace import bind
from yax.export import binding, dynamic_lowering, refine, safety, serialization, symbolic
from yax.interpreters import lowering, mlir
from yax.interpreters.staging import trace_to_jaxpr
from yax.primitives.call_exported import ExportedModule, call_exported_p
from yax.primitives.callbacks import ShapeDtypeStruct
from yax.runtime import backend
from yax.runtime.values import leaf_aval
from yax.transforms.ad import vjp as _vjp
from yax.transforms.custom_derivatives import custom_vjp

CALLING_CONVENTION_VERSION = 1  # yax's own numbering: the order and meaning of main's parameters
_TARGET_VERSION = stablehlo.get_minimum_version()  # the most portable bytecode jaxlib can write
_GPU = ("cuda", "rocm", "gpu")
_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def _public_platform(name: str) -> str:
    return "cuda" if name == "gpu" else name


def _lowering_platform(name: str) -> str:
    return "gpu" if name in _GPU else name


class Exported:
    """A lowered function: metadata plus portable StableHLO (see the module docstring).

    Attributes follow `jax.export.Exported`: `fun_name`, `in_tree`, `out_tree`, `in_avals`,
    `out_avals`, `platforms`, `nr_devices`, `calling_convention_version`,
    `in_shardings_hlo`, `out_shardings_hlo` (None per value: one device, no annotation),
    `disabled_safety_checks` (the `DisabledSafetyCheck`s given to `export`).
    """

    def __init__(self, *, fun_name, in_tree, out_tree, in_avals, out_avals, platforms,
                 module: ExportedModule | None = None, fun=None, vjp: Exported | None = None,
                 calling_convention_version: int = CALLING_CONVENTION_VERSION,
                 vjp_thunk=None, modules: dict | None = None, disabled_safety_checks=()):
        self.fun_name, self.in_tree, self.out_tree = fun_name, in_tree, out_tree
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)
        self.platforms = tuple(platforms)
        self.nr_devices = 1
        self.calling_convention_version = calling_convention_version
        self.disabled_safety_checks = safety.checks_of(disabled_safety_checks)
        self.in_shardings_hlo = (None,) * len(self.in_avals)
        self.out_shardings_hlo = (None,) * len(self.out_avals)
        # one module per platform (the same object where the lowerings are identical)
        self._modules = dict(modules) if modules is not None else {p: module
                                                                   for p in self.platforms}
        self._fun, self._vjp = fun, vjp
        self._refined: dict = {}
        self._call_flat = None
        self._vjp_thunk = vjp_thunk  # a refined export's VJP: its symbolic parent's, refined

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.fun_name}: ({ins}) -> ({outs}), platforms={self.platforms})"

    @property
    def is_symbolic(self) -> bool:
        return any(symbolic.is_symbolic(a.shape) for a in self.in_avals)

    @property
    def _module(self) -> ExportedModule:
        """The module for the platform yax runs on (the first platform's if it is not one)."""
        here = _public_platform(backend.platform())
        return self._modules.get(here) or self._modules[self.platforms[0]]

    def module_for(self, platform: str) -> ExportedModule:
        return self._modules[_public_platform(platform.lower())]

    @property
    def mlir_module_serialized(self) -> bytes:
        """The module's portable StableHLO bytecode (see `_module`)."""
        return self._module.bytecode

    def mlir_module(self, platform: str | None = None) -> str:
        """The module as StableHLO text: the one for `platform` (default: see `_module`)."""
        module = self._module if platform is None else self.module_for(platform)
        ctx = mlir.make_context()
        with ctx:
            return str(stablehlo.deserialize_portable_artifact(ctx, module.bytecode))

    def has_vjp(self) -> bool:
        return self._vjp is not None or self._fun is not None or self._vjp_thunk is not None

    def vjp(self) -> Exported:
        """The export of the VJP: `(*flat_primals, *cts of the inexact outputs)` -> the cts of
        the inexact inputs, as a flat tuple."""
        if self._vjp is None and self._vjp_thunk is not None:
            self._vjp = self._vjp_thunk()
        if self._vjp is None:
            if self._fun is None:
                raise errors.ExportError(
                    f"exported function {self.fun_name} was deserialized without its VJP, so it "
                    f"cannot be differentiated: serialize it with vjp_order >= 1 (one per order "
                    f"of differentiation)")
            self._vjp = _export_vjp(self)
        return self._vjp

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The blob `yax.export.deserialize` reads: metadata, this module and the modules of
        the first `vjp_order` VJPs (so the deserialized function can be differentiated that
        many times)."""
        if vjp_order < 0:
            raise ValueError(f"vjp_order must be >= 0, got {vjp_order}")
        modules: list[bytes] = []
        meta = _to_meta(self, vjp_order, modules)
        return serialization.pack(meta, modules)

    def call(self, *args, **kwargs):
        """Run the exported function on arguments of the exported types (eagerly or under jit,
        grad, ...); returns outputs with the exported output structure."""
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise errors.ExportError(f"exported function {self.fun_name} takes arguments of "
                                     f"structure {self.in_tree}, got {tree}")
        avals = [leaf_aval(x) for x in leaves]
        here = _public_platform(backend.platform())
        if here not in self.platforms and not safety.allows_any_platform(
                self.disabled_safety_checks):
            raise errors.ExportError(
                f"exported function {self.fun_name} was exported for "
                f"{', '.join(self.platforms)}, but yax runs on {here} (export with "
                f"disabled_checks=[DisabledSafetyCheck.platform()] to run it anyway)")
        if self.is_symbolic:
            _check_dtypes(self, avals)
            env = binding.bind_dimensions(self.in_avals, [a.shape for a in avals], self.fun_name)
            return self._refine(env).call(*args, **kwargs)
        _check_avals(self, avals)
        if self._call_flat is None:
            self._call_flat = _differentiable_call(self)
        outs = self._call_flat(*leaves)
        return tree_util.tree_unflatten(self.out_tree, list(outs))

    def _refine(self, env: dict) -> Exported:
        """The static export for one binding of the dimension variables (cached): the module
        refined to those shapes; its VJP is this export's VJP refined the same way."""
        key = tuple(sorted(env.items()))
        hit = self._refined.get(key)
        if hit is None:
            in_avals = [ShapedArray(binding.refine(a.shape, env), a.dtype) for a in self.in_avals]
            out_avals = [ShapedArray(binding.refine(a.shape, env), a.dtype)
                         for a in self.out_avals]
            bytecode = refine.refine(self._module.bytecode, in_avals, _TARGET_VERSION,
                                     self.fun_name)
            _check_bytecode(bytecode, self.fun_name, in_avals, out_avals)
            # only the module of the platform this runs on is refined (the one that runs)
            here = _public_platform(backend.platform())
            hit = Exported(fun_name=self.fun_name, in_tree=self.in_tree, out_tree=self.out_tree,
                           in_avals=in_avals, out_avals=out_avals, platforms=(here,),
                           module=ExportedModule(bytecode, in_avals, out_avals, self.fun_name),
                           vjp_thunk=lambda: self.vjp()._refine(env),
                           calling_convention_version=self.calling_convention_version,
                           disabled_safety_checks=self.disabled_safety_checks)
            self._refined[key] = hit
        return hit


class _Struct:
    """A shape and dtype (a stand-in argument for tracing; symbolic dims allowed)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def _check_dtypes(exp: Exported, avals) -> None:
    if len(avals) != len(exp.in_avals) or any(
            a.dtype != w.dtype for a, w in zip(avals, exp.in_avals)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in exp.in_avals)
        raise errors.ExportError(f"exported function {exp.fun_name} was called with ({got}) but "
                                 f"was exported for ({want}): the dtypes differ")


def _check_avals(exp: Exported, avals) -> None:
    if len(avals) != len(exp.in_avals) or any(
            a.shape != w.shape or a.dtype != w.dtype for a, w in zip(avals, exp.in_avals)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in exp.in_avals)
        raise errors.ExportError(f"exported function {exp.fun_name} was called with ({got}) but "
                                 f"was exported for ({want})")


def _arg_aval(x):
    if isinstance(x, (_Struct, ShapeDtypeStruct)):
        dt = dtypes.canonicalize(x.dtype)
        if symbolic.is_symbolic(x.shape):
            return ShapedArray(x.shape, dt)
        return ShapedArray(x.shape, dt, getattr(x, "weak_type", False))
    return leaf_aval(x).strip_weak_type()


def export(fun, *, platforms=None, disabled_checks=()):
    """Export `fun` (usually a `jit`-ed function): returns `(*args, **kwargs) -> Exported`,
    where the arguments are arrays or `ShapeDtypeStruct`s (possibly with symbolic dims).
    `disabled_checks` lists `DisabledSafetyCheck`s to skip (see yax/export/safety.py).

    Example:
      >>> exp = yax.export.export(yax.jit(yax.numpy.sin))(yax.ShapeDtypeStruct((3,), "float32"))
      >>> exp.in_avals
      (ShapedArray(float32[3]),)
    """
    checks = safety.checks_of(disabled_checks)
    chosen = _platforms(platforms)
    name = getattr(fun, "__name__", None) or getattr(getattr(fun, "fun", None), "__name__", "fun")

    def do_export(*args, **kwargs) -> Exported:
        return _export_concrete(fun, chosen, args, kwargs, name, checks)
    return do_export


def default_export_platform() -> str:
    """The platform `export` lowers for by default: the one yax runs on."""
    return _public_platform(backend.platform())


def _platforms(platforms) -> tuple:
    if platforms is None:
        return (default_export_platform(),)
    chosen = tuple(_public_platform(p.lower()) for p in ([platforms] if isinstance(platforms, str)
                                                         else platforms))
    unknown = [p for p in chosen if p not in _PLATFORMS]
    if not chosen or unknown or len(set(chosen)) != len(chosen):
        raise errors.ExportError(f"export platforms must be distinct names among "
                                 f"{', '.join(_PLATFORMS)}, got {list(chosen)}")
    return chosen


def _trace(fun, in_tree, avals, name):
    out_tree_box = []

    def flat_fun(*flat):
        args, kwargs = tree_util.tree_unflatten(in_tree, list(flat))
        leaves, out_tree = tree_util.tree_flatten(fun(*args, **kwargs))
        out_tree_box.append(out_tree)
        return leaves
    closed = trace_to_jaxpr(flat_fun, avals, name=name)
    return closed, out_tree_box[0]


def _export_concrete(fun, platforms, args, kwargs, name, checks=()) -> Exported:
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    avals = [_arg_aval(x) for x in leaves]
    poly = any(symbolic.is_symbolic(a.shape) for a in avals)
    closed, out_tree = _trace(fun, in_tree, avals, name)
    # one lowering per platform (traced once): the rules that differ by platform (LAPACK custom
    # calls on CPU, ...) make different modules; identical ones are shared
    modules: dict = {}
    for p in platforms:
        bytecode = _lower(closed, poly, p, name, checks)
        same = next((m for m in modules.values() if m.bytecode == bytecode), None)
        modules[p] = same or ExportedModule(bytecode, avals, closed.out_avals, name)
    return Exported(fun_name=name, in_tree=in_tree, out_tree=out_tree, in_avals=avals,
                    out_avals=[a.strip_weak_type() for a in closed.out_avals],
                    platforms=platforms, modules=modules, fun=fun,
                    disabled_safety_checks=checks)


def _lower(closed, poly: bool, platform: str, name: str, checks=()) -> bytes:
    if poly:  # one module with dynamic dimensions (static programs never take this path)
        mctx = dynamic_lowering.lower_symbolic_module(
            closed, platform=_lowering_platform(platform))
    else:
        mctx = lowering.lower_module(closed.jaxpr, platform=_lowering_platform(platform),
                                     consts=closed.consts, consts_as_args=False)
    if poly:  # a rule that built an invalid module is a yax bug: say where, not at call time
        with mctx.context:
            try:
                mctx.module.operation.verify()
            except Exception as e:  # noqa: BLE001  MLIR reports failures with assorted types
                raise errors.ExportError(f"exporting {name} with symbolic shapes produced an "
                                         f"invalid StableHLO module: {e}") from None
    if mctx.host_callbacks:
        raise NotImplementedError(f"exporting {name}: the program calls back into Python "
                                  f"(debug.print, pure_callback, ...), which cannot be exported")
    safety.check_custom_calls(mctx.module, checks, name)
    with mctx.context:
        return stablehlo.serialize_portable_artifact(mctx.module, _TARGET_VERSION)


def _inexact(avals) -> list[int]:
    return [i for i, a in enumerate(avals) if dtypes.is_inexact(a.dtype)]


def _differentiable_call(exp: Exported):
    """`*flat_args -> flat outputs` through call_exported, with the export's VJP as its
    reverse-mode rule."""
    in_diff, out_diff = _inexact(exp.in_avals), _inexact(exp.out_avals)

    @custom_vjp
    def run(*xs):
        return tuple(bind(call_exported_p, *xs, module=exp._module))

    def fwd(*xs):
        return run(*xs), xs

    def bwd(primals, cts):
        in_cts = iter(exp.vjp().call(*primals, *[cts[i] for i in out_diff]))
        wanted = set(in_diff)
        return tuple(next(in_cts) if i in wanted else None for i in range(len(primals)))
    run.defvjp(fwd, bwd)
    return run


def _export_vjp(exp: Exported) -> Exported:
    """Export `(*primals, *cts) -> input cts` of `exp`'s function (for its exported types)."""
    in_diff, out_diff = _inexact(exp.in_avals), _inexact(exp.out_avals)
    n = len(exp.in_avals)
    fun, in_tree = exp._fun, exp.in_tree

    def vjp_fun(*flat):
        primals, cts = list(flat[:n]), flat[n:]

        def differentiable(*xs):
            full = list(primals)
            for i, x in zip(in_diff, xs, strict=True):
                full[i] = x
            args, kwargs = tree_util.tree_unflatten(in_tree, full)
            outs = tree_util.tree_leaves(fun(*args, **kwargs))
            return tuple(outs[i] for i in out_diff)
        _, pullback = _vjp(differentiable, *[primals[i] for i in in_diff])
        return tuple(pullback(tuple(cts)))
    structs = [_Struct(a.shape, a.dtype) for a in exp.in_avals]
    structs += [_Struct(exp.out_avals[i].shape, exp.out_avals[i].dtype) for i in out_diff]
    return _export_concrete(vjp_fun, exp.platforms, tuple(structs), {}, f"{exp.fun_name}_vjp",
                            exp.disabled_safety_checks)


def _to_meta(exp: Exported, vjp_order: int, modules: list) -> dict:
    index = {}
    for p in exp.platforms:  # each distinct module once
        b = exp.module_for(p).bytecode
        if b not in modules:
            modules.append(b)
        index[p] = modules.index(b)
    scope = binding.scope_of(exp.in_avals)
    return {"fun_name": exp.fun_name, "module": index[exp.platforms[0]],
            "platform_modules": [index[p] for p in exp.platforms],
            "in_tree": serialization.encode_tree(exp.in_tree),
            "out_tree": serialization.encode_tree(exp.out_tree),
            "in_avals": [serialization.encode_aval(a) for a in exp.in_avals],
            "out_avals": [serialization.encode_aval(a) for a in exp.out_avals],
            "platforms": list(exp.platforms),
            "calling_convention_version": exp.calling_convention_version,
            "constraints": list(scope.constraints) if scope is not None else [],
            "disabled_checks": [str(c) for c in exp.disabled_safety_checks],
            "vjp": _to_meta(exp.vjp(), vjp_order - 1, modules) if vjp_order > 0 else None}


def deserialize(blob) -> Exported:
    """The `Exported` that `Exported.serialize()` wrote into `blob` (an ExportError, naming the
    problem, for a corrupt, truncated or foreign blob)."""
    meta, modules = serialization.unpack(blob)
    try:
        return _from_meta(meta, modules)
    except errors.ExportError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise errors.ExportError(f"cannot deserialize: the metadata is corrupt "
                                 f"({type(e).__name__}: {e})") from None


def _from_meta(meta: dict, modules: list) -> Exported:
    version = int(meta["calling_convention_version"])
    if version != CALLING_CONVENTION_VERSION:
        raise errors.ExportError(f"cannot deserialize: calling convention version {version}; "
                                 f"this yax supports {CALLING_CONVENTION_VERSION}")
    name = str(meta["fun_name"])
    constraints = [str(c) for c in meta.get("constraints", [])]
    scope = symbolic.SymbolicScope(constraints) if constraints else None
    in_avals = [serialization.decode_aval(a, scope) for a in meta["in_avals"]]
    out_avals = [serialization.decode_aval(a, scope) for a in meta["out_avals"]]
    platforms = [str(p) for p in meta["platforms"]]
    which = [int(i) for i in meta.get("platform_modules", [meta["module"]] * len(platforms))]
    if len(which) != len(platforms) or not platforms:
        raise errors.ExportError("cannot deserialize: the metadata's platforms and modules "
                                 "disagree (corrupt)")
    by_index = {}
    for i in sorted(set(which)):
        _check_bytecode(modules[i], name, in_avals, out_avals)
        by_index[i] = ExportedModule(modules[i], in_avals, out_avals, name)
    vjp = _from_meta(meta["vjp"], modules) if meta["vjp"] is not None else None
    in_tree = serialization.decode_tree(meta["in_tree"])
    out_tree = serialization.decode_tree(meta["out_tree"])
    if in_tree.num_leaves != len(in_avals) or out_tree.num_leaves != len(out_avals):
        raise errors.ExportError("cannot deserialize: the pytree structures and avals in the "
                                 "metadata disagree (corrupt)")
    return Exported(fun_name=name, in_tree=in_tree, out_tree=out_tree, in_avals=in_avals,
                    out_avals=out_avals, platforms=platforms,
                    modules={p: by_index[i] for p, i in zip(platforms, which, strict=True)},
                    vjp=vjp, calling_convention_version=version,
                    disabled_safety_checks=[safety.DisabledSafetyCheck(str(c))
                                            for c in meta.get("disabled_checks", [])])


_CHECK_CONTEXT: list = []


def _check_context() -> ir.Context:
    """One MLIR context for the checks: making one costs milliseconds (it loads the dialects),
    more than parsing a small module; a parsed module is freed with its Python object."""
    if not _CHECK_CONTEXT:
        _CHECK_CONTEXT.append(mlir.make_context())
    return _CHECK_CONTEXT[0]


def _check_bytecode(bytecode: bytes, name: str, in_avals, out_avals) -> None:
    """Parse the module once now and check that its `main` has the metadata's types, so a bad
    module fails here, clearly, and not inside XLA at call time."""
    ctx = _check_context()
    try:
        with ctx, ir.Location.unknown():
            module = stablehlo.deserialize_portable_artifact(ctx, bytecode)
            mains = [op for op in module.body.operations if op.operation.name == "func.func"
                     and ir.StringAttr(op.attributes["sym_name"]).value == "main"]
            got = str(mains[0].type) if mains else None
            want = str(ir.FunctionType.get([mlir.aval_type(a) for a in in_avals],
                                           [mlir.aval_type(a) for a in out_avals]))
    except Exception as e:  # MLIR reports unreadable bytecode with assorted error types
        raise errors.ExportError(f"cannot deserialize {name}: its StableHLO bytecode does not "
                                 f"parse ({type(e).__name__}: {e})") from None
    if got != want:
        raise errors.ExportError(f"cannot deserialize {name}: its module's main has type {got} "
                                 f"but the metadata describes {want} (corrupt or foreign)")
