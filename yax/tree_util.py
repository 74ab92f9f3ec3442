"""Pytrees: nested containers whose leaves transformations operate on.

A pytree is any nesting of registered container types (tuple, list, dict, None,
namedtuple, OrderedDict, defaultdict and user-registered classes); every other
object is a *leaf*. ``tree_flatten`` splits a pytree into its list of leaves and a
``PyTreeDef`` describing the containers, and ``tree_unflatten`` rebuilds the tree
from a treedef and new leaves. Transformations (jit, grad, vmap) flatten their
inputs, work on the flat leaves and use the hashable treedef as a cache key.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple, Self

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey",
    "all_leaves", "keystr", "register_dataclass", "register_pytree_node",
    "register_pytree_node_class", "register_pytree_with_keys", "tree_all", "tree_flatten",
    "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
    "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten",
    "treedef_is_leaf",
]


# --------------------------------------------------------------------------- key paths


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Key of a child of a tuple or list, by position."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """Key of a child of a dict-like node, by its dict key."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """Key of a child stored as an attribute (namedtuple field, dataclass field)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Key of a child of a custom node registered without key information."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _simple_key_str(k: Any) -> str:
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path, e.g. ``"['a'][0].x"`` (or ``"a/0/x"`` when simple)."""
    if simple:
        return separator.join(_simple_key_str(k) for k in keys)
    return separator.join(str(k) for k in keys)


# --------------------------------------------------------------------------- registry


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


# --------------------------------------------------------------------------- PyTreeDef


class _Mismatch(Exception):
    """Internal: structure mismatch found while walking a treedef against a tree."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail
        self.path: list[Any] = []  # key entries, innermost first


def _describe(typ: type, aux: Any, n: int) -> str:
    if typ is dict:
        return f"dict with keys {list(aux)}"
    if typ is type(None):
        return "None"
    extra = "" if aux is None else f" (aux data {aux!r})"
    return f"{typ.__name__} of length {n}{extra}"


class PyTreeDef:
    """Structure of a pytree, without its leaves.

    Stored as a pre-order tuple of entries: ``None`` for a leaf and
    ``(node_type, aux_data, num_children)`` for a node. A flat tuple makes hashing
    and equality (jit cache lookups) single C-level tuple operations.
    """

    __slots__ = ("_entries", "_flat_ctor", "_hash", "_num_leaves")

    def __init__(self, entries: tuple, num_leaves: int):
        self._entries = entries
        self._num_leaves = num_leaves
        self._hash: int | None = None
        root = entries[0]
        # Flat tuple/list of leaves: unflatten is then a single constructor call.
        self._flat_ctor = (root[0] if root is not None and root[0] in (tuple, list)
                           and len(entries) == num_leaves + 1 else None)

    @property
    def num_leaves(self) -> int:
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self._num_leaves == other._num_leaves and self._entries == other._entries

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                h = hash(self._entries)
            except TypeError:
                # Unhashable aux data: hash the shape only; __eq__ still compares aux.
                h = hash(tuple(e if e is None else (e[0], e[2]) for e in self._entries))
            self._hash = h
        return h

    def unflatten(self, leaves: Iterable) -> Any:
        """Build a pytree of this structure from ``leaves`` (in flatten order)."""
        leaves = leaves if type(leaves) is list else list(leaves)
        if len(leaves) != self._num_leaves:
            raise ValueError(f"tree_unflatten: {self} expects {self._num_leaves} leaves, "
                             f"got {len(leaves)}")
        ctor = self._flat_ctor
        if ctor is not None:
            return tuple(leaves) if ctor is tuple else leaves[:]
        # Walk entries backwards: every node's children are then on top of the stack,
        # first child topmost, so no recursion is needed.
        stack: list = []
        pos = len(leaves)
        for e in reversed(self._entries):
            if e is None:
                pos -= 1
                stack.append(leaves[pos])
                continue
            typ, aux, n = e
            if n:
                children = stack[:-n - 1:-1]
                del stack[-n:]
            else:
                children = []
            # Built-ins inline: a registry lookup and call per node dominates otherwise.
            if typ is tuple:
                stack.append(tuple(children))
            elif typ is list:
                stack.append(children)
            elif typ is dict:
                stack.append(dict(zip(aux, children)))
            else:
                stack.append(_spec_of(typ).unflatten(aux, tuple(children)))
        return stack[0]

    def flatten_up_to(self, tree: Any) -> list:
        """Leaves of ``tree`` taken at this treedef's leaf positions; a leaf of the
        treedef may correspond to a whole subtree of ``tree``."""
        out: list = []
        try:
            self._up_to(tree, 0, out)
        except _Mismatch as m:
            where = keystr(tuple(reversed(m.path)))
            raise ValueError(
                f"pytree structure mismatch at key path {where or '<root>'}: {m.detail}.\n"
                f"  expected structure: {self}\n"
                f"  got structure:      {tree_structure(tree)}") from None
        return out

    def _up_to(self, x: Any, i: int, out: list) -> int:
        e = self._entries[i]
        if e is None:
            out.append(x)
            return i + 1
        typ, aux, n = e
        if type(x) is not typ:
            raise _Mismatch(f"expected {_describe(typ, aux, n)}, got {type(x).__name__}")
        spec = _spec_of(typ)
        children, x_aux = spec.flatten(x)
        children = tuple(children)
        if len(children) != n or x_aux != aux:
            raise _Mismatch(f"expected {_describe(typ, aux, n)}, "
                            f"got {_describe(typ, x_aux, len(children))}")
        i += 1
        for j, child in enumerate(children):
            try:
                i = self._up_to(child, i, out)
            except _Mismatch as m:
                m.path.append(_child_keys(spec, x, aux, n)[j])
                raise
        return i

    def _subtree_end(self, i: int) -> int:
        pending = 1
        entries = self._entries
        while pending:
            e = entries[i]
            i += 1
            pending -= 1
            if e is not None:
                pending += e[2]
        return i

    def _sub(self, start: int, end: int) -> PyTreeDef:
        entries = self._entries[start:end]
        return PyTreeDef(entries, entries.count(None))

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the root node's children (empty for a leaf)."""
        root = self._entries[0]
        if root is None:
            return []
        out, i = [], 1
        for _ in range(root[2]):
            end = self._subtree_end(i)
            out.append(self._sub(i, end))
            i = end
        return out

    def node_data(self) -> tuple[type, Any] | None:
        """``(node_type, aux_data)`` of the root, or None for a leaf."""
        root = self._entries[0]
        return None if root is None else (root[0], root[1])

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """Treedef of this structure with every leaf replaced by ``inner``."""
        entries: list = []
        for e in self._entries:
            if e is None:
                entries.extend(inner._entries)
            else:
                entries.append(e)
        return PyTreeDef(tuple(entries), self._num_leaves * inner._num_leaves)

    def _repr_at(self, i: int) -> tuple[str, int]:
        e = self._entries[i]
        if e is None:
            return "*", i + 1
        typ, aux, n = e
        i += 1
        parts = []
        for _ in range(n):
            s, i = self._repr_at(i)
            parts.append(s)
        return _node_repr(typ, aux, parts), i

    def __repr__(self) -> str:
        return f"PyTreeDef({self._repr_at(0)[0]})"

    def __reduce__(self) -> tuple:
        return (PyTreeDef, (self._entries, self._num_leaves))


def _node_repr(typ: type, aux: Any, parts: list[str]) -> str:
    body = ", ".join(parts)
    if typ is tuple:
        return f"({body},)" if len(parts) == 1 else f"({body})"
    if typ is list:
        return f"[{body}]"
    if typ is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "}"
    if typ is type(None):
        return "None"
    name = _spec_of(typ).repr_name
    label = f"namedtuple[{typ.__name__}]" if name == "namedtuple" else f"{name}[{aux}]"
    return f"CustomNode({label}, [{body}])"


def _child_keys(spec: _NodeSpec, x: Any, aux: Any, n: int) -> list:
    if spec.keys is None:
        return [FlattenedIndexKey(i) for i in range(n)]
    return list(spec.keys(x, aux, n))


# --------------------------------------------------------------------------- flattening

# (tuple|list, n) -> treedef of a flat container of n leaves; reused so the hot path
# allocates no treedef and its hash is computed once.
_flat_defs: dict[tuple[type, int], PyTreeDef] = {}


def _flat_def(typ: type, n: int) -> PyTreeDef:
    td = _flat_defs.get((typ, n))
    if td is None:
        td = PyTreeDef(((typ, None, n),) + (None,) * n, n)
        _flat_defs[(typ, n)] = td
    return td


_NONE_ENTRY = (type(None), None, 0)


def _flatten_into(x: Any, leaves: list, entries: list, is_leaf: Callable | None) -> None:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        entries.append(None)
        return
    typ = type(x)
    # Built-ins inline, before any registry lookup: they are the commonest nodes.
    if typ is tuple or typ is list:
        children, aux = x, None
    elif typ is dict:
        aux = tuple(_sorted_keys(x))
        children = [x[k] for k in aux]
    else:
        spec = _spec_of(typ)
        if spec is None:
            leaves.append(x)
            entries.append(None)
            return
        children, aux = spec.flatten(x)
        if type(children) is not list and type(children) is not tuple:
            children = tuple(children)
    entries.append((typ, aux, len(children)))
    get = _kind_cache.get
    for c in children:
        # Leaves and None inline: avoids a recursive call for most children.
        if is_leaf is None:
            if c is None:
                entries.append(_NONE_ENTRY)
                continue
            if get(type(c), _MISS) is None:
                leaves.append(c)
                entries.append(None)
                continue
        _flatten_into(c, leaves, entries, is_leaf)


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """Return ``(leaves, treedef)``; ``is_leaf(x) -> True`` stops descent at ``x``."""
    typ = type(tree)
    if is_leaf is None and (typ is tuple or typ is list):
        get = _kind_cache.get
        for x in tree:
            if get(type(x), _MISS) is not None:
                break  # a node, or a type not classified yet: take the general path
        else:
            return list(tree), _flat_def(typ, len(tree))
    leaves: list = []
    entries: list = []
    _flatten_into(tree, leaves, entries, is_leaf)
    return leaves, PyTreeDef(tuple(entries), len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a pytree with structure ``treedef`` from ``leaves``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `tree`, left to right (`is_leaf` stops the descent early)."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The `PyTreeDef` of `tree`: its structure without the leaves."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for a single-node treedef (as in JAX, this includes ``None`` and ``()``)."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """Treedef of a tuple whose children have the given structures."""
    treedefs = list(treedefs)
    entries: list = [(tuple, None, len(treedefs))]
    for td in treedefs:
        entries.extend(td._entries)
    return PyTreeDef(tuple(entries), sum(td.num_leaves for td in treedefs))


def all_leaves(iterable: Iterable, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf (None is not a leaf)."""
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _spec_of(type(x)) is not None:
            return False
    return True


# --------------------------------------------------------------------------- mapping


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


# --------------------------------------------------------------------------- key paths


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


# --------------------------------------------------------------------------- Partial


class _HashableCallableShim:
    """Wraps a plain functools.partial passed to Partial, so that functools does not
    merge its bound arguments into the Partial's (they must stay static aux data)."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable):
        self.fun = fun

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            other = other.fun
        return self.fun == other

    def __repr__(self) -> str:
        return repr(self.fun)


class Partial(functools.partial):
    """A functools.partial that is a pytree: bound args/kwargs are children, the
    wrapped function is static aux data. Lets closures cross jit boundaries."""

    def __new__(cls, func: Callable, *args: Any, **kwargs: Any) -> Self:
        if isinstance(func, functools.partial) and not isinstance(func, Partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
