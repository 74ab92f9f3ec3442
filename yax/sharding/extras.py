"""Smaller pieces of `jax.sharding`'s API: AxisType, set_mesh/get_mesh, reshard."""

from __future__ import annotations

import enum

from yax import tree_util
from yax.core.trace import Tracer
from yax.sharding.mesh import _current, current_mesh
from yax.sharding.named import NamedSharding
from yax.sharding.partition_spec import PartitionSpec


class AxisType(enum.Enum):
    """How a mesh axis is treated. yax partitions every axis automatically (Auto) outside
    shard_map and manually (Manual) inside it; the value is accepted for compatibility."""

    Auto = "auto"
    Explicit = "explicit"
    Manual = "manual"


class _MeshSetting:
    """`set_mesh(mesh)`: sets the current mesh; also usable as a `with` block that restores
    the previous one."""

    def __init__(self, mesh):
        self._token = _current.set(mesh)

    def __enter__(self):
        return _current.get()

    def __exit__(self, *exc):
        _current.reset(self._token)
        return False


def set_mesh(mesh):
    """Make `mesh` the current mesh (for this thread / task), as `with mesh:` does inside a
    block. Returns an object that, used in `with`, restores the previous mesh at the end."""
    return _MeshSetting(mesh)


def get_mesh():
    """The current mesh (`with mesh:` / `set_mesh`), or None."""
    return current_mesh()


get_abstract_mesh = get_mesh


def reshard(x, sharding):
    """Place `x` (a pytree) as `sharding` says: a copy for concrete Arrays
    (`yax.device_put`), a sharding constraint for traced values (`lax.with_sharding_constraint`).
    A bare PartitionSpec uses the current mesh."""
    from yax.primitives.sharding_constraint import with_sharding_constraint
    from yax.transforms.api import device_put

    if isinstance(sharding, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            raise ValueError("reshard with a bare PartitionSpec needs a current mesh "
                             "(`with mesh:` or yax.sharding.set_mesh(mesh))")
        sharding = NamedSharding(mesh, sharding)
    if any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(x)):
        return with_sharding_constraint(x, sharding)
    return device_put(x, sharding)
