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

from typing import NamedTuple

import numpy as np

from yax.core import ir as _ir
from yax.core import trace as _trace
from yax.core import typecheck as _typecheck
from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from yax.core.ir import Eqn as JaxprEqn
from yax.core.trace import Tracer, current_trace
from yax.errors import ConcretizationTypeError, InconclusiveDimensionOperation, JaxprTypeError
from yax.extend.primitive import Primitive
from yax.interpreters.ad_util import float0
from yax.interpreters.batching import BatchTrace
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import StagingTrace
from yax.runtime.array import Array
from yax.transforms.tracing import typeof

__all__ = ["ClosedJaxpr", "DebugInfo", "DropVar", "Effect", "Effects",
           "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal",
           "Primitive", "ShapedArray", "Var", "array_types",
           "check_jaxpr", "concrete_or_error", "find_top_trace", "gensym",
           "get_opaque_trace_state", "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval",
           "new_jaxpr_eqn", "no_effects", "nonempty_axis_env_DO_NOT_USE",
           "primal_dtype_to_tangent_dtype", "set_current_trace", "subjaxprs",
           "take_current_trace", "unmapped_aval", "unsafe_am_i_under_a_jit_DO_NOT_USE",
           "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE",
           "valid_jaxtype"]


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


# --- the rest of jax.extend.core's documented names -------------------------------------------

Effects = frozenset  # a set of Effect objects, as JAX's type alias
no_effects: Effects = frozenset()
array_types = (np.ndarray, np.generic, Array)
subjaxprs = _ir.subjaxprs
check_jaxpr = _typecheck.check_jaxpr


class DebugInfo(NamedTuple):
    """What a traced function was traced for, where it is defined, its argument names and its
    result paths (carried for error messages, as JAX's)."""

    traced_for: str
    func_src_info: str | None
    arg_names: tuple
    result_paths: tuple | None


class DropVar(Var):
    """An output variable nothing reads (jax prints it `_`); yax keeps it a plain Var."""


def gensym(suffix: str = ""):
    """A function making fresh variables of a given aval (`gensym()(aval)`)."""
    del suffix  # yax's variables are named when printed
    return Var


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None, ctx=None):
    """A new equation (JAX's argument order; effects and context are not kept in yax)."""
    del effects, ctx
    return JaxprEqn(primitive, list(invars), dict(params), list(outvars), source_info)


def jaxprs_in_params(params: dict) -> list:
    """Every (Closed)Jaxpr among the values of an equation's params."""
    found = []
    for value in params.values():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, ClosedJaxpr):
                found.append(v.jaxpr)
            elif isinstance(v, Jaxpr):
                found.append(v)
    return found


def primal_dtype_to_tangent_dtype(dtype) -> np.dtype:
    """Float and complex values have tangents of their own dtype; all others float0."""
    dtype = np.dtype(dtype)
    return dtype if np.issubdtype(dtype, np.inexact) else float0


def valid_jaxtype(x) -> bool:
    """Whether `x` can be an argument of a transformed function (an array or scalar)."""
    try:
        typeof(x)
    except (TypeError, ValueError):
        return False
    return True


def concrete_or_error(force, val, context: str = ""):
    """`force(val)` when `val` has a concrete value; a ConcretizationTypeError naming `context`
    for a traced one."""
    if isinstance(val, Tracer):
        try:
            return force(val) if force is not None else val.to_concrete()
        except Exception as e:  # noqa: BLE001  (every tracer raises its own error type)
            raise ConcretizationTypeError(f"{context}: a concrete value is required, got "
                                          f"{val!r}") from e
    return val if force is None else force(val)


def find_top_trace(xs):
    """The innermost trace any of `xs` belongs to (the current trace if none is traced)."""
    del xs  # yax's traces nest by context: the current one is the innermost
    return current_trace()


def take_current_trace():
    """Context manager yielding the current trace, as JAX's."""
    return _trace.use_trace(current_trace())


def set_current_trace(trace, check_leaks: bool = False):
    """Context manager making `trace` current for its body."""
    del check_leaks
    return _trace.use_trace(trace)


def _active(kind) -> bool:
    trace = current_trace()
    while trace is not None:
        if isinstance(trace, kind):
            return True
        trace = getattr(trace, "parent", None)
    return False


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    return _active(StagingTrace)


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    return _active(BatchTrace)


def unsafe_get_axis_names_DO_NOT_USE() -> list:
    names, trace = [], current_trace()
    while trace is not None:
        if isinstance(trace, BatchTrace) and trace.axis_name is not None:
            names.append(trace.axis_name)
        trace = getattr(trace, "parent", None)
    return names


def nonempty_axis_env_DO_NOT_USE() -> bool:
    return bool(unsafe_get_axis_names_DO_NOT_USE())
