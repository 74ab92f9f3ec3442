"""A small pretty-printing document model: text, breaks, nesting, groups and fills.

A document is laid out within a width. A group prints flat (every break as its flat text) when
it fits on the rest of the line, and otherwise breaks every break of its own level onto a new
line at the current nesting. A fill keeps putting items on the line and breaks only where the
line is already full, which is how long binder lists wrap. The jaxpr printer builds its layout
from these pieces so that it matches jax's.
"""

from __future__ import annotations

from typing import NamedTuple

WIDTH = 80


class Text(NamedTuple):
    text: str


class Brk(NamedTuple):
    flat: str = " "


class Nest(NamedTuple):
    indent: int
    doc: object


class Concat(NamedTuple):
    docs: tuple


class Group(NamedTuple):
    doc: object


class Fill(NamedTuple):
    items: tuple
    sep: str = " "


def concat(*docs) -> Concat:
    return Concat(tuple(Text(d) if isinstance(d, str) else d for d in docs))


def join(sep, docs) -> Concat:
    out = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return concat(*out)


def flat_width(doc, limit: int = 1 << 62) -> int:
    """The width of `doc` printed flat; counting stops once it passes `limit`, so asking
    whether a big group fits on a line costs a line's worth of work, not the group's."""
    if isinstance(doc, Text):
        return len(doc.text)
    if isinstance(doc, Brk):
        return len(doc.flat)
    if isinstance(doc, (Nest, Group)):
        return flat_width(doc.doc, limit)
    parts, sep = (doc.items, len(doc.sep)) if isinstance(doc, Fill) else (doc.docs, 0)
    total = -sep if parts else 0
    for part in parts:
        total += sep + flat_width(part, limit - total)
        if total > limit:
            break
    return total


def render(doc, width: int = WIDTH) -> str:
    out: list[str] = []
    _Layout(out, width).emit(doc, 0, flat=False)
    return "".join(out)


class _Layout:
    def __init__(self, out, width):
        self.out, self.width, self.col = out, width, 0

    def write(self, text: str):
        self.out.append(text)
        self.col += len(text)

    def newline(self, indent: int):
        self.out.append("\n" + " " * indent)
        self.col = indent

    def emit(self, doc, indent: int, flat: bool):
        if isinstance(doc, Text):
            self.write(doc.text)
        elif isinstance(doc, Brk):
            self.write(doc.flat) if flat else self.newline(indent)
        elif isinstance(doc, Nest):
            self.emit(doc.doc, indent + doc.indent, flat)
        elif isinstance(doc, Group):
            room = self.width - self.col
            fits = flat or flat_width(doc.doc, room) <= room
            self.emit(doc.doc, indent, fits)
        elif isinstance(doc, Fill):
            self.emit_fill(doc, indent, flat)
        else:
            for d in doc.docs:
                self.emit(d, indent, flat)

    def emit_fill(self, doc: Fill, indent: int, flat: bool):
        for i, item in enumerate(doc.items):
            # jax's fill breaks once the line has no room left for the separator itself
            if i and (flat or self.col + len(doc.sep) <= self.width):
                self.write(doc.sep)
            elif i:
                self.newline(indent)
            self.emit(item, indent, flat)
