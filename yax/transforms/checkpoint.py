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
import inspect

from yax import tree_util
from yax.core.avals import aval_of_value
from yax.core.trace import Tracer, bind, is_eager
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.traced_cache import trace_cached
from yax.primitives.remat import name_p, remat_p
from yax.runtime.values import as_operand, canonical_leaf
from yax.transforms._args import normalize_argnums

__all__ = ["checkpoint", "remat", "checkpoint_name"]

_NOT_GIVEN = object()  # JAX's `concrete` default: only its absence is accepted


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=(),
               static_argnames=(), concrete=_NOT_GIVEN):
    """Make reverse mode recompute `fun`'s intermediates instead of storing them.

    Args:
      fun: the function (arrays and pytrees in, out).
      prevent_cse: keep XLA from merging the recomputation with the forward pass (leave True
        unless the checkpoint sits in a scan body, where it cannot happen anyway).
      policy: `policy(primitive, *avals, **params) -> bool`, which values may be stored; see
        `yax.checkpoint_policies` (default: nothing is saved but the inputs).
      static_argnums: arguments that are Python values, not arrays (an unhashable one, as in
        jax, makes each call trace the function again).
      static_argnames: the same by parameter name (a string or several); such an argument is
        static whether it is passed by keyword or by position.
      concrete: withdrawn by JAX (any value is refused, as there); use `static_argnums`.
    Example:
      >>> block = yax.checkpoint(lambda W, h: jnp.tanh(jnp.sin(h @ W)))
    """
    if concrete is not _NOT_GIVEN:
        raise NotImplementedError(
            "checkpoint: the `concrete` option was withdrawn from JAX (0.10 refuses it); mark "
            "the arguments that control Python flow as static_argnums / static_argnames")
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    static_names = (static_argnames,) if isinstance(static_argnames, str) else \
        tuple(static_argnames)
    static_argnums = normalize_argnums(static_argnums) + _positions_of(fun, static_names)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if is_eager() and not any(
                isinstance(x, Tracer) for x in tree_util.tree_leaves((args, kwargs))):
            return fun(*args, **kwargs)  # nothing will be differentiated: just run it
        if kwargs:
            args, kwargs = _as_positional(fun, args, kwargs)
        static = tuple((i, args[i]) for i in static_argnums if i < len(args))
        static += tuple(sorted((k, v) for k, v in kwargs.items() if k in static_names))
        dyn = tuple(a for i, a in enumerate(args) if i not in dict(static))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
        if dyn_kwargs:
            dyn += (dyn_kwargs,)
        leaves, in_tree = tree_util.tree_flatten(dyn)
        leaves = [canonical_leaf(x) for x in leaves]
        avals = tuple(aval_of_value(x) for x in leaves)
        jaxpr, consts, out_tree = _trace(fun, static, in_tree, avals, bool(dyn_kwargs))
        outs = bind(remat_p, *consts, *leaves, jaxpr=jaxpr, policy=policy,
                    prevent_cse=prevent_cse)
        return tree_util.tree_unflatten(out_tree, outs)
    return wrapped


def remat(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=(),
          concrete=_NOT_GIVEN):
    """`checkpoint` under its older name (JAX's remat has no static_argnames)."""
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                      concrete=concrete)


def _positions_of(fun, names: tuple) -> tuple[int, ...]:
    """The positions of the parameters named `names` that can also be passed by position."""
    params = _parameters(fun)
    return tuple(i for i, p in enumerate(params) if p.name in names
                 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _parameters(fun) -> list:
    try:
        return list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: names cannot be placed
        return []


def _as_positional(fun, args: tuple, kwargs: dict):
    """Keyword arguments moved to their positions where the signature allows it; what is left
    is keyword-only."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs
    return tuple(bound.args), dict(bound.kwargs)


def _trace(fun, static, in_tree, avals, n_kw: bool):
    """(const-free jaxpr, consts, output treedef) of `fun`, traced once per types (traced_cache);
    `static` holds (position or keyword name, value) pairs; with `n_kw` the last dynamic
    argument is the dict of dynamic keyword arguments."""
    def trace():
        box = []

        def flat(*xs):
            dyn = list(tree_util.tree_unflatten(in_tree, list(xs)))
            kwargs = dyn.pop() if n_kw else {}
            positions = {k: v for k, v in static if isinstance(k, int)}
            kwargs.update((k, v) for k, v in static if isinstance(k, str))
            full = [positions[i] if i in positions else dyn.pop(0)
                    for i in range(len(dyn) + len(positions))]
            out_leaves, out_tree = tree_util.tree_flatten(fun(*full, **kwargs))
            box.append(out_tree)
            return [as_operand(o) for o in out_leaves]
        closed = trace_to_jaxpr(flat, list(avals), name=getattr(fun, "__name__", "checkpoint"))
        return closed, box
    # unhashable static values are accepted as in jax (equinox's filter_checkpoint passes
    # dicts): the function is then traced anew on each call instead of being cached
    jaxpr, consts, box = trace_cached("checkpoint", fun, (static, in_tree, avals, n_kw), trace,
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
