"""What tracing sees and records, for user code: `typeof` (the abstract value a transformation
sees), `ensure_compile_time_eval` (run on concrete values while tracing) and `named_scope` (the
name stack, which lives in the staging trace)."""

from __future__ import annotations

import contextlib

from yax.core.avals import aval_of_value
from yax.core.trace import eager_trace, use_trace
from yax.interpreters.staging import name_scope

__all__ = ["typeof", "ensure_compile_time_eval", "named_scope"]


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array, tracer or scalar: what a
    transformation sees of it. Example: `yax.typeof(jnp.ones(3))` is `ShapedArray(f32[3])`."""
    aval = getattr(x, "aval", None)
    return aval if aval is not None else aval_of_value(x)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside this context, operations on concrete values run eagerly even while a function is
    being traced by `jit` (so `jnp.sin(3.0)` is a concrete Array usable in Python control flow).
    Operations on traced values inside it are an error (move them out of the context)."""
    with use_trace(eager_trace()):
        yield


def named_scope(name: str):
    """A context manager naming the operations staged inside it (as `jax.named_scope`): the
    name joins each equation's source info (`eqn.source.scope`) and appears in the locations of
    the lowered StableHLO (`jit(f).lower(x).as_text()`). Scopes nest as `outer/inner`."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope needs a str name, got {name!r}")
    return name_scope(name)
