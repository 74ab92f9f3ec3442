"""Staging: record primitive applications into a jaxpr instead of running them.

Used by `jit`, `make_jaxpr` and (later) control-flow bodies, custom derivatives and checkpoint.
Values that are not this trace's own tracers (concrete Arrays, NumPy data, tracers of enclosing
transformations) become constvars; Python and NumPy scalars become inline literals.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import functools
import itertools
import warnings

import numpy as np

from yax import errors, tree_util
from yax.compile import cache as compile_cache
from yax.config import config
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar, aval_of_value
from yax.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, SourceInfo, Var, subjaxprs
from yax.core.trace import Trace, Tracer, current_trace, run_in_trace
from yax.core.typecheck import check_jaxpr
from yax.runtime.array import Array


class StagingTracer(Tracer):
    # `aval` is a slot, not a property reading `_var.aval`: it is read for every operand of
    # every op traced (a var's aval never changes)
    __slots__ = ("_var", "_source", "aval")

    def __init__(self, trace, var: Var, source=None):
        self._trace = trace
        self._var = var
        self._source = source
        self.aval = var.aval

    @property
    def source(self):
        return self._source

    def __repr__(self):
        return f"JitTracer({self.aval.str_long()})"  # as jax names a staged value


class ScopedSourceInfo(SourceInfo):
    """A source location inside `named_scope`s: `scope` is the joined name ("outer/inner")."""

    def __new__(cls, filename, lineno, function, scope: str):
        self = super().__new__(cls, filename, lineno, function)
        self.scope = scope
        return self


_name_stack: contextvars.ContextVar[tuple] = contextvars.ContextVar("yax_name_stack",
                                                                   default=())


@contextlib.contextmanager
def name_scope(name: str):
    """Push `name` on the name stack for the equations staged inside (yax.named_scope)."""
    token = _name_stack.set(_name_stack.get() + (name,))
    try:
        yield
    finally:
        _name_stack.reset(token)


class FrameSourceInfo(SourceInfo):
    """A source location that also knows where on its line the call starts and the qualified
    name of its function, as jax summarises a location ("file:line:column (qualname)", in
    print_saved_residuals). Both are worked out only when asked for: staging keeps just the
    code object and the instruction offset."""

    def __new__(cls, frame):
        code = frame.f_code
        self = super().__new__(cls, code.co_filename, frame.f_lineno, code.co_name)
        self._code, self._lasti = code, frame.f_lasti
        return self

    @property
    def column(self) -> int | None:
        positions = getattr(self._code, "co_positions", None)
        if positions is None or self._lasti < 0:
            return None
        for _, _, col, _ in itertools.islice(positions(), self._lasti // 2, None):
            return col
        return None

    @property
    def qualname(self) -> str:
        return getattr(self._code, "co_qualname", self.function)


def _source_info() -> SourceInfo | None:
    stack = _name_stack.get()
    replay = errors.replay_source[0]
    if replay is not None:
        if type(replay) is FrameSourceInfo and not stack:
            return replay  # a re-staged equation keeps its line (and column)
        loc = tuple(replay)
    else:
        frame = errors.user_frame(2)
        if frame is None:
            return None
        if not stack:
            return FrameSourceInfo(frame)
        loc = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    if stack:
        return ScopedSourceInfo(*loc, "/".join(stack))
    return SourceInfo(*loc)


class StagingTrace(Trace):
    name = "staging (jit/make_jaxpr)"
    # Refs this trace captured (ref_state.allow_refs; None: its caller cannot thread refs)
    ref_values: dict | None = None
    ref_inputs: dict | None = None
    ref_order: list | None = None
    # whether the staged program runs later (jit, control flow), not now as it is traced (the
    # tangent programs of differentiation): a Ref write seen now would then be misplaced
    defers = True
    # whether Refs are staged as values of type Ref{...} with get/swap equations (make_jaxpr
    # shows them so, as jax) instead of their values being threaded (ref_state.allow_refs)
    stages_refs = False

    def __init__(self, parent: Trace):
        super().__init__(parent)
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.const_vars: dict[int, Var] = {}
        self.const_values: list = []

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def to_atom(self, x):
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._var
            self.check_foreign(x)
            return self._const_var(x, x.aval)
        if type(x) is TypedScalar:
            return Literal(x.value, x.aval)
        if isinstance(x, (bool, int, float, complex, np.generic)) or (
                isinstance(x, np.ndarray) and x.shape == ()):
            return _literal(x)
        return self._const_var(x, aval_of_value(x))

    def _const_var(self, x, aval) -> Var:
        var = self.const_vars.get(id(x))
        if var is None:
            var = self.const_vars[id(x)] = Var(aval)
            self.const_values.append(x)
        return var

    def process_primitive(self, primitive, args, params) -> list:
        atoms = [self.to_atom(a) for a in args]
        out_avals = primitive.out_avals([a.aval for a in atoms], params)
        if primitive.fold is not None:
            folded = primitive.fold(atoms, out_avals, **params)
            if folded is not None:  # no equation: a Literal, or an input passed through
                return [StagingTracer(self, atom) for atom in folded]
        outvars = [Var(a) for a in out_avals]
        source = _source_info()
        self.eqns.append(Eqn(primitive, atoms, params, outvars, source))
        return [StagingTracer(self, v, source) for v in outvars]

    def to_jaxpr(self, outs, dce: bool = True) -> ClosedJaxpr:
        return self.jaxpr_with_outputs(self.output_vars(outs), dce)

    def output_vars(self, outs) -> list:
        """The vars of the program's outputs `outs` (a literal becomes a const: outputs must be
        vars). Read while this trace is alive; `jaxpr_with_outputs` may follow later."""
        outvars = []
        for x in outs:
            atom = self.to_atom(x)
            if isinstance(atom, Literal):
                atom = self._const_var(np.asarray(atom.val, atom.aval.dtype), atom.aval)
            outvars.append(atom)
        return outvars

    def jaxpr_with_outputs(self, outvars: list, dce: bool = True) -> ClosedJaxpr:
        """The staged program returning `outvars` (from `output_vars`)."""
        eqns = dead_code_eliminated(self.eqns, outvars) if dce else list(self.eqns)
        used = {a for e in eqns for a in e.inputs if isinstance(a, Var)} | set(outvars)
        # constants only the dropped equations read are dropped too
        kept = [(v, c) for v, c in zip(self.const_vars.values(), self.const_values) if v in used]
        return ClosedJaxpr(Jaxpr([v for v, _ in kept], self.invars, eqns, outvars),
                           [c for _, c in kept])

    def describe_origin(self, tracer):
        return describe_origin(self, tracer._var) if hasattr(self, "origin_info") else None

    # as JAX under jit: the custom function is traced anew each time this trace runs (jit
    # caches that itself), so its Python side effects show as in JAX
    def process_custom_jvp_call(self, call, args):
        return call.bind_call(args, reuse=False)

    def process_custom_vjp_call(self, call, args):
        return call.bind_call(args, reuse=False)


def dead_code_eliminated(eqns: list, outvars: list) -> list:
    """Drop equations whose results nothing uses, except those with side effects (host
    callbacks such as debug.print, directly or inside a sub-program)."""
    live = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(eqns):
        if any(v in live for v in eqn.outvars) or has_effects(eqn):
            kept.append(eqn)
            live.update(a for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    return kept


_effects_memo: dict = {}


def has_effects(eqn, rule_name: str = "has_effect") -> bool:
    """Whether `eqn` has a side effect: its primitive says so for these params
    (`primitive.has_effect(params)`), or a jaxpr among its params contains such an equation.
    With rule_name="ordered_effect": whether it has an effect that must keep program order."""
    rule = getattr(eqn.primitive, rule_name, None)
    if rule is not None and rule(eqn.params):
        return True
    return any(jaxpr_has_effects(j, rule_name) for j in subjaxprs(eqn))


def jaxpr_has_effects(jaxpr, rule_name: str = "has_effect") -> bool:
    """Whether any equation of `jaxpr` (a Jaxpr or ClosedJaxpr, nested ones included) has a side
    effect (see has_effects). Memoised per jaxpr object."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    key = (id(jaxpr), rule_name)
    hit = _effects_memo.get(key)
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    result = any(has_effects(e, rule_name) for e in jaxpr.eqns)
    if len(_effects_memo) > 4096:
        _effects_memo.clear()
    _effects_memo[key] = (jaxpr, result)  # the jaxpr is kept so its id stays unique
    return result


# the memo keeps jaxprs (and what their params hold: custom rules and what they close over)
compile_cache.on_clear(_effects_memo.clear)


def _literal(x) -> Literal:
    dt, weak = dtypes.scalar_type_of(x)
    dt = dtypes.canonicalize(dt, warn=True)
    val = x if dtypes.is_python_scalar(x) else np.asarray(x, dtype=dt)
    return Literal(val, ShapedArray((), dt, weak))


def trace_to_jaxpr(fun, in_avals, *, name: str = "fun", origin=None,
                   dce: bool = True) -> ClosedJaxpr:
    """Trace `fun(*tracers)` (flat arguments, flat list of outputs) into a closed jaxpr.

    The jaxpr's consts may include tracers of enclosing transformations; callers that stage the
    result under another trace pass those as explicit operands (see `closure_convert`).
    `origin` says where the flat inputs come from, for error messages that name the argument
    a traced value depends on: one name per input, or `(fun, in_tree, static_positions)` of a
    jitted function whose flat inputs are the leaves of `(dynamic_args, dynamic_kwargs)` (the
    names are then worked out only when an error needs them).
    `dce=False` keeps equations whose results nothing reads (make_jaxpr shows them, as JAX's
    does, with `_` binders); every program that is run or transformed drops them.
    """
    trace = StagingTrace(current_trace())
    trace.origin_info = (name, origin)
    args = [trace.new_arg(a) for a in in_avals]
    closed = run_in_trace(trace, fun, args, functools.partial(trace.to_jaxpr, dce=dce))
    _warn_if_large(closed.jaxpr, name)
    if config.enable_checks:
        check_jaxpr(closed.jaxpr)
    return closed


def closure_convert(closed: ClosedJaxpr, *, embed_small: bool = False) -> tuple[ClosedJaxpr, list]:
    """Move consts to leading invars: returns the jaxpr and the values to pass.

    With `embed_small`, small concrete consts (NumPy arrays or one-device Arrays of at most
    EMBEDDED_CONST_BYTES, such as the basis vectors of jacfwd/jacrev) stay consts of the
    returned jaxpr, so its lowering embeds them and XLA folds them into the program as it folds
    jax's `iota`-built ones (the same rounding as jax's compiled derivatives); the others
    become invars."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    keep = [embed_small and _embeddable(c) for c in closed.consts]
    kept = [(v, c) for v, c, k in zip(j.constvars, closed.consts, keep, strict=True) if k]
    moved = [(v, c) for v, c, k in zip(j.constvars, closed.consts, keep, strict=True) if not k]
    converted = Jaxpr([v for v, _ in kept], [v for v, _ in moved] + list(j.invars), j.eqns,
                      j.outvars)
    return ClosedJaxpr(converted, [c for _, c in kept]), [c for _, c in moved]


EMBEDDED_CONST_BYTES = 256


def _embeddable(value) -> bool:
    """A concrete value small enough to embed (a yax Array on one device, or NumPy)."""
    if type(value) is np.ndarray:
        return value.nbytes <= EMBEDDED_CONST_BYTES
    if type(value) is Array and len(value.devices()) == 1:
        aval = value.aval
        return aval.size * aval.dtype.itemsize <= EMBEDDED_CONST_BYTES
    return False


_warned_lines: set = set()


def _warn_if_large(jaxpr: Jaxpr, name: str) -> None:
    """Python loops unroll into huge programs: say which line did it and what to use instead."""
    limit = config.large_jaxpr_warning
    if not limit or len(jaxpr.eqns) <= limit:
        return
    lines = collections.Counter((e.source.filename, e.source.lineno)
                                for e in jaxpr.eqns if e.source)
    if not lines:
        return
    (filename, lineno), count = lines.most_common(1)[0]
    if (filename, lineno) in _warned_lines:
        return
    _warned_lines.add((filename, lineno))
    warnings.warn_explicit(
        f"tracing {name} produced {len(jaxpr.eqns)} equations, {count} of them from "
        f"{filename}:{lineno}; a Python loop there is probably unrolled into the program. Use "
        f"yax.lax.scan or yax.lax.fori_loop to keep compile time down.",
        UserWarning, filename, lineno)


# --- where a traced value comes from (for concretization errors) -----------------------------

def describe_origin(trace: StagingTrace, var: Var):
    """(function name, [(argument name, positional index or None)]) of the inputs of `trace`
    that `var` depends on, or None when the trace has no argument names."""
    name, arg_names = getattr(trace, "origin_info", (None, None))
    if arg_names is None:
        return None
    names = _flat_arg_names(arg_names, len(trace.invars))
    producer = {v: e for e in trace.eqns for v in e.outvars}
    position = {v: i for i, v in enumerate(trace.invars)}
    seen, stack, found = set(), [var], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in position:
            found.add(position[v])
        elif v in producer:
            stack.extend(a for a in producer[v].inputs if isinstance(a, Var))
    return name, [names[i] for i in sorted(found) if i < len(names)]


def _flat_arg_names(arg_names, n: int) -> list:
    if not (isinstance(arg_names, tuple) and len(arg_names) == 3 and callable(arg_names[0])):
        return [(str(a), None) for a in arg_names]
    fun, in_tree, static_pos = arg_names
    try:
        import inspect
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    placeholder = tree_util.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    out = []
    for path, _ in tree_util.tree_flatten_with_path(placeholder)[0]:
        if getattr(path[0], "idx", None) == 0:  # a positional argument
            index = _positional_index(path[1].idx, static_pos)
            base = params[index] if index < len(params) else f"args[{index}]"
        else:
            index, base = None, str(getattr(path[1], "key", path[1]))
        out.append((base + tree_util.keystr(tuple(path[2:])), index))
    return out


def _positional_index(dynamic_index: int, static_pos) -> int:
    """The position among all arguments of the `dynamic_index`-th non-static one."""
    i, seen = 0, -1
    while True:
        if i not in static_pos:
            seen += 1
            if seen == dynamic_index:
                return i
        i += 1
