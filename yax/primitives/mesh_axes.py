"""Mesh axes as named axes: what collectives see inside `shard_map`, and how they lower.

Inside a shard_map body the mesh's axis names are bound the way `vmap(axis_name=...)` binds one:
`lax.psum(x, "data")` is staged as a collective equation instead of failing as an unbound name.
The body's semantics are those of vmap over the devices (each device is one example), so the
collectives' JVP, transpose and batching rules are the same ones vmap uses; only lowering differs:
in a manual region (`sdy.manual_computation`) a collective becomes an XLA collective over the
devices that differ only in that mesh axis.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from yax.core.avals import ShapedArray

_bound: contextvars.ContextVar = contextvars.ContextVar("yax_mesh_axes", default=())


class MeshAxis:
    """A mesh axis bound by an enclosing shard_map (what `find_axis_trace` returns for it).

    `level` is below every trace's, so every traced value counts as possibly varying along it;
    only concrete constants are known to be the same on every device."""

    level = -1

    def __init__(self, mesh, name: str):
        self.mesh = mesh
        self.axis_name = name
        self.axis_size = mesh.shape[name]


@contextlib.contextmanager
def bind_mesh_axes(mesh, names=None):
    """Bind `mesh`'s axes (or those in `names`) as named axes for the block."""
    names = tuple(names) if names is not None else mesh.axis_names
    token = _bound.set(_bound.get() + tuple(MeshAxis(mesh, n) for n in names))
    try:
        yield
    finally:
        _bound.reset(token)


def find_mesh_axis(name) -> MeshAxis | None:
    for axis in reversed(_bound.get()):
        if axis.axis_name == name:
            return axis
    return None


# --- varying manual axes (vma): which mesh axes a value inside shard_map varies along ---------
# A type-level fact, as jax's: an operation on values varying along some axes varies along all
# of them; psum/pmax/pmin over an axis make it the same on every device along it; these others
# make it vary along their axis (all_gather too: jax types its result as varying).

REDUCING = frozenset({"psum", "pmax", "pmin"})
VARYING = frozenset({"axis_index", "ppermute", "psum_scatter", "all_to_all", "all_gather"})


def out_varying(prim_name: str, params, ins: frozenset, everything: frozenset) -> frozenset:
    """The mesh axes an equation's outputs vary along, from the union `ins` of its inputs'."""
    axis = params.get("axis_name")
    axes = frozenset(axis) if isinstance(axis, (tuple, list)) else frozenset({axis})
    if prim_name == "pvary":
        return ins | frozenset(params["axes"])
    if prim_name in REDUCING:
        return ins - axes
    if prim_name in VARYING:
        return ins | axes
    if prim_name == "shard_map":
        return everything
    return ins


def vma_suffix(mesh, varying) -> str:
    """`{V:i}` / `{V:(i,j)}` (mesh order), or '' for a value varying over no axis."""
    names = [a for a in mesh.axis_names if a in varying]
    if not names:
        return ""
    return f"{{V:{names[0]}}}" if len(names) == 1 else f"{{V:({','.join(names)})}}"


class VaryingAval(ShapedArray):
    """The type of a value inside a staged shard_map body that varies along mesh axes: a
    ShapedArray (equal to, and hashed as, the plain one) printed with them, `f32[3]{V:i}`."""

    __slots__ = ("suffix",)

    def __init__(self, aval: ShapedArray, mesh, varying):
        super().__init__(aval.shape, aval.dtype, aval.weak_type)
        self.suffix = vma_suffix(mesh, varying)

    def str_short(self) -> str:
        return super().str_short() + self.suffix


# --- lowering: replica groups and partition numbering ---------------------------------------

def manual_mesh(ctx, axis_name):
    """The mesh of the innermost manual region of the module being lowered that has
    `axis_name`, or None (the name is then unbound: an error for the caller)."""
    for mesh in reversed(ctx.module_ctx.__dict__.get("manual_meshes", ())):
        if axis_name in mesh.axis_names:
            return mesh
    return None


def partition_of(ctx, mesh) -> np.ndarray:
    """For each mesh position (mesh-shaped array), its partition number in the program."""
    order = ctx.module_ctx.__dict__.get("device_ids")
    ids = mesh.device_ids
    if order is None:
        return np.arange(ids.size).reshape(ids.shape)
    where = {dev: p for p, dev in enumerate(order)}
    return np.vectorize(lambda d: where[d], otypes=[np.int64])(ids)


def replica_groups(ctx, mesh, axis_name) -> np.ndarray:
    """[groups, size]: partitions that differ only in their position along `axis_name`
    (each group ordered by that position)."""
    parts = partition_of(ctx, mesh)
    k = mesh.axis_names.index(axis_name)
    moved = np.moveaxis(parts, k, -1)
    return np.ascontiguousarray(moved.reshape(-1, mesh.shape[axis_name]))


def axis_coordinates(ctx, mesh, axis_name) -> np.ndarray:
    """Indexed by partition number: the position along `axis_name` of that partition."""
    parts = partition_of(ctx, mesh)
    k = mesh.axis_names.index(axis_name)
    coords = np.zeros(parts.size, dtype=np.int32)
    for pos in np.ndindex(parts.shape):
        coords[parts[pos]] = pos[k]
    return coords

