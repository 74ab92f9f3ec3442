"""The pytree node registry: how each container type is taken apart and rebuilt (tuple, list,
dict, None, namedtuple, OrderedDict, defaultdict built in; user types through
`register_pytree_node`, `register_pytree_with_keys`, `register_pytree_node_class` and
`register_dataclass`), with the caches the hot flattening path reads.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from yax._pytree.keys import (
    DictKey,
    GetAttrKey,
    SequenceKey,
)


class _NodeSpec(NamedTuple):
    """How to take apart and rebuild one container type."""

    flatten: Callable[[Any], tuple[Iterable, Any]]
    unflatten: Callable[[Any, tuple], Any]
    # (node, aux, num_children) -> key entries; None means "use FlattenedIndexKey".
    keys: Callable[[Any, Any, int], Iterable] | None
    # Name shown in PyTreeDef repr; None for built-ins that have their own syntax.
    repr_name: str | None


_registry: dict[type, _NodeSpec] = {}
# type -> spec or None (leaf). Caches the namedtuple check so that classifying a
# leaf on the hot path is one dict lookup; cleared whenever the registry changes.
_kind_cache: dict[type, _NodeSpec | None] = {}
_KIND_CACHE_MAX = 4096
_MISS = object()
# (tuple|list, n) -> treedef of a flat container of n leaves (built by treedef._flat_def);
# reused so the hot path allocates no treedef and its hash is computed once. Here because a
# registration must clear it.
_flat_defs: dict = {}


def _classify_slow(typ: type) -> _NodeSpec | None:
    spec = _registry.get(typ)
    if spec is None and issubclass(typ, tuple) and hasattr(typ, "_fields"):
        spec = _namedtuple_spec(typ)
    if len(_kind_cache) >= _KIND_CACHE_MAX:
        # Dynamically created types could otherwise grow the cache without bound.
        _kind_cache.clear()
    _kind_cache[typ] = spec
    return spec


def _spec_of(typ: type) -> _NodeSpec | None:
    spec = _kind_cache.get(typ, _MISS)
    if spec is _MISS:
        return _classify_slow(typ)
    return spec


def _register(typ: type, spec: _NodeSpec) -> None:
    if typ in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {typ}.")
    _registry[typ] = spec
    _kind_cache.clear()
    _flat_defs.clear()


def _namedtuple_spec(typ: type) -> _NodeSpec:
    fields = typ._fields
    return _NodeSpec(
        lambda x: (x, None),
        lambda _aux, ch: typ(*ch),
        lambda _x, _aux, n: [GetAttrKey(f) for f in fields],
        "namedtuple",
    )


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError as err:
        # as JAX: a dict's leaf order is its sorted key order, so keys must be comparable
        raise ValueError(
            f"Comparator raised exception while sorting pytree dictionary keys: the keys "
            f"{list(d)!r} cannot be sorted ({err}); pytree dicts need mutually comparable keys "
            f"(e.g. all str); convert the keys or use a list of pairs") from err


def _flatten_dict(d: dict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], tuple(keys)


def _flatten_defaultdict(d: collections.defaultdict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, tuple(keys))


def _seq_keys(_x: Any, _aux: Any, n: int) -> list:
    return [SequenceKey(i) for i in range(n)]


def _register_builtins() -> None:
    reg = _registry
    reg[tuple] = _NodeSpec(lambda x: (x, None), lambda _a, ch: tuple(ch), _seq_keys, None)
    reg[list] = _NodeSpec(lambda x: (x, None), lambda _a, ch: list(ch), _seq_keys, None)
    reg[dict] = _NodeSpec(
        _flatten_dict,
        lambda keys, ch: dict(zip(keys, ch)),
        lambda _x, keys, _n: [DictKey(k) for k in keys],
        None,
    )
    reg[type(None)] = _NodeSpec(lambda _x: ((), None), lambda _a, _ch: None, _seq_keys, None)
    reg[collections.OrderedDict] = _NodeSpec(
        lambda d: (list(d.values()), tuple(d)),
        lambda keys, ch: collections.OrderedDict(zip(keys, ch)),
        lambda _x, keys, _n: [DictKey(k) for k in keys],
        "OrderedDict",
    )
    reg[collections.defaultdict] = _NodeSpec(
        _flatten_defaultdict,
        lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)),
        lambda _x, aux, _n: [DictKey(k) for k in aux[1]],
        "defaultdict",
    )


_register_builtins()


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable, Any]],
    unflatten_func: Callable[[Any, Iterable], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable, Any]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(x) -> (children, aux_data)``; ``unflatten_func(aux_data, children)``
    rebuilds the node. ``aux_data`` is static: it must be hashable and comparable,
    because it becomes part of the ``PyTreeDef`` (and thus of jit cache keys).
    """
    keys_fn = None
    if flatten_with_keys_func is not None:
        def keys_fn(x: Any, _aux: Any, _n: int) -> list:
            key_children, _ = flatten_with_keys_func(x)
            return [k for k, _c in key_children]
    _register(nodetype, _NodeSpec(flatten_func, unflatten_func, keys_fn, nodetype.__name__))


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]],
    unflatten_func: Callable[[Any, Iterable], Any],
    flatten_func: Callable[[Any], tuple[Iterable, Any]] | None = None,
) -> None:
    """Register a node whose flattener also names each child with a key-path entry."""
    if flatten_func is None:
        def flatten_func(x: Any) -> tuple[list, Any]:
            key_children, aux = flatten_with_keys(x)
            return [c for _k, c in key_children], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` using its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _dataclass_fields(cls: type) -> tuple[list[str], list[str]]:
    data, meta = [], []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue  # cannot be passed back to the constructor on unflatten
        (meta if f.metadata.get("static", False) else data).append(f.name)
    return data, meta


def register_dataclass(
    nodetype: type,
    data_fields: Iterable[str] | None = None,
    meta_fields: Iterable[str] | None = None,
    drop_fields: Iterable[str] = (),
) -> type:
    """Register a dataclass-like type: ``data_fields`` are children, ``meta_fields``
    are static aux data. With no field lists, ``nodetype`` must be a dataclass and
    fields with ``metadata=dict(static=True)`` are meta. Usable as a decorator."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass needs data_fields/meta_fields for a "
                            f"non-dataclass type {nodetype}")
        data_fields, meta_fields = _dataclass_fields(nodetype)
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: pass both data_fields and meta_fields, or neither")
    data, meta = tuple(data_fields), tuple(meta_fields)
    del drop_fields  # dropped fields are simply not stored; the constructor defaults them

    def flatten(x: Any) -> tuple[list, tuple]:
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux: tuple, children: Iterable) -> Any:
        kwargs = dict(zip(data, children))
        kwargs.update(zip(meta, aux))
        return nodetype(**kwargs)

    keys = [GetAttrKey(n) for n in data]
    _register(nodetype, _NodeSpec(flatten, unflatten, lambda _x, _a, _n: keys,
                                  nodetype.__name__))
    return nodetype
