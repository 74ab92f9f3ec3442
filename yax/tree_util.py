"""Pytrees: nested containers whose leaves transformations operate on.

A pytree is any nesting of registered container types (tuple, list, dict, None,
namedtuple, OrderedDict, defaultdict and user-registered classes); every other
object is a *leaf*. ``tree_flatten`` splits a pytree into its list of leaves and a
``PyTreeDef`` describing the containers, and ``tree_unflatten`` rebuilds the tree
from a treedef and new leaves. Transformations (jit, grad, vmap) flatten their
inputs, work on the flat leaves and use the hashable treedef as a cache key.

The machinery lives in yax/_pytree/ (keys, registry, treedef, mapping, partial); this module
is its public face.
"""

from __future__ import annotations

from yax._pytree.extras import (  # noqa: F401
    default_registry,
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    tree_broadcast,
    tree_reduce_associative,
)
from yax._pytree.keys import (  # noqa: F401
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    SequenceKey,
    _simple_key_str,
    keystr,
)
from yax._pytree.mapping import (  # noqa: F401
    _flatten_with_path_into,
    _up_to_for,
    tree_all,
    tree_flatten_with_path,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_transpose,
)
from yax._pytree.partial import (  # noqa: F401
    Partial,
    _HashableCallableShim,
)
from yax._pytree.registry import (  # noqa: F401
    _KIND_CACHE_MAX,
    _MISS,
    _classify_slow,
    _dataclass_fields,
    _flat_defs,
    _flatten_defaultdict,
    _flatten_dict,
    _kind_cache,
    _namedtuple_spec,
    _NodeSpec,
    _register,
    _register_builtins,
    _registry,
    _seq_keys,
    _sorted_keys,
    _spec_of,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
)
from yax._pytree.treedef import (  # noqa: F401
    _NONE_ENTRY,
    PyTreeDef,
    _child_keys,
    _describe,
    _flat_def,
    _flatten_into,
    _Mismatch,
    _node_repr,
    all_leaves,
    tree_flatten,
    tree_leaves,
    tree_structure,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

# A path to a leaf: the key-path entries from the root, as jax.tree_util.KeyPath.
KeyPath = tuple
KeyEntry = object


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register ``cls`` with its ``tree_flatten_with_keys`` method (children
    named by key-path entries) and ``tree_unflatten`` classmethod; a ``tree_flatten`` method,
    when the class has one, is the flattener without keys."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              (lambda x: x.tree_flatten()) if flatten is not None else None)
    return cls


def register_static(cls: type) -> type:
    """Register ``cls`` as a node without children: its instances are static (part of the
    treedef, so hashable), never leaves. Usable as a decorator."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _children: x)
    return cls


__all__ = [
    "DictKey", "KeyEntry", "KeyPath", "register_pytree_with_keys_class", "register_static",
    "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey",
    "all_leaves", "keystr", "register_dataclass", "register_pytree_node",
    "register_pytree_node_class", "register_pytree_with_keys", "tree_all", "tree_flatten",
    "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
    "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten",
    "treedef_is_leaf", "default_registry", "flatten_one_level", "flatten_one_level_with_keys",
    "is_tree_node", "tree_broadcast", "tree_reduce_associative",
]
