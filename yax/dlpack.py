"""`jax.dlpack`: arrays from objects that export DLPack (`__dlpack__`)."""

from __future__ import annotations

import numpy as np

from yax.numpy.host_io import from_dlpack

__all__ = ["from_dlpack", "is_supported_dtype"]

# the dtypes DLPack can describe and yax computes with
_SUPPORTED = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128))


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of `dtype` can be exchanged through DLPack."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return False
    return dtype in _SUPPORTED or dtype.name == "bfloat16"
