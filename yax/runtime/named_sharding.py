"""Shardings: where each block of an array lives.

`NamedSharding(mesh, spec)` splits dimension i of an array over the mesh axes named by `spec[i]`
and replicates it over the mesh axes the spec does not name. `SingleDeviceSharding(device)` puts
the whole array on one device. Both answer the same questions: `shard_shape`,
`devices_indices_map`, `is_fully_replicated`, `device_set`, `addressable_devices`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math

from yax.runtime import backend
from yax.runtime.mesh import AbstractMesh, AxisType, Mesh, current_mesh, get_abstract_mesh
from yax.runtime.partition_spec import UNCONSTRAINED, PartitionSpec


class ShardingError(ValueError):
    """A sharding that does not fit an array (rank, divisibility, unknown mesh axis)."""


class ShardingTypeError(ShardingError, TypeError):
    """An operation whose result's sharding over Explicit mesh axes is not defined by its
    inputs' (jax's ShardingTypeError): give the operation `out_sharding=`, `reshard` an input,
    or use `auto_axes`."""


class Sharding:
    """Base class of yax shardings."""

    # the memory the array lives in; None given means the device's own memory, which JAX
    # names (and prints) "device"
    _memory_kind = None

    @property
    def memory_kind(self) -> str:
        return self._memory_kind or "device"

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set:
        here = backend.process_index()
        return {d for d in self.device_set if getattr(d, "process_index", 0) == here}

    @property
    def is_fully_addressable(self) -> bool:
        return len(self.addressable_devices) == len(self.device_set)

    def addressable_devices_indices_map(self, global_shape) -> dict:
        local = self.addressable_devices
        return {d: idx for d, idx in self.devices_indices_map(global_shape).items() if d in local}

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Same placement of every block of an array of rank `ndim`."""
        if not isinstance(other, Sharding):
            return False
        shape = (2 ** 10,) * ndim  # divisible by any small mesh axis product
        try:
            return (self._device_order() == other._device_order()
                    and self.devices_indices_map(shape) == other.devices_indices_map(shape))
        except ShardingError:
            return False


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self._memory_kind = memory_kind

    @property
    def device_set(self) -> set:
        return {self._device}

    def _device_order(self) -> list:
        return [self._device]

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape) -> dict:
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


class NamedSharding(Sharding):
    """An array laid out over `mesh` as `spec` says.

    Args:
      mesh: a `yax.sharding.Mesh`.
      spec: a `PartitionSpec` (a tuple is converted), one entry per leading dimension.

    Example:
      >>> mesh = yax.make_mesh((8,), ("data",))
      >>> x = yax.device_put(jnp.zeros((16, 4)), NamedSharding(mesh, P("data")))
      >>> x.sharding.shard_shape(x.shape)   # (2, 4)
    """

    def __init__(self, mesh: Mesh | AbstractMesh, spec=None, *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding needs a yax.sharding.Mesh (or AbstractMesh), got "
                            f"{type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            if spec is None:
                spec = PartitionSpec()
            elif isinstance(spec, (tuple, list)):
                spec = PartitionSpec(*spec)
            else:
                raise TypeError(f"NamedSharding's spec must be a PartitionSpec, got {spec!r}")
        used = spec.axis_names()
        for name in (*used, *sorted(spec.unreduced), *sorted(spec.reduced)):
            if name not in mesh.axis_names:
                raise ShardingError(f"PartitionSpec {spec} names mesh axis {name!r}, but the mesh "
                                    f"has axes {mesh.axis_names} ({mesh!r})")
        if len(set(used)) != len(used):
            raise ShardingError(f"PartitionSpec {spec} uses a mesh axis more than once; each mesh "
                                f"axis may shard at most one dimension")
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind

    @property
    def device_set(self) -> set:
        return set(self.mesh.devices.flat)

    def _device_order(self) -> list:
        return list(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        return all(self.mesh.axis_size(n) == 1 for n in self.spec.axis_names())

    @property
    def abstract(self) -> NamedSharding:
        """The same sharding over the mesh's AbstractMesh."""
        if isinstance(self.mesh, AbstractMesh):
            return self
        return NamedSharding(self.mesh.abstract_mesh, self.spec)

    def with_spec(self, spec) -> NamedSharding:
        return NamedSharding(self.mesh, spec, memory_kind=self._memory_kind)

    def dim_axes(self, ndim: int) -> list[tuple]:
        """The mesh axes sharding each of `ndim` dimensions (an empty tuple: not sharded)."""
        self.check_rank(ndim)
        out = []
        for i in range(ndim):
            p = self.spec[i] if i < len(self.spec) else None
            out.append(() if p is None or p is UNCONSTRAINED else
                       (p,) if isinstance(p, str) else tuple(p))
        return out

    def check_rank(self, ndim: int, what: str = "an array") -> None:
        if len(self.spec) > ndim:
            raise ShardingError(f"PartitionSpec {self.spec} has {len(self.spec)} entries, more "
                                f"than the {ndim} dimensions of {what}; give at most one entry "
                                f"per dimension")

    def check_shape(self, global_shape, what: str = "the array") -> None:
        """Every sharded dimension must divide evenly over its mesh axes."""
        for i, axes in enumerate(self.dim_axes(len(global_shape))):
            n = math.prod(self.mesh.axis_size(a) for a in axes)
            if global_shape[i] % n:
                raise ShardingError(
                    f"{what} of shape {tuple(global_shape)} cannot be sharded as {self.spec} "
                    f"over {self.mesh!r}: dimension {i} (size {global_shape[i]}) is not "
                    f"divisible by the {n} devices of mesh axes {axes}; pad the array or "
                    f"choose another PartitionSpec")

    def shard_shape(self, global_shape) -> tuple:
        self.check_shape(global_shape)
        return tuple(s // math.prod(self.mesh.axis_size(a) for a in axes)
                     for s, axes in zip(global_shape, self.dim_axes(len(global_shape))))

    def devices_indices_map(self, global_shape) -> dict:
        """device -> the tuple of slices of the global array it holds."""
        global_shape = tuple(global_shape)
        local = self.shard_shape(global_shape)
        dim_axes = self.dim_axes(len(global_shape))
        pos_of = {n: k for k, n in enumerate(self.mesh.axis_names)}
        out = {}
        for flat, dev in enumerate(self.mesh.devices.flat):
            coords = _unravel(flat, self.mesh.axis_sizes)
            idx = []
            for size, axes, dim in zip(local, dim_axes, global_shape):
                if not axes:
                    idx.append(slice(None))
                    continue
                block = 0
                for a in axes:  # the first axis named is the major one
                    block = block * self.mesh.axis_size(a) + coords[pos_of[a]]
                idx.append(slice(block * size, (block + 1) * size) if size != dim
                           else slice(None))
            out[dev] = tuple(idx)
        return out

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec and self.memory_kind == other.memory_kind)

    def __hash__(self):
        return hash(("NamedSharding", self.mesh, self.spec, self.memory_kind))

    def __repr__(self):
        # JAX embeds the mesh's short form, `Mesh('x': 8, axis_types=(Auto,))`; an abstract
        # mesh's sharding (an array type's) has no memory kind
        if isinstance(self.mesh, AbstractMesh):
            return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r})"
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, "
                f"memory_kind={self.memory_kind})")


def _unravel(flat: int, shape) -> tuple:
    coords = []
    for s in reversed(shape):
        coords.append(flat % s)
        flat //= s
    return tuple(reversed(coords))


def on_current_mesh(spec: PartitionSpec, what: str) -> NamedSharding:
    """A bare `spec` read as jax reads it: over the mesh set with `yax.set_mesh` (or
    `with mesh:`); a ShardingError naming `what` (the caller) when no mesh is set."""
    mesh = current_mesh()
    if mesh is None:
        raise ShardingError(f"{what}: the PartitionSpec {spec} names mesh axes, but no mesh is "
                            f"set; set one with yax.set_mesh(mesh) (or `with mesh:`), or pass "
                            f"NamedSharding(mesh, {spec})")
    return NamedSharding(mesh, spec)


def type_sharding(sharding, ndim: int, mesh=None):
    """The sharding an array's type carries for a placement `sharding` (NamedSharding or
    None): the abstract mesh (`mesh`, else the sharding's own) and a spec of `ndim` entries
    naming only its Explicit axes, unreduced/reduced axes kept. None when nothing is sharded
    over an Explicit axis (plain avals stay plain)."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh.abstract_mesh if mesh is None else mesh
    if AxisType.Explicit not in mesh.axis_types:
        return None
    explicit = set(mesh.explicit_axes)
    spec = sharding.spec
    entries = tuple(spec)[:ndim] + (None,) * (ndim - len(spec))
    kept = tuple(_keep(e, explicit) for e in entries)
    unreduced, reduced = spec.unreduced & explicit, spec.reduced & explicit
    if all(e is None for e in kept) and not unreduced and not reduced:
        return None
    return NamedSharding(mesh, PartitionSpec(*kept, unreduced=unreduced, reduced=reduced))


def _keep(entry, explicit: set):
    if entry is None or entry is UNCONSTRAINED:
        return None
    names = entry if isinstance(entry, tuple) else (entry,)
    kept = tuple(n for n in names if n in explicit)
    return None if not kept else kept[0] if len(kept) == 1 else kept


def typed(aval, spec_entries, mesh, unreduced=frozenset(), reduced=frozenset()):
    """`aval` with the type sharding (over abstract `mesh`) whose dims are `spec_entries`."""
    if all(e is None for e in spec_entries) and not unreduced and not reduced:
        sharding = None
    else:
        sharding = NamedSharding(mesh, PartitionSpec(*spec_entries, unreduced=unreduced,
                                                     reduced=reduced))
    if aval.sharding == sharding:
        return aval
    return aval.update(sharding=sharding)


def without_leading_dim(aval):
    """`aval` with its first dimension removed, the others keeping their sharding (a scanned
    slice's type)."""
    sharding = getattr(aval, "sharding", None)
    out = aval.update(shape=aval.shape[1:])
    if sharding is None:
        return out
    spec = tuple(sharding.spec) + (None,) * (aval.ndim - len(sharding.spec))
    return typed(out, spec[1:], sharding.mesh)


def resolve_spec(spec, what: str) -> NamedSharding:
    """`out_sharding=` given as a PartitionSpec (over the current abstract mesh) or a
    NamedSharding, as a NamedSharding."""
    if isinstance(spec, NamedSharding):
        return spec
    if not isinstance(spec, PartitionSpec):
        spec = PartitionSpec(*spec)
    mesh = get_abstract_mesh()
    if mesh.empty:
        raise ShardingError(f"{what}: out_sharding={spec} names mesh axes, but no mesh is set; "
                            f"set one with yax.set_mesh(mesh), or pass a NamedSharding")
    return NamedSharding(mesh, spec)


# (primitive name, result dims, unreduced axes) forced by `result_sharding`
_forced: contextvars.ContextVar = contextvars.ContextVar("yax_result_sharding", default=None)


@contextlib.contextmanager
def result_sharding(name: str, dims, unreduced=frozenset()):
    """Inside the block, a `name` primitive bound on operands sharded over Explicit axes has
    the result type sharded as `dims` (one spec entry per result dimension, over its operands'
    mesh) rather than what its sharding rule says: `out_sharding=` of dot/einsum/reshape, and the
    transposes of autodiff, which type a cotangent as its primal (as jax's do)."""
    token = _forced.set((name, tuple(dims), frozenset(unreduced)))
    try:
        yield
    finally:
        _forced.reset(token)


def forced_result(name: str):
    """The (dims, unreduced) `result_sharding` forces on primitive `name`, or None."""
    hit = _forced.get()
    return hit[1:] if hit is not None and hit[0] == name else None
