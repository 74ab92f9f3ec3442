"""Forward-mode differentiation: each value is paired with its tangent.

A JVPTracer holds (primal, tangent); tangents may be symbolic `Zero`s. A primitive's `jvp` rule
runs with the parent trace current, so the primal and tangent computations it binds are processed
one level out (evaluated, staged, or differentiated again). Values foreign to this trace (constants,
tracers of enclosing transformations) have zero tangents here, which keeps perturbations of nested
differentiations apart.
"""

from __future__ import annotations

from yax.core.ir import ClosedJaxpr
from yax.core.trace import Trace, Tracer, current_trace, run_in_trace, use_trace
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.interpreters.ad_util import instantiate as materialize
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import trace_to_jaxpr
from yax.runtime.values import aval_of


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return aval_of(self.primal)

    def to_concrete_or_none(self):
        p = self.primal
        return p.to_concrete_or_none() if isinstance(p, Tracer) else p

    def __repr__(self):
        # as jax: under linearize/grad (the tangent is being partially evaluated) the tracer
        # shows its tangent's type, under jvp the tangent itself
        if getattr(getattr(self.tangent, "_trace", None), "linearizes", False):
            tangent_type = self.tangent.aval.str_short()
            return f"GradTracer(primal={self.primal}, typeof(tangent)={tangent_type})"
        return f"JVPTracer(primal={self.primal}, tangent={self.tangent})"




class JVPTrace(Trace):
    name = "jvp (forward-mode differentiation)"
    passes_custom_calls = True

    # as JAX: a custom rule runs right away, with the primal values of the level below, and the
    # custom function itself is not traced
    def process_custom_jvp_call(self, call, args):
        return call.differentiate_now(self, args)

    def process_custom_vjp_call(self, call, args):
        return call.differentiate_now(self, args)

    def split(self, x):
        """(primal, tangent) of any value as seen by this trace."""
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return x, Zero(tangent_aval(aval_of(x)))

    def process_primitive(self, primitive, args, params) -> list:
        primals, tangents = zip(*(self.split(a) for a in args)) if args else ((), ())
        with use_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                outs = primitive.bind(*primals, **params)
                return list(outs) if primitive.multiple_results else [outs]
            primals_out, tangents_out = primitive.jvp(list(primals), list(tangents), **params)
        return [JVPTracer(self, p, t) if type(t) is not Zero else p
                for p, t in zip(primals_out, tangents_out, strict=True)]


def jvp_flat(fun, primals, tangents) -> tuple[list, list]:
    """Run `fun(*primal_tracers)` (flat lists) forward-differentiated; returns the primal and
    tangent outputs (tangents possibly `Zero`)."""
    trace = JVPTrace(current_trace())
    ins = [JVPTracer(trace, p, t) if type(t) is not Zero else p
           for p, t in zip(primals, tangents, strict=True)]
    pairs = run_in_trace(trace, fun, ins, lambda outs: [trace.split(o) for o in outs])
    return [p for p, _ in pairs], [t for _, t in pairs]


def jvp_jaxpr(closed: ClosedJaxpr, nonzero_tangents: list[bool],
              instantiate: bool | list[bool] = True) -> tuple[ClosedJaxpr, list[bool]]:
    """A jaxpr computing (primals_out..., nonzero tangents_out...) from (primals..., nonzero
    tangents...). Returns it and which output tangents are nonzero."""
    in_avals = closed.in_avals
    n_in = len(in_avals)
    out_nonzero_box = []
    inst = instantiate if isinstance(instantiate, list) else [instantiate] * len(closed.out_avals)

    def fun(*args):
        primals, tangent_args = list(args[:n_in]), iter(args[n_in:])
        tangents = [next(tangent_args) if nz else Zero(tangent_aval(a))
                    for nz, a in zip(nonzero_tangents, in_avals, strict=True)]
        p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, xs),
                                primals, tangents)
        t_out = [materialize(t) if i else t for t, i in zip(t_out, inst, strict=True)]
        out_nonzero_box.append([type(t) is not Zero for t in t_out])
        return p_out + [t for t in t_out if type(t) is not Zero]

    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero_tangents) if nz]
    result = trace_to_jaxpr(fun, list(in_avals) + tangent_avals, name="jvp")
    return result, out_nonzero_box[0]
