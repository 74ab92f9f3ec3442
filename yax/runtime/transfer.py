"""Host <-> device transfer. Keeps 64-bit dtypes (no global jax x64 state) and always copies."""

from __future__ import annotations

import jax
import jax.core as _jax_core
import numpy as np
from jaxlib import xla_client as _xc

from yax._resource_errors import raise_if_out_of_memory

_SEMANTICS = _xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
_shardings: dict = {}


def sharding_of(device):
    """The single-device sharding of `device` (one object per device)."""
    s = _shardings.get(device)
    if s is None:
        s = _shardings[device] = jax.sharding.SingleDeviceSharding(device)
    return s


def device_put(value: np.ndarray, device):
    """Copy a NumPy array to `device`; later changes to `value` never reach the device copy."""
    value = np.asarray(value, order="C")
    aval = _jax_core.ShapedArray(value.shape, value.dtype)
    try:
        return _xc.batched_device_put(aval, sharding_of(device), [value], [device], True, True,
                                      _SEMANTICS, enable_x64=True)
    except Exception as e:  # an allocation the device cannot satisfy: a clear error
        raise_if_out_of_memory(e, [value], "device_put")
        raise


def to_numpy(buffer) -> np.ndarray:
    return np.asarray(buffer)


def device_of(buffer):
    return next(iter(buffer.devices()))


def block_until_ready(buffer):
    buffer.block_until_ready()
    return buffer


def is_deleted(buffer) -> bool:
    return buffer.is_deleted()
