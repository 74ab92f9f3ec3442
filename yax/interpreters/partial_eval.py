"""Partial evaluation: run what is known now, stage what is not.

A PartialEvalTrace is a staging trace whose own tracers are the *unknown* values; everything else
(concrete Arrays, tracers of enclosing transformations) is known. An application with only known
inputs is handed to the parent trace (computed now, or staged one level out); one with an unknown
input is recorded in this trace's jaxpr, and the known values it reads become the jaxpr's consts:
the residuals. Under forward-mode differentiation with the tangents unknown, this splits a function
into its primal computation and a linear jaxpr of the tangents: `linearize`.
"""

from __future__ import annotations

from yax.config import config
from yax.core.avals import aval_of_value
from yax.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from yax.core.trace import current_trace, run_in_trace, use_trace
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr, read_typed
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.staging import StagingTrace, StagingTracer, trace_to_jaxpr


class PartialEvalTrace(StagingTrace):
    name = "partial evaluation (linearize/grad)"

    def is_unknown(self, x) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self

    def process_primitive(self, primitive, args, params) -> list:
        if not any(self.is_unknown(a) for a in args):
            with use_trace(self.parent):
                outs = primitive.bind(*args, **params)
            return list(outs) if primitive.multiple_results else [outs]
        if primitive.partial_eval is not None:
            return primitive.partial_eval(self, args, params)
        return self.stage(primitive, args, params)

    def stage(self, primitive, args, params) -> list:
        """Record the application in this trace's jaxpr (its outputs are unknown)."""
        return StagingTrace.process_primitive(self, primitive, args, params)


def _avals(xs):
    return [getattr(x, "aval", None) or aval_of_value(x) for x in xs]


def linearize_flat(fun, primals) -> tuple[list, ClosedJaxpr, list[bool]]:
    """Evaluate `fun` at `primals` and build its linear map.

    Returns (primal outputs, linear jaxpr from input tangents to the nonzero output tangents, with
    the residuals as its consts, and a mask of which output tangents are nonzero).
    """
    pe = PartialEvalTrace(current_trace())
    tangents = [pe.new_arg(tangent_aval(a)) for a in _avals(primals)]

    def finish(outs):
        primals_out, tangents_out = outs
        nonzero = [type(t) is not Zero for t in tangents_out]
        linear = pe.to_jaxpr([t for t in tangents_out if type(t) is not Zero])
        return primals_out, linear, nonzero
    return run_in_trace(pe, lambda *ts: jvp_flat(fun, primals, ts), tangents, finish)


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns: list[bool],
                       instantiate: bool | list[bool] = False):
    """Split `closed` by which inputs are unknown.

    `instantiate` forces outputs to be unknown even when computable from known inputs (their
    known value then reaches the unknown program as a residual); loops use it to make a carry
    unknown on every iteration once it is unknown on one.

    Returns (known, unknown, out_unknowns, num_residuals):
      known:   known inputs -> (known outputs..., residuals...)
      unknown: (residuals..., unknown inputs...) -> unknown outputs
    """
    in_avals = closed.in_avals
    box = []

    def known_fun(*known_args):
        pe = PartialEvalTrace(current_trace())
        it = iter(known_args)
        args = [pe.new_arg(a) if u else next(it) for a, u in zip(in_avals, unknowns, strict=True)]

        def finish(outs):
            inst = instantiate if isinstance(instantiate, list) else [instantiate] * len(outs)
            out_unknowns = [pe.is_unknown(o) or i for o, i in zip(outs, inst, strict=True)]
            return outs, out_unknowns, pe.to_jaxpr([o for o, u in zip(outs, out_unknowns) if u])
        outs, out_unknowns, staged = run_in_trace(
            pe, lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, xs), args, finish)
        j = staged.jaxpr
        unknown = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), [])
        box.append((unknown, out_unknowns, len(staged.consts)))
        return [o for o, u in zip(outs, out_unknowns) if not u] + list(staged.consts)

    known_avals = [a for a, u in zip(in_avals, unknowns) if not u]
    known = trace_to_jaxpr(known_fun, known_avals, name="known")
    unknown, out_unknowns, num_res = box[0]
    return known, unknown, out_unknowns, num_res


# --- eager reverse mode: record the primal program, differentiate it compiled -----------------
# Eager `vjp`/`grad` must run the function's Python on every call (it may branch on values), but
# differentiating each primitive as it runs costs a JVP rule, a staged tangent equation and an
# executable launch per primitive, and the backward pass as many again. Instead the function runs
# under a `TapeTrace`, which records the primitives applied to the differentiated inputs without
# running them; a value is computed (eagerly, op by op) only when Python asks for it (an `if` on
# it, `float(x)`...). The caller then runs the recorded program, and its vjp, compiled once per
# recorded structure.


class TapeNotApplicable(Exception):
    """Raised inside a function being taped when a construct needs the general path: custom
    derivative rules must be called as JAX calls them (with concrete primal values, under a
    JVP trace), which recording cannot do. The caller runs the general path instead."""


class TapeTracer(StagingTracer):
    """A value of the tape being recorded: its variable, and its concrete value once computed."""

    __slots__ = ("value",)

    def __init__(self, trace, var, value=None):
        super().__init__(trace, var)
        self.value = value

    def to_concrete_or_none(self):
        if self.value is None:
            self._trace.evaluate()
        return self.value


class TapeTrace(StagingTrace):
    """Records primitives applied to its tracers; values are computed on demand."""

    name = "jvp (forward-mode differentiation)"

    def __init__(self, parent):
        super().__init__(parent)
        self.env: dict = {}  # var -> concrete value, for the vars computed so far
        self.pending: list = []  # (eqn, out tracers) not yet evaluated

    def new_tape_arg(self, value) -> TapeTracer:
        var = Var(value.aval)
        self.invars.append(var)
        self.env[var] = value
        return TapeTracer(self, var, value)

    def _const_var(self, x, aval) -> Var:
        var = super()._const_var(x, aval)
        self.env[var] = x
        return var

    def process_primitive(self, primitive, args, params) -> list:
        if not any(type(a) is TapeTracer and a._trace is self for a in args):
            with use_trace(self.parent):  # constants: computed now, not recorded
                outs = primitive.bind(*args, **params)
            return list(outs) if primitive.multiple_results else [outs]
        if getattr(primitive, "effects", None):  # effects run once, now, in program order
            self.evaluate()
            with use_trace(self.parent):
                outs = primitive.bind(*[self._concrete(a) for a in args], **params)
            return list(outs) if primitive.multiple_results else [outs]
        atoms = [self.to_atom(a) for a in args]
        outvars = [Var(a) for a in _cached_out_avals(primitive, [a.aval for a in atoms], params)]
        eqn = Eqn(primitive, atoms, params, outvars, None)
        self.eqns.append(eqn)
        tracers = [TapeTracer(self, v) for v in outvars]
        self.pending.append((eqn, tracers))
        return tracers

    def _concrete(self, x):
        return x.value if type(x) is TapeTracer and x._trace is self else x

    def evaluate(self) -> None:
        """Compute every recorded value not computed yet (eagerly, one primitive at a time)."""
        pending, self.pending = self.pending, []
        env = self.env
        with use_trace(self.parent):
            for eqn, tracers in pending:
                outs = eqn.primitive.bind(*[read_typed(a, env.__getitem__) for a in eqn.inputs],
                                          **eqn.params)
                outs = outs if eqn.primitive.multiple_results else [outs]
                for v, t, o in zip(eqn.outvars, tracers, outs, strict=True):
                    env[v] = t.value = o


_out_avals_cache: dict = {}


def _cached_out_avals(primitive, avals: list, params: dict) -> list:
    """Abstract evaluation is a pure function of avals and params: recording the same program
    again reuses its results (shape errors are raised, never cached)."""
    try:
        key = (primitive, tuple(avals), tuple(params.items()), config.enable_x64)
        hit = _out_avals_cache.get(key)
    except TypeError:  # an unhashable param
        return primitive.out_avals(avals, params)
    if hit is None:
        hit = primitive.out_avals(avals, params)
        if len(_out_avals_cache) >= 8192:
            _out_avals_cache.clear()
        _out_avals_cache[key] = hit
    return hit


def record_tape(fun, values: list):
    """Run `fun(*values)`, recording the primitives applied to `values`. Returns (the outputs:
    tracers of the tape, or constants; the recorded program from `values` to the outputs, with
    the constants it read as consts; the tape, whose `evaluate` computes the values)."""
    tape = TapeTrace(current_trace())
    ins = [tape.new_tape_arg(v) for v in values]
    return run_in_trace(tape, fun, ins, lambda outs: (outs, tape.to_jaxpr(outs), tape))
