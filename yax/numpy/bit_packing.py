"""packbits/unpackbits: truth values packed eight to a uint8 byte and back, as NumPy's, written
as traceable yax.numpy compositions.
"""

from __future__ import annotations

import numpy as np

from yax.numpy import padding, reductions
from yax.numpy.creation import asarray
from yax.numpy.manipulation import moveaxis, ravel, reshape

__all__ = ["packbits", "unpackbits"]


def _bit_weights(bitorder: str):
    if bitorder not in ("big", "little"):
        raise ValueError(f"bitorder must be 'big' or 'little', got {bitorder!r}")
    weights = 2 ** np.arange(8)
    return weights[::-1] if bitorder == "big" else weights


def packbits(a, axis=None, bitorder: str = "big"):
    """Pack the truth values of `a` into uint8 bytes along `axis` (flattened if None), eight to
    a byte, padding with zeros (as np.packbits)."""
    bits = (asarray(a) != 0).astype(np.uint8)
    if axis is None:
        bits, axis = ravel(bits), 0
    bits = moveaxis(bits, axis, -1)
    pad = (-bits.shape[-1]) % 8
    if pad:
        bits = padding.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    grouped = reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    weights = asarray(_bit_weights(bitorder), dtype=np.uint8)
    packed = reductions.sum(grouped * weights, axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder: str = "big"):
    """Unpack uint8 bytes into their bits (0/1 as uint8) along `axis` (flattened if None);
    `count` keeps that many bits (negative: drops that many from the end)."""
    a = asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"unpackbits needs uint8 input, got {a.dtype}")
    if axis is None:
        a, axis = ravel(a), 0
    a = moveaxis(a, axis, -1)
    shifts = asarray(np.log2(_bit_weights(bitorder)).astype(np.uint8))
    bits = (a[..., None] >> shifts) & np.uint8(1)
    bits = reshape(bits, a.shape[:-1] + (a.shape[-1] * 8,))
    if count is not None:
        bits = bits[..., :count]
    return moveaxis(bits, -1, axis)
