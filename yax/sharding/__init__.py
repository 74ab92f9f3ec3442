"""yax.sharding: meshes of devices, partition specs and shardings (as `jax.sharding`).

    mesh = yax.make_mesh((8,), ("data",))
    x = yax.device_put(x, NamedSharding(mesh, P("data")))

The classes live on the runtime floor (`yax.runtime.mesh`, `named_sharding`, `partition_spec`),
where placement and the XLA bridge use them; this package is their public face.
"""

from yax.runtime.mesh import (  # noqa: F401
    AbstractMesh,
    AxisType,
    Mesh,
    current_mesh,
    get_abstract_mesh,
    get_mesh,
    make_mesh,
    set_mesh,
    use_abstract_mesh,
    use_mesh,
)
from yax.runtime.named_sharding import (  # noqa: F401
    NamedSharding,
    Sharding,
    ShardingError,
    SingleDeviceSharding,
)
from yax.runtime.partition_spec import UNCONSTRAINED, P, PartitionSpec  # noqa: F401
from yax.transforms.reshard import reshard  # noqa: F401
from yax.transforms.sharding_axes import auto_axes, explicit_axes  # noqa: F401


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """The sharding that places a whole array on `device` (as jax's)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


__all__ = ["AbstractMesh", "Mesh", "NamedSharding", "PartitionSpec", "P", "Sharding",
           "SingleDeviceSharding",
           "ShardingError", "UNCONSTRAINED", "current_mesh", "make_mesh", "use_mesh", "AxisType",
           "get_abstract_mesh", "get_mesh", "reshard", "set_mesh", "make_single_device_sharding",
           "use_abstract_mesh", "auto_axes", "explicit_axes"]
