"""The IR's building blocks under the names `jax.extend.core` gives them.

What an interpreter needs (as in JAX's "Writing custom Jaxpr interpreters" tutorial):

    closed = yax.make_jaxpr(f)(x)              # a ClosedJaxpr
    closed.jaxpr.invars / .outvars / .eqns     # Vars and equations
    closed.consts (or .literals)               # values of closed.jaxpr.constvars
    eqn.primitive, eqn.invars, eqn.outvars, eqn.params
    eqn.primitive.bind(*values, **eqn.params)  # apply under the current transformation
    type(atom) is Literal  ->  atom.val        # an inline constant

Primitive objects are `yax.lax.<name>_p` (e.g. `yax.lax.exp_p`), as in `jax.lax`.
Differences from JAX: `Primitive` has no `def_impl`/`def_abstract_eval` helpers (set the rule
attributes instead, see yax/core/primitive.py), and equations are immutable NamedTuples.
"""

from __future__ import annotations

from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from yax.core.ir import Eqn as JaxprEqn
from yax.core.primitive import Primitive
from yax.errors import JaxprTypeError
from yax.interpreters.eval_jaxpr import eval_jaxpr

__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal", "Primitive",
           "ShapedArray", "Var", "jaxpr_as_fun"]


def jaxpr_as_fun(closed: ClosedJaxpr):
    """`closed` as a Python function of its inputs (returns the list of outputs), as JAX's."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, list(args))
    return fun
