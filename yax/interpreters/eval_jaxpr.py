"""Evaluating a jaxpr by binding its equations under whatever trace is current.

This is how a staged program is re-run inside another transformation (jvp of a jitted function,
transposition, batching of a sub-program): each equation is bound again, so the current trace
applies its rules.
"""

from __future__ import annotations

from yax.core.avals import TypedScalar
from yax.core.ir import Jaxpr, Literal
from yax.core.trace import bind
from yax.errors import replay_source


def eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
    env: dict = {}
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = x
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = x

    def read(a):
        return a.val if isinstance(a, Literal) else env[a]

    previous = replay_source[0]
    try:
        for eqn in jaxpr.eqns:
            replay_source[0] = eqn.source or previous  # re-staged equations keep their line
            outs = bind(eqn.primitive, *(read_typed(a, read) for a in eqn.inputs), **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for v, x in zip(eqn.outvars, outs, strict=True):
                env[v] = x
    finally:
        replay_source[0] = previous
    return [read(v) for v in jaxpr.outvars]


def read_typed(atom, read):
    """Literals keep their exact dtype and weak type when bound again."""
    if isinstance(atom, Literal):
        return TypedScalar(atom.val, atom.aval.dtype, atom.aval.weak_type)
    return read(atom)
