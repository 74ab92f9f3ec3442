"""`jax.core`: the IR's object model and tracers under jax's module name.

`Tracer` is the base class of every yax tracer, `ShapedArray` yax's one aval class (also
`AbstractValue`: yax has no other kind of abstract value). Jaxprs, equations and primitives
are those of `yax.extend.core`.
"""

from __future__ import annotations

from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr, Literal, Var, subjaxprs
from yax.core.ir import Eqn as JaxprEqn
from yax.core.trace import Trace, Tracer, eager_trace, use_trace
from yax.errors import ConcretizationTypeError, JaxprTypeError
from yax.extend.core import get_opaque_trace_state, jaxpr_as_fun, mapped_aval, unmapped_aval
from yax.extend.primitive import Primitive
from yax.interpreters import eval_jaxpr as _eval
from yax.transforms.tracing import ensure_compile_time_eval, typeof

__all__ = ["AbstractValue", "Atom", "ClosedJaxpr", "ConcretizationTypeError", "Jaxpr",
           "JaxprEqn", "JaxprTypeError", "eval_context", "max_dim", "min_dim", "Literal",
           "Primitive", "ShapedArray", "Trace",
           "Tracer", "Var", "ensure_compile_time_eval", "eval_jaxpr", "get_aval",
           "get_opaque_trace_state", "jaxpr_as_fun", "mapped_aval",
           "raise_to_shaped", "subjaxprs", "typeof", "unmapped_aval"]

AbstractValue = ShapedArray
Atom = Var | Literal


def eval_context():
    """Context manager: operations in its body run eagerly, on concrete values, even inside a
    transformation (as JAX's; the values must not depend on the transformation's tracers)."""
    return use_trace(eager_trace())


def max_dim(d1, d2):
    """The larger of two dimension sizes (yax's sizes are integers)."""
    return max(d1, d2)


def min_dim(d1, d2):
    return min(d1, d2)


def get_aval(x) -> ShapedArray:
    """The abstract value of an array, tracer or scalar (as `typeof`)."""
    return typeof(x)


def raise_to_shaped(aval: ShapedArray) -> ShapedArray:
    """jax's old lattice join to a ShapedArray; every yax aval already is one."""
    return aval


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Run `jaxpr` on `consts` and `args` under the current transformation; its outputs."""
    return _eval.eval_jaxpr(jaxpr, list(consts), list(args))
