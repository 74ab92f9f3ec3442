"""`checkpoint` (alias `remat`): trade compute for memory in reverse mode.

    loss = lambda params, x: ... yax.checkpoint(block)(params, x) ...

Under `grad`, the intermediates of a checkpointed function are not stored for the backward
pass: only its inputs (and what the `policy` declares saveable) are kept, and the rest is
recomputed when the backward pass reaches it. Without differentiation it is just `fun`.
Policies live in `yax.checkpoint_policies`; `checkpoint_name(x, "name")` labels a value for the
name-based ones.
"""

from __future__ import annotations

import functools

from yax import tree_util
from yax.core.avals import aval_of_value
from yax.core.trace import Tracer, bind, is_eager
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.traced_cache import trace_cached
from yax.primitives.remat import name_p, remat_p
from yax.runtime.values import as_operand, canonical_leaf
from yax.transforms._args import normalize_argnums

__all__ = ["checkpoint", "remat", "checkpoint_name"]


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """Make reverse mode recompute `fun`'s intermediates instead of storing them.

    Args:
      fun: the function (arrays and pytrees in, out).
      prevent_cse: keep XLA from merging the recomputation with the forward pass (leave True
        unless the checkpoint sits in a scan body, where it cannot happen anyway).
      policy: `policy(primitive, *avals, **params) -> bool`, which values may be stored; see
        `yax.checkpoint_policies` (default: nothing is saved but the inputs).
      static_argnums: arguments that are Python values, not arrays (an unhashable one, as in
        jax, makes each call trace the function again).
    Example:
      >>> block = yax.checkpoint(lambda W, h: jnp.tanh(jnp.sin(h @ W)))
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    static_argnums = normalize_argnums(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args):
        if is_eager() and not any(
                isinstance(x, Tracer) for x in tree_util.tree_leaves(args)):
            return fun(*args)  # nothing will be differentiated: just run it
        static = tuple((i, args[i]) for i in static_argnums if i < len(args))
        dyn = tuple(a for i, a in enumerate(args) if i not in dict(static))
        leaves, in_tree = tree_util.tree_flatten(dyn)
        leaves = [canonical_leaf(x) for x in leaves]
        avals = tuple(aval_of_value(x) for x in leaves)
        jaxpr, consts, out_tree = _trace(fun, static, in_tree, avals)
        outs = bind(remat_p, *consts, *leaves, jaxpr=jaxpr, policy=policy,
                    prevent_cse=prevent_cse)
        return tree_util.tree_unflatten(out_tree, outs)
    return wrapped


remat = checkpoint


def _trace(fun, static, in_tree, avals):
    """(const-free jaxpr, consts, output treedef) of `fun`, traced once per types (traced_cache)."""
    def trace():
        box = []

        def flat(*xs):
            dyn = list(tree_util.tree_unflatten(in_tree, list(xs)))
            full, positions = [], dict(static)
            for i in range(len(dyn) + len(static)):
                full.append(positions[i] if i in positions else dyn.pop(0))
            out_leaves, out_tree = tree_util.tree_flatten(fun(*full))
            box.append(out_tree)
            return [as_operand(o) for o in out_leaves]
        closed = trace_to_jaxpr(flat, list(avals), name=getattr(fun, "__name__", "checkpoint"))
        return closed, box
    # unhashable static values are accepted as in jax (equinox's filter_checkpoint passes
    # dicts): the function is then traced anew on each call instead of being cached
    jaxpr, consts, box = trace_cached("checkpoint", fun, (static, in_tree, avals), trace,
                                      closure_converted=True, cacheable=_is_hashable(static))
    return jaxpr, consts, box[0]


def _is_hashable(value) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


def checkpoint_name(x, name: str):
    """`x`, labelled `name` for `checkpoint_policies.save_only_these_names` and friends."""
    return tree_util.tree_map(lambda leaf: bind(name_p, as_operand(leaf), name=name), x)
