"""Evaluating a jaxpr by binding its equations under whatever trace is current.

This is how a staged program is re-run inside another transformation (jvp of a jitted function,
transposition, batching of a sub-program): each equation is bound again, so the current trace
applies its rules. It is also the one walk over a jaxpr's equations that other evaluators build
on: `on_eqn(eqn, inputs) -> outputs` replaces the plain `bind` of each equation (checkify threads
its error state this way; debug_nans re-runs jitted bodies op by op).
"""

from __future__ import annotations

from yax.core.avals import TypedScalar
from yax.core.ir import Jaxpr, Literal
from yax.core.trace import bind
from yax.errors import replay_source


def bind_eqn(eqn, inputs) -> list:
    """Apply `eqn`'s primitive to `inputs` under the current trace; always a list of outputs."""
    outs = bind(eqn.primitive, *inputs, **eqn.params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def eval_jaxpr(jaxpr: Jaxpr, consts, args, *, on_eqn=None) -> list:
    """Run `jaxpr` on `consts` and `args`; returns its outputs.

    Args:
      on_eqn: optional `(eqn, inputs) -> list of outputs`, called for every equation in place of
        binding it (default: `bind_eqn`). Errors raised while it runs name the equation's line.
    """
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
            ins = [read_typed(a, read) for a in eqn.inputs]
            if on_eqn is None:
                outs = bind(eqn.primitive, *ins, **eqn.params)
                if not eqn.primitive.multiple_results:
                    outs = [outs]
            else:
                outs = on_eqn(eqn, ins)
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
