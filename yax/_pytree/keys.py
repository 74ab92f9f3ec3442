"""Key paths into pytrees: the keys naming a child of a node (SequenceKey, DictKey, GetAttrKey,
FlattenedIndexKey) and `keystr`, which prints a path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import Any


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
