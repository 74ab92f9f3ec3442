"""`jax.interpreters.partial_eval`: the names of jax's partial evaluator yax provides.

yax's partial evaluator (yax/interpreters/partial_eval.py) splits programs for `linearize`.
`PartialVal` (a value known now, or only its aval) is provided for code that builds them;
jax's `trace_to_jaxpr_nounits` that consumes them is not: it raises an AttributeError naming it
(see docs/ecosystem.md).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from yax.interpreters.partial_eval import PartialEvalTrace as JaxprTrace  # noqa: F401
from yax.interpreters.staging import StagingTrace as DynamicJaxprTrace  # noqa: F401
from yax.interpreters.staging import StagingTracer as DynamicJaxprTracer  # noqa: F401
from yax.interpreters.staging import trace_to_jaxpr

__all__ = ["DynamicJaxprTrace", "DynamicJaxprTracer", "JaxprTrace", "PartialVal",
           "trace_to_jaxpr_dynamic"]


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
