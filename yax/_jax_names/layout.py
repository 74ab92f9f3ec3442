"""`jax.experimental.layout`: the types that name a memory layout alongside a sharding.

yax places every array in XLA's default layout, so a `Layout` here only records the layout a
program asked for; `Format(layout, sharding)` pairs one with a sharding, as in jax (flax.core
walks through it when it renames sharding axes).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Format", "Layout"]


@dataclasses.dataclass(frozen=True)
class Layout:
    """Dimension order, minor to major (None: the compiler's default)."""

    major_to_minor: tuple[int, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Format:
    """A layout and a sharding."""

    layout: Any = None
    sharding: Any = None
