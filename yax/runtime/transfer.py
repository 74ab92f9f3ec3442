"""Host <-> device transfer. Keeps 64-bit dtypes (no global jax x64 state) and always copies."""

from __future__ import annotations

import jax
import jax.core as _jax_core
import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as _xc

from yax import errors
from yax._resource_errors import raise_if_out_of_memory
from yax.runtime.mesh import AxisType, Mesh
from yax.runtime.named_sharding import NamedSharding, SingleDeviceSharding
from yax.runtime.partition_spec import PartitionSpec
from yax.runtime.sharding_bridge import OpaqueSharding, sharding_of, to_jax

_SEMANTICS = _xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def device_put(value: np.ndarray, device):
    """Copy a NumPy array to `device`; later changes to `value` never reach the device copy."""
    value = np.asarray(value, order="C")
    aval = _jax_core.ShapedArray(value.shape, value.dtype)
    try:
        return _xc.batched_device_put(aval, sharding_of(device), [value], [device], True, True,
                                      _SEMANTICS, enable_x64=True)
    except Exception as e:  # a dtype XLA cannot hold, an allocation it cannot make: clear errors
        if value.dtype.name.startswith("float6_"):
            raise errors.DTypeError(
                f"{value.dtype} arrays cannot be placed on a device: this jaxlib's XLA runtime "
                f"has no buffers of that type (jax fails the same way); the dtype serves "
                f"promotion and finfo only") from e
        raise_if_out_of_memory(e, [value], "device_put")
        raise


def to_numpy(buffer) -> np.ndarray:
    spec = getattr(buffer.sharding, "spec", None)
    if getattr(spec, "unreduced", None):
        return _unreduced_value(buffer)
    return np.asarray(buffer)


def _unreduced_value(buffer) -> np.ndarray:
    """The value of an array with unreduced mesh axes: the sum of its summands over those axes
    (each block counted once along the axes that replicate it)."""
    sharding = yax_sharding_of(buffer)
    mesh, spec = sharding.mesh, sharding.spec
    free = [k for k, n in enumerate(mesh.axis_names)
            if n not in spec.axis_names() and n not in spec.unreduced]
    index = sharding.devices_indices_map(buffer.shape)
    local = {device_of(b): b for b in shards_of(buffer)}
    out = np.zeros(buffer.shape, buffer.dtype)
    for flat, dev in enumerate(mesh.devices.flat):
        coords = np.unravel_index(flat, mesh.axis_sizes)
        if all(coords[k] == 0 for k in free):
            out[index[dev]] += np.asarray(local[dev])
    return out


def copy_to_host_async(buffer) -> None:
    buffer.copy_to_host_async()


def device_of(buffer):
    return next(iter(buffer.devices()))


def block_until_ready(buffer):
    buffer.block_until_ready()
    return buffer


def is_deleted(buffer) -> bool:
    return buffer.is_deleted()


def device_put_sharded(value: np.ndarray, sharding):
    """Copy a NumPy array onto the devices of a yax sharding, each device getting its block
    (addressable devices only: in a multi-process run each process supplies its own)."""
    value = np.asarray(value)
    index = sharding.addressable_devices_indices_map(value.shape)
    devices = [d for d in _device_order(sharding) if d in index]
    # One transfer per device, then assembled: jaxlib's batched_device_put fails
    # ("bad_function_call") for shardings replicated over some mesh axes.
    blocks = [device_put(value[index[d]], d) for d in devices]
    return assemble(value.shape, value.dtype, sharding, blocks)


def device_put_unreduced(value, sharding, held_as=None):
    """`value` placed as a spec with `unreduced` axes says: each device's block (over the other
    axes) holds a summand, so that the sum over the unreduced axes is `value`. The summands are
    the parts each device held before (`held_as`, the spec of the value's previous placement
    on the same mesh): a dimension split over an unreduced axis keeps, on each device along
    it, the part it held, zeros elsewhere; a value replicated over that axis lives on its first
    device along it."""
    value = np.asarray(value)
    mesh, spec = sharding.mesh, sharding.spec
    index = sharding.devices_indices_map(value.shape)
    pos = {n: k for k, n in enumerate(mesh.axis_names)}
    held = tuple(held_as or ()) + (None,) * (value.ndim - len(held_as or ()))
    blocks = []
    for flat, dev in enumerate(mesh.devices.flat):
        coords = np.unravel_index(flat, mesh.axis_sizes)
        idx = index[dev]
        block = np.array(value[idx], copy=True)
        for axis in spec.unreduced:
            c, size = int(coords[pos[axis]]), mesh.axis_size(axis)
            dims = [k for k, e in enumerate(held) if e == axis]
            if not dims:
                if c:
                    block[...] = 0
                continue
            k = dims[0]
            n = value.shape[k] // size
            lo, hi = c * n, (c + 1) * n
            start = idx[k].start or 0
            keep = np.zeros(block.shape[k], bool)
            keep[max(lo - start, 0):max(hi - start, 0)] = True
            shape = [1] * block.ndim
            shape[k] = block.shape[k]
            block = np.where(keep.reshape(shape), block, np.zeros((), block.dtype))
        blocks.append(device_put(block, dev))
    return assemble(value.shape, value.dtype, sharding, blocks)


def _detect_array_impl():
    """jaxlib's private array constructor (about 6 us for 8 shards), detected once; None: the
    public `jax.make_array_from_single_device_arrays`, which checks more and is slower."""
    ctor = getattr(_jax, "ArrayImpl", None)
    return ctor if hasattr(ctor, "_arrays") else None


_ARRAY_IMPL = _detect_array_impl()


def assemble(shape, dtype, sharding, single_device_buffers: list):
    """One global buffer from per-device buffers (in the sharding's device order)."""
    if _ARRAY_IMPL is not None:
        aval = _jax_core.ShapedArray(tuple(shape), np.dtype(dtype))
        try:
            return _ARRAY_IMPL(aval, to_jax(sharding), list(single_device_buffers), True,
                               _skip_checks=True)
        except TypeError:  # a jaxlib whose constructor has no `_skip_checks`
            return _ARRAY_IMPL(aval, to_jax(sharding), list(single_device_buffers), True)
    return jax.make_array_from_single_device_arrays(tuple(shape), to_jax(sharding),
                                                    list(single_device_buffers))


def relabel(buffer, sharding, shape, dtype):
    """`buffer`'s own per-device blocks under `sharding`, which must place them exactly as the
    buffer's sharding does (`is_equivalent_to`): a new name for the same layout, no copy. Used
    where JAX hands back the sharding the user gave, say P('x', None) for a layout XLA calls
    P('x')."""
    return assemble(shape, dtype, sharding, shards_of(buffer))


def shards_of(buffer) -> list:
    """The per-device buffers of a global buffer, in its sharding's device order."""
    arrays = getattr(buffer, "_arrays", None)  # private, fast; the public route otherwise
    if arrays is not None:
        return list(arrays)
    return [shard.data for shard in buffer.addressable_shards]


def _device_order(sharding) -> list:
    return list(sharding._device_order())


_yax_shardings: dict = {}


def yax_sharding_of(buffer):
    """The yax sharding of a jaxlib buffer (converted once per distinct jax sharding)."""
    js = buffer.sharding
    try:
        hit = _yax_shardings.get(js)
    except TypeError:  # an unhashable sharding: convert every time
        return _from_jax(js)
    if hit is None:
        if len(_yax_shardings) > 4096:
            _yax_shardings.clear()
        hit = _yax_shardings[js] = _from_jax(js)
    return hit


def _entries(jax_spec) -> tuple:
    """A jax PartitionSpec's dimension entries (`*spec` refuses one with unreduced axes)."""
    return tuple(getattr(jax_spec, "partitions", jax_spec))


def _from_jax(js):
    if isinstance(js, jax.sharding.NamedSharding):  # kept even on a one-device mesh, as JAX
        types = tuple(getattr(AxisType, t.name) for t in js.mesh.axis_types)
        mesh = Mesh(np.asarray(js.mesh.devices), tuple(js.mesh.axis_names), axis_types=types)
        return NamedSharding(mesh, PartitionSpec(
            *_entries(js.spec), unreduced=getattr(js.spec, "unreduced", frozenset()),
            reduced=getattr(js.spec, "reduced", frozenset())))
    if isinstance(js, jax.sharding.SingleDeviceSharding) or len(js.device_set) == 1:
        return SingleDeviceSharding(next(iter(js.device_set)))
    if hasattr(js, "_hlo_sharding"):  # GSPMDSharding: what compiled programs may hand back
        return OpaqueSharding(js._hlo_sharding, list(js._devices))
    raise TypeError(f"yax cannot describe the jax sharding {js!r}")
