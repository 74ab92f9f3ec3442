"""The tape of eager reverse mode: record the primal program while the function runs.

Eager `vjp`/`grad` must run the function's Python on every call (it may branch on values), but
differentiating each primitive as it runs costs a JVP rule, a staged tangent equation and an
executable launch per primitive, and the backward pass as many again. Instead the function runs
once under a `TapeTrace`, which records the primitives applied to the differentiated inputs
without running them; a value is computed (eagerly, op by op) only when Python asks for it (an
`if` on it, `float(x)`...). The caller then runs the recorded program, and its vjp, compiled
once per recorded structure (see eager_ad.py).

Two kinds of application cannot simply be recorded, and are differentiated at once instead,
with the values known so far (`TapeTrace.linearized_now`):
- calls of custom_jvp/custom_vjp functions: as in JAX their rules run right away with concrete
  primal values (a rule may branch on them), and the function itself is not traced;
- applications with side effects (debug.print, callbacks, a jitted function that prints): they
  run exactly once, now, in program order.
The tape then records one `custom_jvp_call` whose outputs are the values just computed and
whose JVP is the linear map just staged, so the recorded program stays differentiable.
"""

from __future__ import annotations

import operator
import weakref
from itertools import compress

from yax import errors, tree_util
from yax.compile import cache
from yax.config import config
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from yax.core.trace import current_trace, run_in_trace, use_trace
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr, read_typed
from yax.interpreters.partial_eval import linearize_flat
from yax.interpreters.staging import StagingTrace, StagingTracer, closure_convert, has_effects
from yax.primitives.ad_control import stop_gradient_p
from yax.primitives.call import pjit_p
from yax.primitives.custom_derivatives import JVPRule, custom_jvp_call_p
from yax.runtime.values import as_operand, canonical_leaf, to_array
from yax.transforms.eager_compiled import eqn_signature, jaxpr_structure_key, literal_key


class TapeTracer(StagingTracer):
    """A value of the tape being recorded: its variable, and its concrete value once computed."""

    __slots__ = ("value", "__weakref__")

    def __init__(self, trace, var, value=None):  # StagingTracer's fields, set in one frame
        self._trace = trace
        self._var = var
        self._source = None
        self.aval = var.aval
        self.value = value

    def to_concrete_or_none(self):
        if self.value is None:
            self._trace.evaluate()
        return self.value

    def __repr__(self):  # as jax shows a value being differentiated in reverse mode
        tangent = tangent_aval(self.aval).str_short()
        return f"GradTracer(primal={self.to_concrete_or_none()}, typeof(tangent)={tangent})"


class TapeTrace(StagingTrace):
    """Records primitives applied to its tracers; values are computed on demand."""

    name = "jvp (forward-mode differentiation)"
    passes_custom_calls = True  # a custom call on constants only just runs, eagerly
    defers = False  # primal values are computed as the function runs (Refs are written now)

    def __init__(self, parent):
        super().__init__(parent)
        self.env: dict = {}  # var -> concrete value, for the vars computed so far
        # (eqn, weak references to its out tracers) not yet evaluated. Weak: each tracer points
        # back at this tape, so strong ones would make the tape and everything it recorded a
        # reference cycle that only the garbage collector frees; one such cluster per eager
        # grad call made the collector run every few calls (about a tenth of a call's time)
        self.pending: list = []
        # the vars whose tangent may be nonzero: the recorded program's JVP will differentiate
        # them (stop_gradient and integer results end that)
        self.live: set = set()
        # the recorded program's structure, built as it is recorded (`structure_key`): an id
        # per var in order of creation, and a part per input, const and equation
        self.ids: dict = {}
        self.parts: list = []
        self.comparable = True  # False once a param cannot be hashed: the key is None
        self.by_identity = False  # some param compares as an object (see jaxpr_structure_key)
        self.calls_jit = False  # a jitted function is applied at the top level
        self.outvars: list | None = None  # set when the function returns (record_tape)
        self._closed: ClosedJaxpr | None = None

    def new_tape_arg(self, value) -> TapeTracer:
        aval = value.aval
        var = Var(aval)
        self.invars.append(var)
        self._number(var, ("in", aval))
        self.env[var] = value
        if aval.dtype in dtypes.INEXACT:
            self.live.add(var)
        return TapeTracer(self, var, value)

    def lower_value(self, x):
        return None if x._var in self.live else x.to_concrete_or_none()

    def _is_live(self, x) -> bool:
        return self._owns(x) and x._var in self.live

    def _const_var(self, x, aval) -> Var:
        known = len(self.const_values)
        var = super()._const_var(x, aval)
        if len(self.const_values) != known:  # a new const (a value read again keeps its var)
            self._number(var, ("const", aval))
        self.env[var] = x
        return var

    def _number(self, var, part) -> None:
        self.ids[var] = len(self.ids)
        self.parts.append(part)

    def _record_part(self, signature, by_identity: bool, atoms: list, outvars: list) -> None:
        """Add a recorded equation to the structure: its signature and its inputs' ids."""
        if not self.comparable:
            return
        if signature is None:
            self.comparable = False
            return
        ids = self.ids
        try:
            ins = tuple(map(ids.__getitem__, atoms))
        except KeyError:  # a literal among the inputs: keyed by its value
            ins = tuple([ids[a] if type(a) is Var else literal_key(a) for a in atoms])
        for v in outvars:
            ids[v] = len(ids)
        self.parts.append((signature, ins))
        if by_identity:
            self.by_identity = True

    def _owns(self, x) -> bool:
        return type(x) is TapeTracer and x._trace is self

    def process_primitive(self, primitive, args, params) -> list:
        # `_owns` and `_is_live` written out as loops: this runs for every primitive of every
        # eager grad call, and generator expressions cost a frame each
        for a in args:
            if type(a) is TapeTracer and a._trace is self:
                break
        else:
            with use_trace(self.parent):  # constants: computed now, not recorded
                outs = primitive.bind(*args, **params)
            return list(outs) if primitive.multiple_results else [outs]
        # this runs for every primitive of every eager grad call: C-level builtins (map,
        # isdisjoint, compress, tuple.__new__) stand in for comprehensions and Python
        # constructors, each of which would cost a frame
        atoms = [a._var if type(a) is TapeTracer and a._trace is self else self.to_atom(a)
                 for a in args]
        out_avals, inexact, effectful, signature, by_identity = _recorded_form(
            primitive, list(map(_aval_of_atom, atoms)), params)
        # runs once, now, in program order; so does the fwd of a custom_vjp inside (as jax runs
        # it when it linearizes the program, before any backward pass)
        if effectful:
            outs = self.linearized_now(lambda *xs: primitive.bind(*xs, **params), args)
            return list(outs) if primitive.multiple_results else [outs]
        outvars = list(map(Var, out_avals))
        eqn = tuple.__new__(Eqn, (primitive, atoms, params, outvars, None))
        self.eqns.append(eqn)
        self._record_part(signature, by_identity, atoms, outvars)
        if primitive is pjit_p:
            self.calls_jit = True
        if primitive is not stop_gradient_p and not self.live.isdisjoint(atoms):
            self.live.update(compress(outvars, inexact))
        tracers = [TapeTracer(self, v) for v in outvars]
        self.pending.append((eqn, list(map(weakref.ref, tracers))))
        return tracers

    def process_custom_jvp_call(self, call, args):
        return self._custom_call(call, args)

    def process_custom_vjp_call(self, call, args):
        return self._custom_call(call, args)

    def _custom_call(self, call, args):
        try:
            return self.linearized_now(call, args)
        except errors.UnexpectedTracerError as err:
            if "already finished" in err.bare_message:
                raise
            # the function or its rule closes over a value of this tape: record the call, whose
            # rule then says why that cannot be differentiated
            return call.bind_call(args)

    def evaluate(self) -> None:
        """Compute every recorded value not computed yet (eagerly, one primitive at a time)."""
        pending, self.pending = self.pending, []
        env = self.env
        with use_trace(self.parent):
            for eqn, tracers in pending:
                outs = eqn.primitive.bind(*[read_typed(a, env.__getitem__) for a in eqn.inputs],
                                          **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
                for v, ref, o in zip(eqn.outvars, tracers, outs, strict=True):
                    env[v] = o
                    tracer = ref()
                    if tracer is not None:  # one nobody holds needs no value
                        tracer.value = o

    def structure_key(self):
        """(key, by_identity): a hashable key equal for two recordings of the same program (the
        same equations, params, literals and avals, in the same order, and the same outputs),
        and whether some param compares as an object; (None, False) when a param cannot be
        hashed. Built as the program was recorded: it costs one tuple here, where keying the
        finished jaxpr (`jaxpr_structure_key`) walks every equation again."""
        if not self.comparable:
            return None, False
        ids = self.ids
        key = RecordedKey((tuple(self.parts), tuple([ids[v] for v in self.outvars])))
        return key, self.by_identity

    def closed_jaxpr(self) -> ClosedJaxpr:
        """The recorded program, from the inputs to the outputs, dead code removed."""
        if self._closed is None:
            self._closed = self.jaxpr_with_outputs(self.outvars)
        return self._closed

    def const_positions(self, closed: ClosedJaxpr) -> list:
        """Where each const of `closed` (this tape's program) sits among all the consts this
        recording read: a program compiled for one recording takes the consts of another of
        the same structure as `[tape.const_values[i] for i in positions]`."""
        position = {v: i for i, v in enumerate(self.const_vars.values())}
        return [position[v] for v in closed.jaxpr.constvars]

    def linearized_now(self, fun, args):
        """`fun(*args)` (pytrees in, a pytree out) computed and linearized now, with the
        concrete values of this tape's tracers; recorded as one application whose outputs are
        those values and whose JVP is the linear map (see the module docstring)."""
        self.evaluate()
        leaves, tree = tree_util.tree_flatten(args)
        diff = [self._is_live(x) for x in leaves]
        values = [x.value if self._owns(x) else x for x in leaves]
        box = []

        def flat(*primals):
            it = iter(primals)
            full = [next(it) if d else v for v, d in zip(values, diff, strict=True)]
            out_leaves, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(tree,
                                                                                        full)))
            box.append(out_tree)
            return [as_operand(o) for o in out_leaves]
        with use_trace(self.parent):
            outs, linear, nonzero = linearize_flat(flat, [v for v, d in zip(values, diff) if d])
        outs = [_concrete(o) for o in outs]
        if any(nonzero):
            diff_in = [x for x, d in zip(leaves, diff) if d]
            outs = self._record_linearized(diff_in, outs, linear, nonzero)
        return tree_util.tree_unflatten(box[0], outs)

    def _record_linearized(self, diff_in: list, outs: list, linear: ClosedJaxpr,
                           nonzero: list) -> list:
        linear, res = closure_convert(linear)
        res = [_concrete(r) for r in res]
        operands = [*diff_in, *res, *outs]
        call_jaxpr, rule = _linear_map_rule(linear, nonzero, len(diff_in),
                                            [x.aval for x in operands])
        params = dict(call_jaxpr=call_jaxpr, rule=rule, num_consts=0)
        atoms = [self.to_atom(a) for a in operands]
        outvars = [Var(a) for a in call_jaxpr.out_avals]
        self.eqns.append(Eqn(custom_jvp_call_p, atoms, params, outvars, None))
        self._record_part(*eqn_signature(custom_jvp_call_p, params, call_jaxpr.out_avals), atoms,
                          outvars)
        for v, o, nz in zip(outvars, outs, nonzero, strict=True):
            self.env[v] = o
            if nz:
                self.live.add(v)
        return [TapeTracer(self, v, o) for v, o in zip(outvars, outs, strict=True)]


_aval_of_atom = operator.attrgetter("aval")


class RecordedKey:
    """A recorded program's key: compared as its tuple of parts, hashed once (each program
    cache lookup hashes it, and a deep tuple's hash is computed anew every time)."""

    __slots__ = ("parts", "_hash")

    def __init__(self, parts: tuple):
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (type(other) is RecordedKey and self._hash == other._hash
                and self.parts == other.parts)


def _concrete(x):
    """A value computed now, as an Array (a const of the recorded program, never a literal)."""
    return to_array(x) if type(x) is TypedScalar else canonical_leaf(x)


_linear_rules = cache.new_cache("eager linearized calls")


def _linear_map_rule(linear: ClosedJaxpr, nonzero: list, n_diff: int, operand_avals: list):
    """(call_jaxpr, rule) of an application recorded by `linearized_now`. Its operands are
    (differentiated inputs..., residuals..., outputs...); it returns the outputs, and its JVP
    applies the const-free `linear` (residuals..., input tangents...) -> nonzero output
    tangents. Cached per structure, so that the same recorded program gives equal params (not
    when the map holds a rule object: a custom_vjp's bwd then runs on every call, as in JAX)."""
    structure, by_identity = jaxpr_structure_key(linear.jaxpr)
    reusable = structure is not None and not by_identity
    key = (structure, tuple(nonzero), n_diff, tuple(operand_avals))
    hit = _linear_rules.get(key) if reusable else None
    if hit is not None:
        return hit
    n_res = len(linear.jaxpr.invars) - n_diff
    invars = [Var(a) for a in operand_avals]
    out_avals = operand_avals[n_diff + n_res:]
    call_jaxpr = ClosedJaxpr(Jaxpr([], invars, [], invars[n_diff + n_res:]), [])

    def jvp(primals, tangents):
        res, outs = primals[n_diff:n_diff + n_res], primals[n_diff + n_res:]
        t_out = iter(eval_jaxpr(linear.jaxpr, [], [*res, *tangents[:n_diff]]))
        return list(outs), [next(t_out) if nz else Zero(tangent_aval(a))
                            for nz, a in zip(nonzero, out_avals, strict=True)]
    entry = (call_jaxpr, JVPRule(jvp, "eager linearized call"))
    if reusable:
        _linear_rules.put(key, entry)
    return entry


# a plain dict, not an LRU: it is read once per recorded op, and a hit must stay one lookup;
# its keys hold params (custom rules, jaxprs), so yax.clear_caches empties it too
_forms: dict = {}
cache.on_clear(_forms.clear)


_PLAIN = frozenset({int, float, bool, str, type(None)})


def _holds_program(value) -> bool:
    """Whether a param value is, or nests in tuples and lists, a (Closed)Jaxpr. The dimension
    tuples of most primitives are ints: they are passed over without a call per element."""
    t = type(value)
    if t in _PLAIN:
        return False
    if t is tuple or t is list:
        for v in value:
            if type(v) not in _PLAIN and _holds_program(v):
                return True
        return False
    if isinstance(value, (ClosedJaxpr, Jaxpr)):
        return True
    return isinstance(value, (tuple, list)) and any(_holds_program(v) for v in value)


def _effectful(primitive, params: dict) -> bool:
    """`has_effects(eqn) or has_effects(eqn, "runs_user_fwd")` of an equation applying
    `primitive` with `params`: the params are walked for sub-programs once, and only those
    holding one pay for the full walk."""
    for name in ("has_effect", "runs_user_fwd"):
        rule = getattr(primitive, name, None)
        if rule is not None and rule(params):
            return True
    for value in params.values():
        if type(value) not in _PLAIN and _holds_program(value):
            eqn = Eqn(primitive, [], params, [], None)
            return has_effects(eqn) or has_effects(eqn, "runs_user_fwd")
    return False


def _recorded_form(primitive, avals: list, params: dict) -> tuple:
    """(out avals, whether each is inexact, whether it has effects, signature, by_identity: see
    `eqn_signature`) of an equation applying `primitive` to operands of `avals`. All are pure
    functions of the primitive, avals and params: recording the same program again reuses
    them, at one lookup per op (shape errors are raised, never cached)."""
    try:
        key = (primitive, tuple(avals), tuple(params.items()), config.enable_x64)
        hit = _forms.get(key)
    except TypeError:  # an unhashable param (the signature is None: no reuse)
        return _form(primitive, avals, params)
    if hit is None:
        hit = _form(primitive, avals, params)
        if len(_forms) >= 8192:
            _forms.clear()
        _forms[key] = hit
    return hit


def _form(primitive, avals: list, params: dict) -> tuple:
    out_avals = primitive.out_avals(avals, params)
    inexact = tuple([dtypes.is_inexact(a.dtype) for a in out_avals])
    return (out_avals, inexact, _effectful(primitive, params),
            *eqn_signature(primitive, params, out_avals))


def record_tape(fun, values: list):
    """Run `fun(*values)`, recording the primitives applied to `values`. Returns (the outputs:
    tracers of the tape, or constants; the tape, whose `closed_jaxpr()` is the recorded program
    from `values` to the outputs, with the constants it read as consts, and whose `evaluate`
    computes the values)."""
    tape = TapeTrace(current_trace())
    ins = [tape.new_tape_arg(v) for v in values]

    def finish(outs):
        tape.outvars = tape.output_vars(outs)
        return outs, tape
    return run_in_trace(tape, fun, ins, finish)


def concrete_outputs(outs) -> list:
    """The values of the tape's outputs, None where not computed yet."""
    return [o.value if type(o) is TapeTracer else o for o in outs]
