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

from yax.core import primitive as core_primitive
from yax.core import trace as core_trace
from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr

_bound: contextvars.ContextVar = contextvars.ContextVar("yax_mesh_axes", default=())


class MeshAxis:
    """A mesh axis bound by an enclosing shard_map (what `find_axis_trace` returns for it).

    `level` is below every trace's, so every traced value counts as possibly varying along it;
    only concrete constants are known to be the same on every device."""

    level = -1

    def __init__(self, mesh, name: str, check_vma: bool = False):
        self.mesh = mesh
        self.axis_name = name
        self.axis_size = mesh.shape[name]
        self.check_vma = check_vma  # jax's typed rules (pvary, psum_invariant) along it


@contextlib.contextmanager
def bind_mesh_axes(mesh, names=None, check_vma: bool = False):
    """Bind `mesh`'s axes (or those in `names`) as named axes for the block; with
    `check_vma`, values are typed with the axes they vary along and operands that differ are
    cast to their union (see `cast_operands`)."""
    names = tuple(names) if names is not None else mesh.axis_names
    token = _bound.set(_bound.get() + tuple(MeshAxis(mesh, n, check_vma) for n in names))
    casts = core_trace.operand_casts.set(cast_operands if check_vma else None)
    try:
        yield
    finally:
        core_trace.operand_casts.reset(casts)
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

REDUCING = frozenset({"psum", "psum_invariant", "pmax", "pmin"})
VARYING = frozenset({"axis_index", "ppermute", "psum_scatter", "all_to_all", "all_gather"})


def out_varying(prim_name: str, params, ins: frozenset, everything: frozenset) -> frozenset:
    """The mesh axes an equation's outputs vary along, from the union `ins` of its inputs'."""
    axis = params.get("axis_name", params.get("axes"))
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


_NONE = frozenset()


def vma_suffix(mesh, varying) -> str:
    """`{V:i}` / `{V:(i,j)}` (mesh order), or '' for a value varying over no axis."""
    names = [a for a in mesh.axis_names if a in varying]
    if not names:
        return ""
    return f"{{V:{names[0]}}}" if len(names) == 1 else f"{{V:({','.join(names)})}}"


class VaryingAval(ShapedArray):
    """The type of a value inside a shard_map body that varies along mesh axes: a ShapedArray
    that knows them (`vma`) and prints them, `f32[3]{V:i}`. As in jax they are part of the
    type: it equals only a type varying along the same axes, so that a program traced once
    per types (jit, a cond branch, a scan body) is not reused for operands that vary
    otherwise, whose casts (and so derivatives) differ. Its copies (`update`,
    `strip_weak_type`) keep them: a batched, weak-typed or tangent value varies as its
    primal does."""

    __slots__ = ("vma", "mesh", "suffix")

    def __init__(self, aval: ShapedArray, mesh, varying):
        super().__init__(aval.shape, aval.dtype, aval.weak_type, aval.sharding)
        self.vma = frozenset(varying)
        self.mesh = mesh
        self.suffix = vma_suffix(mesh, varying)
        self._hash = hash((self._hash, self.vma))

    def __eq__(self, other):
        return ShapedArray.__eq__(self, other) and self.vma == getattr(other, "vma", _NONE)

    __hash__ = ShapedArray.__hash__

    def plain(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type, self.sharding)

    def update(self, *args, **kwargs) -> ShapedArray:
        return VaryingAval(super().update(*args, **kwargs), self.mesh, self.vma)

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def str_short(self) -> str:
        return super().str_short() + self.suffix


def plain(aval):
    return aval.plain() if isinstance(aval, VaryingAval) else aval


def typed(aval, mesh, varying):
    """`aval` typed as varying along `varying` (plain when that is empty)."""
    return VaryingAval(plain(aval), mesh, varying) if varying else plain(aval)


def vma_of(x) -> frozenset:
    """The mesh axes the value `x` varies along (none for constants and outside shard_map)."""
    return getattr(getattr(x, "aval", None), "vma", frozenset())


# --- the typing rules, applied while a shard_map body is traced -------------------------------

# primitives that make a value vary with no varying operand
_MAKES_VARYING = frozenset({"axis_index", "pvary"})


def _has_subprogram(params) -> bool:
    return any(isinstance(v, (ClosedJaxpr, Jaxpr)) or (
        isinstance(v, tuple) and any(isinstance(e, (ClosedJaxpr, Jaxpr)) for e in v))
        for v in params.values())


def _type_outputs(primitive, avals, outs, params):
    """The outputs typed with the mesh axes they vary along (jax's vma rule). A primitive that
    holds a program (jit, scan, cond, ...) keeps the types its traced program gave."""
    mesh = None
    for a in avals:  # the common case (no shard_map anywhere): one attribute read per operand
        if getattr(a, "vma", None):
            mesh = a.mesh
            break
    if mesh is None:
        if primitive.name not in _MAKES_VARYING:
            return outs
        mesh = _innermost_mesh()
        if mesh is None:
            return outs
    if _has_subprogram(params):
        return outs
    ins = frozenset().union(*(getattr(a, "vma", _NONE) for a in avals))  # refs have none
    out = out_varying(primitive.name, params, ins, frozenset(mesh.axis_names))
    return [typed(a, mesh, out) for a in outs]


def _innermost_mesh():
    bound = _bound.get()
    return bound[-1].mesh if bound else None


core_primitive.vma_typing = _type_outputs


pvary_p = None  # yax.primitives.collectives' pvary (whose rules need the collectives), set there


def casts_operands(primitive, params) -> bool:
    """An ordinary operation of two or more operands (jax's implicit pvary sites)."""
    return not primitive.multiple_results and not _has_subprogram(params)


def cast_operands(primitive, args, params):
    """jax's implicit pvary: operands varying along fewer mesh axes than the others are cast to
    the union first. Values do not change; the cast's transpose sums the cotangent over the
    axes it added, which is what makes an invariant operand's derivative invariant."""
    vmas = [vma_of(a) for a in args]
    union = frozenset().union(*vmas)
    if all(v == union for v in vmas) or not casts_operands(primitive, params):
        return args
    return tuple(a if v == union else pvary_p.bind(a, axes=ordered(union - v))
                 for a, v in zip(args, vmas, strict=True))


def ordered(axes) -> tuple:
    """Mesh axis names in the order of the innermost bound mesh that has them."""
    for bound in reversed(_bound.get()):
        names = bound.mesh.axis_names
        if all(a in names for a in axes):
            return tuple(n for n in names if n in axes)
    return tuple(sorted(axes))


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

