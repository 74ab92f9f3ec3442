"""yax.sharding: meshes of devices, partition specs and shardings (as `jax.sharding`).

    mesh = yax.make_mesh((8,), ("data",))
    x = yax.device_put(x, NamedSharding(mesh, P("data")))
"""

from yax.sharding.extras import (  # noqa: F401
           AxisType,
           get_abstract_mesh,
           get_mesh,
           reshard,
           set_mesh,  # noqa: F401
)
from yax.sharding.mesh import Mesh, current_mesh, make_mesh, use_mesh  # noqa: F401
from yax.sharding.named import (  # noqa: F401
           NamedSharding,
           Sharding,
           ShardingError,
           SingleDeviceSharding,  # noqa: F401
)
from yax.sharding.partition_spec import UNCONSTRAINED, P, PartitionSpec  # noqa: F401

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "P", "Sharding", "SingleDeviceSharding",
           "ShardingError", "UNCONSTRAINED", "current_mesh", "make_mesh", "use_mesh", "AxisType",
           "get_abstract_mesh", "get_mesh", "reshard", "set_mesh"]
