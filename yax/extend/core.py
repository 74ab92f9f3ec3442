"""The IR's building blocks under the names `jax.extend.core` gives them.

What an interpreter needs (as in JAX's "Writing custom Jaxpr interpreters" tutorial):

    closed = yax.make_jaxpr(f)(x)              # a ClosedJaxpr
    closed.jaxpr.invars / .outvars / .eqns     # Vars and equations
    closed.consts (or .literals)               # values of closed.jaxpr.constvars
    eqn.primitive, eqn.invars, eqn.outvars, eqn.params
    eqn.primitive.bind(*values, **eqn.params)  # apply under the current transformation
    type(atom) is Literal  ->  atom.val        # an inline constant

Primitive objects are `yax.lax.<name>_p` (e.g. `yax.lax.exp_p`), as in `jax.lax`.
Primitives are defined as in JAX (`Primitive(name)`, `def_impl`, `def_abstract_eval`, rules
registered through `jax.interpreters.ad`/`batching`/`mlir`, see yax/_jax_names/interpreters/),
or with yax's own rule slots (yax/core/primitive.py). Equations are immutable NamedTuples.
"""

from __future__ import annotations

from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from yax.core.ir import Eqn as JaxprEqn
from yax.core.trace import current_trace
from yax.errors import JaxprTypeError
from yax.extend.primitive import Primitive
from yax.interpreters.eval_jaxpr import eval_jaxpr

__all__ = ["ClosedJaxpr", "Effect", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal", "Primitive",
           "ShapedArray", "Var", "get_opaque_trace_state", "jaxpr_as_fun", "mapped_aval",
           "unmapped_aval"]


def jaxpr_as_fun(closed: ClosedJaxpr):
    """`closed` as a Python function of its inputs (returns the list of outputs), as JAX's."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, list(args))
    return fun


def mapped_aval(axis_size: int, axis, aval: ShapedArray) -> ShapedArray:
    """The aval of one slice of `aval` along `axis` (of length `axis_size`); None: unmapped."""
    if axis is None:
        return aval
    axis = axis % len(aval.shape)
    if aval.shape[axis] != axis_size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} is not of size "
                         f"{axis_size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(axis_size: int, axis, aval: ShapedArray) -> ShapedArray:
    """The aval of `axis_size` copies of `aval` stacked at `axis`; None: unmapped."""
    if axis is None:
        return aval
    axis = axis % (len(aval.shape) + 1)
    return aval.update(shape=aval.shape[:axis] + (axis_size,) + aval.shape[axis:])


class Effect:
    """Base class of the side effects an equation can have (subclassed by libraries to declare
    theirs; yax's own effects are rules of its primitives)."""


class OpaqueTraceState:
    """Which transformation is running, comparable with `==` and nothing more (as JAX's)."""

    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and other._trace is self._trace

    def __hash__(self):
        return id(self._trace)


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
    """An opaque token of the current trace: equal tokens mean the same transformation."""
    del convention  # jax's argument names the caller's convention; yax has one
    return OpaqueTraceState(current_trace())
