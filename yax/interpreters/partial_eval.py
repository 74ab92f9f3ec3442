"""Partial evaluation: run what is known now, stage what is not.

A PartialEvalTrace is a staging trace whose own tracers are the *unknown* values; everything else
(concrete Arrays, tracers of enclosing transformations) is known. An application with only known
inputs is handed to the parent trace (computed now, or staged one level out); one with an unknown
input is recorded in this trace's jaxpr, and the known values it reads become the jaxpr's consts:
the residuals. Under forward-mode differentiation with the tangents unknown, this splits a function
into its primal computation and a linear jaxpr of the tangents: `linearize`.
"""

from __future__ import annotations

from yax.core.ir import ClosedJaxpr, Jaxpr
from yax.core.trace import current_trace, run_in_trace, use_trace
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.staging import StagingTrace, StagingTracer, trace_to_jaxpr
from yax.runtime.values import aval_of


class PartialEvalTrace(StagingTrace):
    name = "partial evaluation (linearize/grad)"
    linearizes = True  # a JVP tracer whose tangent lives here prints as jax's GradTracer
    passes_custom_calls = True
    defers = False  # stages only tangents: primal Ref writes happen as the function runs

    def is_unknown(self, x) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self

    def is_unknown_tangent(self, x) -> bool:
        return self.is_unknown(x)

    # unlike jit's staging, a custom function's traced jaxpr is reused here
    def process_custom_jvp_call(self, call, args):
        return call.bind_call(args)

    def process_custom_vjp_call(self, call, args):
        return call.bind_call(args)

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
    return [aval_of(x) for x in xs]


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
