"""`jax.interpreters.partial_eval`: the names of jax's partial evaluator yax provides.

yax's partial evaluator (yax/interpreters/partial_eval.py) splits programs for `linearize`.
`PartialVal` (a value known now, or only its aval) is provided for code that builds them;
jax's `trace_to_jaxpr_nounits` that consumes them is not: it raises an AttributeError naming it
(see docs/ecosystem.md). `dce_jaxpr`/`dce_jaxpr_consts` prune yax jaxprs, consulting `dce_rules`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from yax.core.ir import Jaxpr, Var
from yax.interpreters.partial_eval import PartialEvalTrace as JaxprTrace  # noqa: F401
from yax.interpreters.staging import StagingTrace as DynamicJaxprTrace  # noqa: F401
from yax.interpreters.staging import StagingTracer as DynamicJaxprTracer  # noqa: F401
from yax.interpreters.staging import has_effects, trace_to_jaxpr

__all__ = ["DynamicJaxprTrace", "DynamicJaxprTracer", "JaxprTrace", "PartialVal",
           "dce_jaxpr", "dce_jaxpr_consts", "dce_rules", "trace_to_jaxpr_dynamic"]

# primitive -> rule(used_outputs: list[bool], eqn) -> (used_inputs: list[bool], eqn or None):
# how dce_jaxpr prunes an equation of that primitive (e.g. the unused results of a loop);
# without a rule an equation is kept whole if any result is used (or it has an effect)
dce_rules: dict = {}


class PartialVal(NamedTuple):
    """`(aval, None)` for a value known only by its type, `(None, value)` for a known one."""

    aval: Any
    const: Any

    @classmethod
    def known(cls, value) -> PartialVal:
        return cls(None, value)

    @classmethod
    def unknown(cls, aval) -> PartialVal:
        return cls(aval, None)

    def is_known(self) -> bool:
        return self.aval is None


def trace_to_jaxpr_dynamic(fun, in_avals, *_args, **_kwargs):
    """Stage `fun` (a function of flat arrays returning a flat sequence, or a WrappedFun of
    one) at `in_avals`: returns (jaxpr, out_avals, consts), the consts being the values of
    the jaxpr's constvars."""
    call = getattr(fun, "call_wrapped", fun)
    closed = trace_to_jaxpr(lambda *xs: list(call(*xs)), list(in_avals),
                            name=getattr(fun, "__name__", "fun"))
    return closed.jaxpr, list(closed.out_avals), list(closed.consts)


def _flags(value, n: int) -> list[bool]:
    return [bool(value)] * n if isinstance(value, bool) else [bool(v) for v in value]


def dce_jaxpr_consts(jaxpr: Jaxpr, used_outputs, instantiate=False):
    """`(new_jaxpr, used_consts, used_inputs)`: `jaxpr` keeping only the outputs flagged in
    `used_outputs`, the equations they need (and those with side effects), and the constvars
    and invars they read (plus the invars `instantiate` asks to keep)."""
    outvars = [v for v, used in zip(jaxpr.outvars, used_outputs, strict=True) if used]
    live = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        used = [v in live for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            used_inputs, eqn = rule(used, eqn)
            if eqn is None:
                continue
            reads = [a for a, u in zip(eqn.inputs, used_inputs, strict=True) if u]
        elif any(used) or has_effects(eqn):
            reads = list(eqn.inputs)
        else:
            continue
        kept.append(eqn)
        live.update(a for a in reads if isinstance(a, Var))
    kept.reverse()
    keep_in = _flags(instantiate, len(jaxpr.invars))
    used_inputs = [v in live or k for v, k in zip(jaxpr.invars, keep_in, strict=True)]
    used_consts = [v in live for v in jaxpr.constvars]
    new = Jaxpr([v for v, u in zip(jaxpr.constvars, used_consts, strict=True) if u],
                [v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u], kept, outvars)
    return new, used_consts, used_inputs


def dce_jaxpr(jaxpr: Jaxpr, used_outputs, instantiate=False):
    """`(new_jaxpr, used_inputs)`: dead-code elimination of `jaxpr` for the outputs flagged in
    `used_outputs` (see dce_jaxpr_consts); the constvars are kept."""
    new, _, used_inputs = dce_jaxpr_consts(jaxpr, used_outputs, instantiate)
    return Jaxpr(jaxpr.constvars, new.invars, new.eqns, new.outvars), used_inputs
