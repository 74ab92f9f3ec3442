"""Transposition: run a linear jaxpr backwards, from output cotangents to input cotangents.

Equations that do not depend on the linear inputs are evaluated forwards first (they compute
coefficients from the residuals). The linear ones are visited in reverse order, each once; a
primitive's `transpose(cts, *operands, **params)` rule receives `UndefinedPrimal` for its linear
operands and the actual values for the others, and returns one cotangent (or None) per operand.
Cotangents reaching the same variable from several uses are summed; zeros stay symbolic.
"""

from __future__ import annotations

from yax.core.ir import ClosedJaxpr, Jaxpr, Literal
from yax.core.trace import bind
from yax.interpreters.ad_util import Zero, add_tangents, instantiate
from yax.interpreters.eval_jaxpr import read_typed
from yax.interpreters.staging import trace_to_jaxpr


class UndefinedPrimal:
    """Marks a linear operand of a transpose rule (its value is what is being solved for)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


def backward_pass(jaxpr: Jaxpr, consts, linear_args, cts_out) -> list:
    """Cotangents of `jaxpr`'s invars marked UndefinedPrimal in `linear_args`.

    `linear_args` holds, per invar, either an UndefinedPrimal (linear) or its value.
    Returns one cotangent per invar (Zero where none reached it, None for non-linear ones).
    """
    env: dict = dict(zip(jaxpr.constvars, consts, strict=True))
    linear: set = set()
    for v, a in zip(jaxpr.invars, linear_args, strict=True):
        if is_undefined(a):
            linear.add(v)
        else:
            env[v] = a

    def read(atom):
        return read_typed(atom, env.__getitem__)

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(not isinstance(a, Literal) and a in linear for a in eqn.inputs):
            linear.update(eqn.outvars)
            linear_eqns.append(eqn)
        else:  # a coefficient computed from residuals only
            outs = bind(eqn.primitive, *(read(a) for a in eqn.inputs), **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs, strict=True))

    ct_env: dict = {}
    for v, ct in zip(jaxpr.outvars, cts_out, strict=True):
        if not isinstance(v, Literal) and v in linear and type(ct) is not Zero:
            ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in cts):
            continue
        keep = eqn.primitive.takes_zero_cotangents
        cts = [(Zero(v.aval) if keep else instantiate(Zero(v.aval))) if ct is None else ct
               for ct, v in zip(cts, eqn.outvars)]
        operands = [UndefinedPrimal(a.aval) if not isinstance(a, Literal) and a in linear
                    else read(a) for a in eqn.inputs]
        cts_in = eqn.primitive.transpose(cts, *operands, **eqn.params)
        for a, ct in zip(eqn.inputs, cts_in, strict=True):
            if is_undefined_atom(a, linear) and ct is not None and type(ct) is not Zero:
                ct_env[a] = add_tangents(ct_env[a], ct) if a in ct_env else ct
    return [ct_env.get(v, Zero(v.aval)) if v in linear else None for v in jaxpr.invars]


def is_undefined_atom(atom, linear) -> bool:
    return not isinstance(atom, Literal) and atom in linear


def transpose_jaxpr(closed: ClosedJaxpr, linear_mask: list[bool]) -> ClosedJaxpr:
    """A jaxpr from (non-linear inputs..., output cotangents...) to the linear inputs' cotangents
    (zeros materialised)."""
    return transpose_jaxpr_nonzero(closed, linear_mask, [True] * sum(linear_mask))[0]


def transpose_jaxpr_nonzero(closed: ClosedJaxpr, linear_mask: list[bool],
                            instantiate_cts: list[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """Like `transpose_jaxpr`, but a linear input's cotangent that is a symbolic zero is left
    out unless `instantiate_cts` (one flag per linear input) asks for it. Returns the jaxpr and
    which linear inputs' cotangents it outputs."""
    in_avals = closed.in_avals
    nonlin_avals = [a for a, lin in zip(in_avals, linear_mask) if not lin]
    n_nonlin = len(nonlin_avals)
    box = []

    def fun(*args):
        it = iter(args[:n_nonlin])
        linear_args = [UndefinedPrimal(a) if lin else next(it)
                       for a, lin in zip(in_avals, linear_mask, strict=True)]
        cts = backward_pass(closed.jaxpr, closed.consts, linear_args, list(args[n_nonlin:]))
        cts = [ct for ct, lin in zip(cts, linear_mask) if lin]
        box.append([type(ct) is not Zero or i for ct, i in zip(cts, instantiate_cts, strict=True)])
        return [instantiate(ct) for ct, out in zip(cts, box[0]) if out]

    return trace_to_jaxpr(fun, nonlin_avals + list(closed.out_avals), name="transpose"), box[0]
