"""Gradients written by the user inline: `custom_gradient` (a function returning its value and
its vjp), and `closure_convert` (closed-over values hoisted into arguments, so custom_vjp rules
can take them as residuals)."""

from __future__ import annotations

from yax import tree_util
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import trace_to_jaxpr
from yax.runtime.values import aval_of
from yax.transforms.custom_derivatives import custom_vjp

__all__ = ["custom_gradient", "closure_convert"]


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
    # plain avals: typeof's answer also carries a sharding
    closed = trace_to_jaxpr(flat, [aval_of(x) for x in leaves], name="closure_convert")
    consts = list(closed.consts)
    n = len(consts)

    def converted(*args):
        args, hoisted = args[:len(args) - n], args[len(args) - n:]
        flat_args = tree_util.tree_leaves(args)
        outs = eval_jaxpr(closed.jaxpr, list(hoisted), flat_args)
        return tree_util.tree_unflatten(out_tree_box[0], outs)
    return converted, consts
