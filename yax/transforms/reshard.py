"""`reshard(x, sharding)`: place a pytree as a sharding says, whether it is concrete or traced.

Over Explicit mesh axes the sharding becomes the values' type (`typeof(y)` shows `8@X`), as
jax's `reshard`; a bare PartitionSpec names axes of the current abstract mesh (`set_mesh`,
`use_abstract_mesh`)."""

from __future__ import annotations

from yax import tree_util
from yax.core.trace import Tracer
from yax.lax._util import out_sharding_of, with_out_sharding
from yax.primitives.sharding_constraint import with_sharding_constraint
from yax.runtime.mesh import AbstractMesh, get_abstract_mesh
from yax.runtime.named_sharding import NamedSharding
from yax.runtime.partition_spec import PartitionSpec
from yax.transforms.api import device_put


def reshard(x, sharding):
    """Place `x` (a pytree) as `sharding` says: a copy for concrete Arrays
    (`yax.device_put`), a sharding constraint for traced values (`lax.with_sharding_constraint`).
    A bare PartitionSpec uses the current (abstract) mesh."""
    if isinstance(sharding, PartitionSpec) or (
            isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh)):
        if isinstance(sharding, PartitionSpec) and get_abstract_mesh().empty:
            raise ValueError("reshard with a bare PartitionSpec needs a current mesh "
                             "(`with mesh:` or yax.sharding.set_mesh(mesh))")
        resolved = out_sharding_of("reshard", sharding)
        if resolved is None:  # an all-None spec over the empty mesh: nothing to place
            return x
        return tree_util.tree_map(lambda leaf: with_out_sharding(leaf, resolved), x)
    if any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(x)):
        return with_sharding_constraint(x, sharding)
    return device_put(x, sharding)
