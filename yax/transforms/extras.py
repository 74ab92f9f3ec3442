"""Small pieces JAX programs use: `typeof`, `custom_gradient`, `closure_convert`,
`ensure_compile_time_eval` and `named_scope` (whose name stack lives in the staging trace)."""

from __future__ import annotations

import contextlib

from yax import tree_util
from yax.core.avals import aval_of_value
from yax.core.trace import use_trace
from yax.interpreters.eager import EVAL_TRACE
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import name_scope, trace_to_jaxpr
from yax.transforms.custom_derivatives import custom_vjp


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array, tracer or scalar: what a
    transformation sees of it. Example: `yax.typeof(jnp.ones(3))` is `ShapedArray(f32[3])`."""
    aval = getattr(x, "aval", None)
    return aval if aval is not None else aval_of_value(x)


def custom_gradient(fun):
    """Define a function's gradient inline (as `jax.custom_gradient`): `fun(*args)` returns
    `(out, vjp)` where `vjp(cotangent_out)` returns one cotangent per argument (a tuple, or
    a single value for one argument). Reverse mode only, as in JAX; the backward pass calls
    `fun` again to rebuild `vjp`, so `vjp` may close over any intermediate value.

    Example:
      >>> @yax.custom_gradient
      ... def f(x):
      ...     return x ** 2, lambda g: (g * 10 * x,)
    """

    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        return fun(*args)[0], args

    def bwd(args, ct):
        cts = fun(*args)[1](ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def closure_convert(fun, *example_args):
    """Hoist the values `fun` closes over into explicit arguments (as `jax.closure_convert`).

    Returns `(converted, consts)`: `converted(*args, *consts)` equals `fun(*args)` for arguments
    shaped like `example_args`. Useful for custom_vjp rules, whose residuals must be arguments.
    """
    leaves, in_tree = tree_util.tree_flatten(example_args)
    out_tree_box = []

    def flat(*xs):
        out_leaves, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, xs)))
        out_tree_box.append(out_tree)
        return out_leaves
    closed = trace_to_jaxpr(flat, [typeof(x) for x in leaves], name="closure_convert")
    consts = list(closed.consts)
    n = len(consts)

    def converted(*args):
        args, hoisted = args[:len(args) - n], args[len(args) - n:]
        flat_args = tree_util.tree_leaves(args)
        outs = eval_jaxpr(closed.jaxpr, list(hoisted), flat_args)
        return tree_util.tree_unflatten(out_tree_box[0], outs)
    return converted, consts


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside this context, operations on concrete values run eagerly even while a function is
    being traced by `jit` (so `jnp.sin(3.0)` is a concrete Array usable in Python control flow).
    Operations on traced values inside it are an error (move them out of the context)."""
    with use_trace(EVAL_TRACE):
        yield


def named_scope(name: str):
    """A context manager naming the operations staged inside it (as `jax.named_scope`): the
    name joins each equation's source info (`eqn.source.scope`) and appears in the locations of
    the lowered StableHLO (`jit(f).lower(x).as_text()`). Scopes nest as `outer/inner`."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope needs a str name, got {name!r}")
    return name_scope(name)
