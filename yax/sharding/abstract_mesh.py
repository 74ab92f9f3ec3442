"""`AbstractMesh`: a mesh's axis names and sizes without its devices (as jax.sharding's).

What tracing needs to know about a mesh (shapes of shards, names of axes) without committing
to devices; `Mesh.abstract_mesh` style code and annotations in libraries use the type.
"""

from __future__ import annotations

import collections
import math

from yax.runtime.mesh import AxisType

__all__ = ["AbstractMesh"]


class AbstractMesh:
    """Named axes of given sizes: `AbstractMesh((4, 2), ("data", "model"))`."""

    def __init__(self, axis_sizes, axis_names, *, axis_types=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: {len(self.axis_sizes)} sizes {self.axis_sizes} "
                             f"for {len(self.axis_names)} names {self.axis_names}")
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(self.axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(self.axis_names)
        self.axis_types = tuple(axis_types)

    @property
    def shape(self) -> collections.OrderedDict:
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)
        return f"AbstractMesh({axes})"
