"""yax shardings <-> jaxlib's sharding objects (which device buffers and executables use).

jaxlib's multi-device arrays carry a jax sharding object; yax keeps its own `yax.sharding`
classes for users and converts here, once per distinct sharding.
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as _xc

from yax.runtime.mesh import AxisType, Mesh
from yax.runtime.named_sharding import NamedSharding, Sharding, SingleDeviceSharding
from yax.runtime.partition_spec import UNCONSTRAINED, PartitionSpec

_single_device: dict = {}


def sharding_of(device):
    """The jaxlib single-device sharding of `device` (one object per device)."""
    s = _single_device.get(device)
    if s is None:
        s = _single_device[device] = jax.sharding.SingleDeviceSharding(device)
    return s


@functools.lru_cache(maxsize=512)
def _jax_mesh(mesh: Mesh):
    # the axis types travel with the buffers, so that `x.sharding` of a result names them
    types = tuple(getattr(jax.sharding.AxisType, t.name) for t in mesh.axis_types)
    return jax.sharding.Mesh(mesh.devices, mesh.axis_names, axis_types=types)


def _jax_spec(spec: PartitionSpec):
    entries = [None if p is UNCONSTRAINED else p for p in spec]
    if spec.unreduced or spec.reduced:
        return jax.sharding.PartitionSpec(*entries, unreduced=spec.unreduced,
                                          reduced=spec.reduced)
    return jax.sharding.PartitionSpec(*entries)


@functools.lru_cache(maxsize=2048)
def to_jax(sharding):
    """The jaxlib-level sharding of a yax sharding."""
    if isinstance(sharding, SingleDeviceSharding):
        return sharding_of(next(iter(sharding.device_set)))
    if isinstance(sharding, NamedSharding):
        return jax.sharding.NamedSharding(_jax_mesh(sharding.mesh), _jax_spec(sharding.spec))
    if isinstance(sharding, OpaqueSharding):
        return sharding.jax_sharding
    raise TypeError(f"not a yax sharding: {sharding!r}")


def device_assignment(devices) -> object:
    """The [replicas=1, partitions] assignment: partition p runs on `devices[p]`."""
    return _xc.DeviceAssignment.create(np.array([[d.id for d in devices]]))


class OpaqueSharding(Sharding):
    """A placement the compiler chose that no NamedSharding over the program's mesh expresses
    (kept as XLA's HloSharding over the program's devices)."""

    def __init__(self, hlo_sharding, devices):
        self.hlo = hlo_sharding
        self._devices = list(devices)
        self.jax_sharding = _jax.GSPMDSharding(_xc.DeviceList(tuple(self._devices)),
                                               hlo_sharding)

    @property
    def device_set(self) -> set:
        return set(self._devices)

    def _device_order(self) -> list:
        return list(self._devices)

    @property
    def is_fully_replicated(self) -> bool:
        return self.hlo.is_replicated()

    def shard_shape(self, global_shape) -> tuple:
        return tuple(self.jax_sharding.shard_shape(tuple(global_shape)))

    def devices_indices_map(self, global_shape) -> dict:
        return dict(self.jax_sharding.devices_indices_map(tuple(global_shape)))

    def __eq__(self, other):
        return (isinstance(other, OpaqueSharding) and self._devices == other._devices
                and self.hlo == other.hlo)

    def __hash__(self):
        return hash(("OpaqueSharding", tuple(d.id for d in self._devices), str(self.hlo)))

    def __repr__(self):
        return f"OpaqueSharding({self.hlo})"


def from_hlo(hlo_sharding, mesh: Mesh | None, devices, ndim: int):
    """A yax sharding for a placement XLA chose: a NamedSharding over `mesh` when one matches
    (the usual case), else an OpaqueSharding."""
    if hlo_sharding.is_replicated() and mesh is not None:
        return NamedSharding(mesh, PartitionSpec())
    if mesh is not None:
        named = _match_named(hlo_sharding, mesh, ndim)
        if named is not None:
            return named
    return OpaqueSharding(hlo_sharding, devices)


def _match_named(hlo_sharding, mesh: Mesh, ndim: int):
    """Search the specs that shard each dimension over consecutive mesh axes in mesh order."""
    try:
        tiles = list(hlo_sharding.tile_assignment_dimensions())
    except Exception:
        return None
    if len(tiles) < ndim:
        return None
    # compared block by block on a probe shape every candidate divides
    probe = tuple(t * 2 for t in tiles[:ndim])
    try:
        want = OpaqueSharding(hlo_sharding, mesh.devices.flat).devices_indices_map(probe)
    except Exception:
        return None
    names, sizes = mesh.axis_names, mesh.axis_sizes
    for spec in _candidate_specs(tiles[:ndim], names, sizes):
        candidate = NamedSharding(mesh, _without_trailing_nones(spec))
        if candidate.devices_indices_map(probe) == want:
            return candidate
    return None


def like_first_argument(chosen, ndim: int, first_argument):
    """The sharding a result the compiler placed is given: the first argument's own sharding
    object when the result has its rank and its placement (so P('x', None) stays P('x', None)
    through `x * 2`, as in JAX), else the compiler's choice."""
    if first_argument is None or chosen is None:
        return chosen
    arg_sharding, arg_ndim = first_argument
    if arg_ndim == ndim and arg_sharding.is_equivalent_to(chosen, ndim):
        return arg_sharding
    return chosen


def _without_trailing_nones(spec: PartitionSpec) -> PartitionSpec:
    """A placement the compiler chose is written without trailing Nones, as JAX writes it
    (P('x',) for rows split over 'x'); a spec the user gave keeps its length."""
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return PartitionSpec(*parts)


def _candidate_specs(tiles, names, sizes):
    """Assignments of mesh axes to dimensions whose products equal the tile counts."""
    n_axes = len(names)

    def rec(dim, start_used):
        if dim == len(tiles):
            yield []
            return
        need = tiles[dim]
        if need == 1:
            for rest in rec(dim + 1, start_used):
                yield [None] + rest
            return
        free = [k for k in range(n_axes) if k not in start_used]
        for r in range(1, len(free) + 1):
            for combo in _ordered_subsets(free, r):
                if math.prod(sizes[k] for k in combo) == need:
                    entry = names[combo[0]] if r == 1 else tuple(names[k] for k in combo)
                    for rest in rec(dim + 1, start_used | set(combo)):
                        yield [entry] + rest
    for parts in rec(0, frozenset()):
        yield PartitionSpec(*parts)


def _ordered_subsets(items, r):
    return itertools.permutations(items, r)


_from_jax_cache: dict = {}


def from_jax(jax_sharding):
    """The yax sharding of a jaxlib buffer's sharding (cached per sharding object's value)."""
    hit = _from_jax_cache.get(jax_sharding)
    if hit is not None:
        return hit
    if isinstance(jax_sharding, jax.sharding.NamedSharding):
        m = jax_sharding.mesh
        types = tuple(getattr(AxisType, t.name) for t in m.axis_types)
        mesh = Mesh(np.asarray(m.devices), tuple(m.axis_names), axis_types=types)
        js = jax_sharding.spec
        spec = PartitionSpec(*getattr(js, "partitions", js),
                             unreduced=getattr(js, "unreduced", frozenset()),
                             reduced=getattr(js, "reduced", frozenset()))
        out = NamedSharding(mesh, spec)
    elif isinstance(jax_sharding, jax.sharding.SingleDeviceSharding):
        out = SingleDeviceSharding(next(iter(jax_sharding.device_set)))
    else:
        devices = list(jax_sharding._device_assignment)
        hlo = jax_sharding._hlo_sharding
        out = OpaqueSharding(hlo, devices)
    if len(_from_jax_cache) > 4096:
        _from_jax_cache.clear()
    _from_jax_cache[jax_sharding] = out
    return out


def sharding_of_buffer(buffer):
    """The yax sharding of a (global) jaxlib buffer."""
    return from_jax(buffer.sharding)


def sharding_of_array(x):
    """The yax sharding of a yax Array (a NamedSharding for arrays on several devices)."""
    return from_jax(x._buf.sharding)


def is_multi_device(buffer) -> bool:
    """Whether a jaxlib buffer spans several devices."""
    return type(buffer.sharding) is not jax.sharding.SingleDeviceSharding and \
        len(buffer.sharding.device_set) > 1


SINGLE_DEVICE_TYPE = jax.sharding.SingleDeviceSharding  # the type of one-device buffer shardings


def device_of_placement(place):
    """The device of a buffer's one-device sharding, or `place` itself if it is a device
    (None stays None)."""
    if place is None:
        return None
    devices = getattr(place, "device_set", None)  # any one-device jax sharding
    if devices is not None:
        return next(iter(devices))
    return place
