"""Functions over the leaves of pytrees: tree_map, tree_all, tree_reduce, tree_transpose, and the
forms that pass each leaf's key path (tree_flatten_with_path, tree_leaves_with_path,
tree_map_with_path).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from yax._pytree.registry import (
    _MISS,
    _spec_of,
)
from yax._pytree.treedef import (
    PyTreeDef,
    _child_keys,
    tree_flatten,
    tree_leaves,
    tree_structure,
)


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leaf-wise. Each tree in ``rest`` must have ``tree``'s structure,
    except that a leaf of ``tree`` may correspond to any subtree in ``rest``."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [_up_to_for(treedef, r, i, "tree_map") for i, r in enumerate(rest, 1)]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def _up_to_for(treedef: PyTreeDef, tree: Any, index: int, fn: str) -> list:
    try:
        return treedef.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"{fn}: argument {index} (0 is the first tree) does not match the "
                         f"first tree's structure: {e}") from None


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of `tree` is truthy."""
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _MISS,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Fold `function` over the leaves of `tree` left to right (from `initializer` if given)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISS:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer-structure tree of inner-structure trees into an
    inner-structure tree of outer-structure trees."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    leaves, treedef = tree_flatten(pytree_to_transpose)
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"tree_transpose: structure mismatch; expected {expected} "
                        f"(outer {outer_treedef}, inner {inner_treedef}), got {treedef}")
    n_inner = inner_treedef.num_leaves
    # Pre-order leaves of outer∘inner are laid out outer-major: leaf j of outer
    # leaf i is at i * n_inner + j, so a stride slice collects one inner position.
    columns = [outer_treedef.unflatten(leaves[j::n_inner]) for j in range(n_inner)]
    return inner_treedef.unflatten(columns)




def _flatten_with_path_into(x: Any, path: tuple, out: list, entries: list,
                            is_leaf: Callable | None) -> None:
    spec = None if is_leaf is not None and is_leaf(x) else _spec_of(type(x))
    if spec is None:
        out.append((path, x))
        entries.append(None)
        return
    children, aux = spec.flatten(x)
    children = tuple(children)
    n = len(children)
    entries.append((type(x), aux, n))
    for k, c in zip(_child_keys(spec, x, aux, n), children):
        _flatten_with_path_into(c, path + (k,), out, entries, is_leaf)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """Like tree_flatten, but each leaf comes as ``(key_path, leaf)``."""
    out: list = []
    entries: list = []
    _flatten_with_path_into(tree, (), out, entries, is_leaf)
    return out, PyTreeDef(tuple(entries), len(out))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                          ) -> list[tuple[tuple, Any]]:
    """`(key_path, leaf)` pairs for every leaf of `tree`, left to right."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Like tree_map, but ``f`` receives the key path first: ``f(path, x, *xs)``."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [_up_to_for(treedef, r, i, "tree_map_with_path") for i, r in enumerate(rest, 1)]
    out = [f(p, x, *xs) for (p, x), *xs in zip(path_leaves, *others)]
    return treedef.unflatten(out)
