"""Building sharded Arrays block by block: `make_array_from_callback` and
`make_array_from_single_device_arrays` (as JAX's).

Shard shapes and devices are checked here in Python: jaxlib assembles global buffers without
checks, and a block of the wrong size segfaults later when a program runs on it.
"""

from __future__ import annotations

import numpy as np

from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.runtime import transfer
from yax.runtime.array import Array
from yax.runtime.named_sharding import Sharding


def make_array_from_callback(shape, sharding, data_callback) -> Array:
    """An Array of global `shape` laid out as `sharding`, each device's block computed by
    `data_callback(index)` (index: a tuple of slices into the global array).

    Args:
      shape: the global shape.
      sharding: a yax sharding (`NamedSharding`, `SingleDeviceSharding`).
      data_callback: returns the block at `index` (NumPy array, scalar or Array). Called once
        per addressable device (replicated blocks are asked for again on each device).
    Returns:
      A committed Array. All blocks must share one dtype and have the sharding's shard shape.

    Example:
      >>> data = np.arange(32.).reshape(8, 4)
      >>> x = yax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x")),
      ...                                  lambda idx: data[idx])
    """
    shape = _check_target(shape, sharding)
    index_of = sharding.addressable_devices_indices_map(shape)
    devices = [d for d in sharding._device_order() if d in index_of]
    blocks = [np.asarray(data_callback(index_of[d])) for d in devices]
    dtype = _common_dtype(blocks, "make_array_from_callback")
    want = tuple(sharding.shard_shape(shape))
    buffers = []
    for dev, block in zip(devices, blocks):
        if block.shape != want:
            raise ValueError(f"make_array_from_callback: the callback returned a block of shape "
                             f"{block.shape} for device {dev} (index {index_of[dev]}), but "
                             f"{sharding!r} gives shards of shape {want} for the global shape "
                             f"{shape}")
        buffers.append(transfer.device_put(block.astype(dtype, copy=False), dev))
    return _assembled(shape, dtype, sharding, buffers)


def make_array_from_single_device_arrays(shape, sharding, arrays) -> Array:
    """An Array of global `shape` laid out as `sharding` from existing per-device Arrays, one
    on each addressable device of `sharding` (any order), each of the shard shape.

    Example:
      >>> shards = [yax.device_put(np.full((2, 4), i), d) for i, d in enumerate(mesh.devices.flat)]
      >>> x = yax.make_array_from_single_device_arrays((16, 4), NamedSharding(mesh, P("x")), shards)
    """
    shape = _check_target(shape, sharding)
    arrays = list(arrays)
    index_of = sharding.addressable_devices_indices_map(shape)
    if len(arrays) != len(index_of):
        raise ValueError(f"make_array_from_single_device_arrays: got {len(arrays)} arrays, but "
                         f"{sharding!r} has {len(index_of)} addressable devices; give one "
                         f"array per device")
    want = tuple(sharding.shard_shape(shape))
    by_device = {}
    for k, a in enumerate(arrays):
        if type(a) is not Array:
            raise TypeError(f"make_array_from_single_device_arrays: argument {k} is a "
                            f"{type(a).__name__}; give yax Arrays placed by yax.device_put")
        devs = a.devices()
        dev = next(iter(devs))
        if len(devs) != 1 or dev not in index_of:
            raise ValueError(f"make_array_from_single_device_arrays: array {k} is on {devs}, "
                             f"which is not one device of {sharding!r}")
        if dev in by_device:
            raise ValueError(f"make_array_from_single_device_arrays: arrays {by_device[dev][0]} "
                             f"and {k} are both on {dev}; give one array per device")
        if tuple(a.shape) != want:
            raise ValueError(f"make_array_from_single_device_arrays: array {k} (on {dev}) has "
                             f"shape {tuple(a.shape)}, but {sharding!r} gives shards of shape "
                             f"{want} for the global shape {shape}")
        by_device[dev] = (k, a)
    dtype = _common_dtype(arrays, "make_array_from_single_device_arrays")
    order = [d for d in sharding._device_order() if d in index_of]
    return _assembled(shape, dtype, sharding, [by_device[d][1].buffer for d in order])


def _check_target(shape, sharding) -> tuple:
    if not isinstance(sharding, Sharding):
        raise TypeError(f"expected a yax sharding (NamedSharding, SingleDeviceSharding), got "
                        f"{sharding!r}")
    shape = tuple(int(s) for s in shape)
    if hasattr(sharding, "check_shape"):
        sharding.check_shape(shape, "the array")
    return shape


def _common_dtype(blocks, what: str):
    kinds = {np.dtype(b.dtype) for b in blocks}
    if len(kinds) > 1:
        raise ValueError(f"{what}: the blocks have different dtypes {sorted(map(str, kinds))}; "
                         f"all must share one")
    if not kinds:
        raise ValueError(f"{what}: no addressable devices in the sharding")
    dt = kinds.pop()
    return np.dtype(dtypes.canonicalize(dt, warn=True))


def _assembled(shape, dtype, sharding, buffers) -> Array:
    out = Array(transfer.assemble(shape, dtype, sharding, buffers), ShapedArray(shape, dtype))
    out._committed = True
    return out
