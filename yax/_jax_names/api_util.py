"""`jax.api_util`: helpers libraries use to build their own transformations on top of jax's.

Each works on yax's pytrees, avals and functions: `flatten_axes` broadcasts a prefix tree of
axes (as `vmap`'s in_axes) to one entry per leaf, `argnums_partial` closes a function over its
static arguments, `shaped_abstractify` gives a value's aval.
"""

from __future__ import annotations

import functools

from yax import tree_util
from yax._jax_names.util import safe_map
from yax.extend.core import DebugInfo
from yax.transforms.tracing import typeof

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes",
           "rebase_donate_argnums", "safe_map", "shaped_abstractify"]


def shaped_abstractify(x):
    """The ShapedArray of an array, scalar or tracer."""
    return typeof(x)


class _Leaf:
    __slots__ = ()


def flatten_axes(name: str, treedef, axis_tree, *, kws: bool = False, tupled_args: bool = False):
    """One axis per leaf of `treedef`, `axis_tree` being a pytree prefix of it (a None axis
    applies to the whole subtree under it)."""
    del kws, tupled_args  # jax's hints for its error messages
    proxy = tree_util.tree_unflatten(treedef, [_Leaf()] * treedef.num_leaves)
    try:
        per_leaf = tree_util.tree_map(
            lambda axis, sub: [axis] * len(tree_util.tree_leaves(sub)), axis_tree, proxy,
            is_leaf=lambda x: x is None)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value, got specification {axis_tree} for value tree {treedef}") from e
    return [a for group in tree_util.tree_leaves(per_leaf, is_leaf=lambda x: isinstance(x, list))
            for a in group]


def argnums_partial(f, dyn_argnums, args, require_static_args_hashable: bool = True):
    """`(g, dyn_args)`: `g(*dyn_args)` calls `f(*args)` with the arguments at `dyn_argnums`
    replaced by g's own, the others fixed."""
    del require_static_args_hashable
    dyn_argnums = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    fixed = list(args)

    @functools.wraps(getattr(f, "f", f))
    def g(*dyn_args):
        full = list(fixed)
        for i, a in zip(dyn_argnums, dyn_args, strict=True):
            full[i] = a
        return f(*full)
    return g, tuple(args[i] for i in dyn_argnums)


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True) -> tuple:
    """One bool per leaf of `in_tree` ((args, kwargs)): whether that input is donated."""
    del kws
    args_tree, kwargs_tree = in_tree.children() if in_tree.num_nodes > 1 else (in_tree, None)
    flags = []
    for i, sub in enumerate(args_tree.children()):
        flags += [i in tuple(donate_argnums)] * sub.num_leaves
    if kwargs_tree is not None:
        keys = tree_util.tree_unflatten(kwargs_tree, [0] * kwargs_tree.num_leaves)
        for key in sorted(keys):
            n = len(tree_util.tree_leaves(keys[key]))
            flags += [key in tuple(donate_argnames or ())] * n
    return tuple(flags)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """`donate_argnums` renumbered for the arguments left once `static_argnums` are removed."""
    static = sorted(set(static_argnums))
    donate = sorted(set(donate_argnums))
    if set(static) & set(donate):
        both = set(static) & set(donate)
        raise ValueError(f"arguments cannot be both static and donated: {both}")
    return tuple(d - sum(s < d for s in static) for d in donate)


def debug_info(traced_for: str, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None) -> DebugInfo:
    """What `fun` is traced for, where it is defined, and its argument names."""
    del args, kwargs, static_argnums, static_argnames, result_paths_thunk, signature
    code = getattr(fun, "__code__", None)
    where = sourceinfo or (f"{getattr(fun, '__name__', 'fun')} at {code.co_filename}:"
                           f"{code.co_firstlineno}" if code else getattr(fun, "__name__", None))
    names = tuple(code.co_varnames[:code.co_argcount]) if code else ()
    return DebugInfo(traced_for, where, names, None)
