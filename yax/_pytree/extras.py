"""The smaller pytree helpers of jax.tree_util / jax.tree: one-level flattening, node queries,
prefix broadcasting, a balanced associative reduction, static dataclass fields, and the default
registry object they go through."""

from __future__ import annotations

import dataclasses
from typing import Any

from yax._pytree.keys import FlattenedIndexKey
from yax._pytree.mapping import tree_map
from yax._pytree.registry import _spec_of, register_pytree_node, register_pytree_with_keys
from yax._pytree.treedef import tree_leaves, tree_structure

__all__ = ["default_registry", "flatten_one_level", "flatten_one_level_with_keys",
           "is_tree_node", "tree_broadcast", "tree_reduce_associative", "static"]


def is_tree_node(typ: type) -> bool:
    """Whether instances of `typ` are pytree nodes (built in, registered, or a namedtuple)."""
    return _spec_of(typ) is not None


def _node_spec(tree):
    spec = _spec_of(type(tree))
    if spec is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return spec


def _is_namedtuple(typ: type) -> bool:
    return issubclass(typ, tuple) and hasattr(typ, "_fields")


def flatten_one_level(tree: Any) -> tuple[list, Any]:
    """The children of one pytree node and its hashable metadata (dict keys, a namedtuple's
    type, a registered class's aux data); a leaf is a ValueError."""
    children, aux = _node_spec(tree).flatten(tree)
    if aux is None and _is_namedtuple(type(tree)):
        aux = type(tree)  # yax's spec keeps the type itself; jax's metadata is the type
    return list(children), aux


def flatten_one_level_with_keys(tree: Any) -> tuple[list, Any]:
    """As `flatten_one_level`, the children paired with their key-path entries."""
    spec = _node_spec(tree)
    children, aux = spec.flatten(tree)
    children = list(children)
    keys = (spec.keys(tree, aux, len(children)) if spec.keys is not None
            else [FlattenedIndexKey(i) for i in range(len(children))])
    if aux is None and _is_namedtuple(type(tree)):
        aux = type(tree)
    return list(zip(keys, children, strict=True)), aux


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf=None) -> Any:
    """`full_tree`'s structure, each leaf the leaf of `prefix_tree` above it (a pytree
    prefix of `full_tree`)."""
    leaves: list = []
    try:
        tree_map(lambda x, sub: leaves.extend([x] * tree_structure(sub).num_leaves),
                 prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError as e:
        raise ValueError(f"tree_broadcast: prefix_tree is not a tree prefix of full_tree: "
                         f"{e}") from None
    return tree_structure(full_tree).unflatten(leaves)


_NO_IDENTITY = object()


def _balanced_reduce(items: list, operation, identity):
    if not items:
        if identity is _NO_IDENTITY:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if len(items) == 1:
        return items[0]
    half = len(items) // 2  # a balanced tree of calls: depth log2(n), as jax's
    return operation(_balanced_reduce(items[:half], operation, identity),
                     _balanced_reduce(items[half:], operation, identity))


def tree_reduce_associative(operation, tree: Any, *, identity=_NO_IDENTITY, is_leaf=None):
    """Reduce the leaves with an associative `operation`, combined pairwise as a balanced tree
    (not left to right as `tree_reduce`); `identity` is the result for no leaves."""
    return _balanced_reduce(tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def static(**kwargs):
    """A `dataclasses.field` marked static (`metadata={"static": True}`): under
    `register_dataclass` it is part of the treedef, not a leaf."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


class _DefaultRegistry:
    """The registry the tree functions use (jax.tree_util.default_registry): register node
    types on it, or ask it to flatten."""

    def register_node(self, nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
        if flatten_with_keys_func is None:
            register_pytree_node(nodetype, flatten_func, unflatten_func)
        else:
            register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func,
                                      flatten_func)

    def flatten(self, tree, leaf_predicate=None):
        leaves = tree_leaves(tree, is_leaf=leaf_predicate)
        return leaves, tree_structure(tree, is_leaf=leaf_predicate)

    def flatten_one_level(self, tree):
        return flatten_one_level(tree) if is_tree_node(type(tree)) else None

    def flatten_one_level_with_keys(self, tree):
        return flatten_one_level_with_keys(tree) if is_tree_node(type(tree)) else None

    def is_node(self, typ) -> bool:
        return is_tree_node(typ)

    def __repr__(self) -> str:
        return "default_registry"


default_registry = _DefaultRegistry()
