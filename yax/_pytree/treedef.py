"""PyTreeDef, the hashable description of a pytree's containers, and flattening: `tree_flatten`
splits a pytree into its leaves and treedef, `tree_unflatten` rebuilds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from yax._pytree.keys import (
    FlattenedIndexKey,
    keystr,
)
from yax._pytree.registry import (
    _MISS,
    _flat_defs,
    _kind_cache,
    _NodeSpec,
    _sorted_keys,
    _spec_of,
)


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
