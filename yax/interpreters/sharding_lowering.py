"""Shardy annotations in lowered modules: meshes, tensor shardings, manual-axis sets.

A module that runs on several devices declares each mesh it uses once (`sdy.mesh @name` at the
top of the module); parameters, results, sharding constraints and shard_map regions then refer
to it by name. Mesh axes are written in the mesh's own order and sizes; partition p of the
compiled program is `mesh.devices.flat[p]`.
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from yax.runtime.partition_spec import UNCONSTRAINED


def mesh_symbol(mctx, mesh) -> str:
    """The symbol naming `mesh` in `mctx.module`, declaring it on first use."""
    meshes = mctx.__dict__.setdefault("meshes", {})
    hit = meshes.get(mesh)
    if hit is not None:
        return hit
    name = mctx.unique_name(f"mesh{len(meshes)}" if meshes else "mesh")
    with ir.InsertionPoint.at_block_begin(mctx.module.body):
        axes = [sdy.MeshAxisAttr.get(n, int(s)) for n, s in mesh.shape.items()]
        # Shardy numbers devices by partition: the program's device assignment
        # (`mctx.device_ids`, partition order) maps partitions to devices. A mesh laid out in
        # another order lists its devices' partition numbers.
        order = getattr(mctx, "device_ids", None)
        # an AbstractMesh (an array type's, or use_abstract_mesh's) has no devices: its
        # partitions are the program's, in order
        ids = [d.id for d in mesh.devices.flat] if hasattr(mesh, "devices") else None
        if order is None or ids is None or ids == list(order):
            attr = sdy.MeshAttr.get(axes)
        else:
            position = {dev: p for p, dev in enumerate(order)}
            try:
                attr = sdy.MeshAttr.get(axes, [position[i] for i in ids])
            except KeyError:
                raise ValueError(f"the mesh {mesh!r} uses devices outside this program's "
                                 f"devices {list(order)}; every mesh and sharding of one jitted "
                                 f"program must use the same devices") from None
        sdy.MeshOp(name, attr)
    meshes[mesh] = name
    return name


def dim_sharding(axes, *, closed: bool = True) -> sdy.DimensionShardingAttr:
    return sdy.DimensionShardingAttr.get([sdy.AxisRefAttr.get(a) for a in axes],
                                         is_closed=closed)


def tensor_sharding(mctx, mesh, dim_axes, *, open_dims=()) -> sdy.TensorShardingAttr:
    """`#sdy.sharding<@mesh, [{"x"}, {}]>`: dimension i sharded over `dim_axes[i]`.

    Dimensions listed in `open_dims` are left open (the compiler may shard them further).
    """
    sym = mesh_symbol(mctx, mesh)
    dims = [dim_sharding(axes, closed=i not in open_dims) for i, axes in enumerate(dim_axes)]
    return sdy.TensorShardingAttr.get(ir.FlatSymbolRefAttr.get(sym), dims)


def named_sharding_attr(mctx, sharding, ndim: int) -> sdy.TensorShardingAttr:
    """The Shardy attribute of a yax NamedSharding for a value of rank `ndim`."""
    spec = sharding.spec
    open_dims = {i for i in range(min(len(spec), ndim)) if spec[i] is UNCONSTRAINED}
    return tensor_sharding(mctx, sharding.mesh, sharding.dim_axes(ndim), open_dims=open_dims)


def per_value(shardings) -> sdy.TensorShardingPerValueAttr:
    return sdy.TensorShardingPerValueAttr.get(list(shardings))


def manual_axes(names) -> sdy.ManualAxesAttr:
    return sdy.ManualAxesAttr.get([ir.StringAttr.get(n) for n in names])


def set_value_shardings(func_op, attr_name: str, shardings: dict, count: int) -> None:
    """Set `sdy.sharding` on the arguments ("arg_attrs") or results ("res_attrs") of `func_op`
    named by `shardings` (index -> TensorShardingAttr), keeping attributes already there."""
    existing = func_op.attributes[attr_name] if attr_name in func_op.attributes else None
    entries = []
    for i in range(count):
        d = {}
        if existing is not None:
            old = ir.DictAttr(existing[i])
            for j in range(len(old)):
                named = old[j]
                d[named.name] = named.attr
        if i in shardings:
            d["sdy.sharding"] = shardings[i]
        entries.append(ir.DictAttr.get(d))
    func_op.attributes[attr_name] = ir.ArrayAttr.get(entries)
