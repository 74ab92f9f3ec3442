"""`reshard(x, sharding)`: place a pytree as a sharding says, whether it is concrete or traced."""

from __future__ import annotations

from yax import tree_util
from yax.core.trace import Tracer
from yax.primitives.sharding_constraint import with_sharding_constraint
from yax.runtime.mesh import current_mesh
from yax.runtime.named_sharding import NamedSharding
from yax.runtime.partition_spec import PartitionSpec
from yax.transforms.api import device_put


def reshard(x, sharding):
    """Place `x` (a pytree) as `sharding` says: a copy for concrete Arrays
    (`yax.device_put`), a sharding constraint for traced values (`lax.with_sharding_constraint`).
    A bare PartitionSpec uses the current mesh."""
    if isinstance(sharding, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            raise ValueError("reshard with a bare PartitionSpec needs a current mesh "
                             "(`with mesh:` or yax.sharding.set_mesh(mesh))")
        sharding = NamedSharding(mesh, sharding)
    if any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(x)):
        return with_sharding_constraint(x, sharding)
    return device_put(x, sharding)
