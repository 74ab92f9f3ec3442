"""jax.numpy names around the edges of the array API: saving and loading (.npy/.npz through
NumPy), construction from buffers and iterables, bit packing, print options, einsum_path,
array_repr/array_str and a few NumPy type aliases.

Host-side helpers (save, load, einsum_path, printing) go through NumPy on concrete values, as
JAX's do; packbits/unpackbits are traceable yax.numpy compositions.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp

__all__ = ["save", "savez", "load", "frombuffer", "fromiter", "fromstring", "fromfile",
           "from_dlpack", "packbits", "unpackbits", "printoptions", "set_printoptions",
           "get_printoptions", "einsum_path", "array_repr", "array_str", "bool", "character",
           "flexible", "object_", "ComplexWarning"]

# NumPy's print options drive how yax Arrays print (they print through NumPy), as in JAX
printoptions = np.printoptions
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions

bool = jnp.bool_  # noqa: A001  (jnp.bool is the bool scalar type, as in JAX)
character = np.character
flexible = np.flexible
object_ = np.object_
ComplexWarning = np.exceptions.ComplexWarning


def save(file, arr, allow_pickle: bool = True) -> None:
    """Save an array to a .npy file (np.save of its value)."""
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds) -> None:
    """Save several arrays to an uncompressed .npz file (np.savez of their values)."""
    np.savez(file, *(np.asarray(a) for a in args), **{k: np.asarray(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """Load a .npy file as a yax Array (an .npz archive comes back as NumPy's NpzFile)."""
    out = np.load(file, *args, **kwargs)
    return jnp.asarray(out) if isinstance(out, np.ndarray) and out.dtype != object else out


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """An Array from the bytes of `buffer` (np.frombuffer, then to the device)."""
    return jnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromiter(iterable, dtype, count: int = -1, *, like=None):
    """An Array from the values of an iterable (np.fromiter)."""
    return jnp.asarray(np.fromiter(iterable, dtype=dtype, count=count))


def fromstring(string, dtype=float, count: int = -1, *, sep: str):
    """An Array from numbers in text separated by `sep` (np.fromstring's text mode)."""
    return jnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
    """Not supported (as in JAX): reading a file is a side effect; use np.fromfile and
    jnp.asarray."""
    raise NotImplementedError("jnp.fromfile is not supported (a side effect); read with "
                              "np.fromfile and convert with jnp.asarray")


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array from an object exporting DLPack (through NumPy, so a host copy)."""
    return jnp.asarray(np.from_dlpack(x))


def _bit_weights(bitorder: str):
    if bitorder not in ("big", "little"):
        raise ValueError(f"bitorder must be 'big' or 'little', got {bitorder!r}")
    weights = 2 ** np.arange(8)
    return weights[::-1] if bitorder == "big" else weights


def packbits(a, axis=None, bitorder: str = "big"):
    """Pack the truth values of `a` into uint8 bytes along `axis` (flattened if None), eight to
    a byte, padding with zeros (as np.packbits)."""
    bits = (jnp.asarray(a) != 0).astype(np.uint8)
    if axis is None:
        bits, axis = jnp.ravel(bits), 0
    bits = jnp.moveaxis(bits, axis, -1)
    pad = (-bits.shape[-1]) % 8
    if pad:
        bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    grouped = jnp.reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    weights = jnp.asarray(_bit_weights(bitorder), dtype=np.uint8)
    packed = jnp.sum(grouped * weights, axis=-1, dtype=np.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder: str = "big"):
    """Unpack uint8 bytes into their bits (0/1 as uint8) along `axis` (flattened if None);
    `count` keeps that many bits (negative: drops that many from the end)."""
    a = jnp.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"unpackbits needs uint8 input, got {a.dtype}")
    if axis is None:
        a, axis = jnp.ravel(a), 0
    a = jnp.moveaxis(a, axis, -1)
    shifts = jnp.asarray(np.log2(_bit_weights(bitorder)).astype(np.uint8))
    bits = (a[..., None] >> shifts) & np.uint8(1)
    bits = jnp.reshape(bits, a.shape[:-1] + (a.shape[-1] * 8,))
    if count is not None:
        bits = bits[..., :count]
    return jnp.moveaxis(bits, -1, axis)


def einsum_path(subscripts, *operands, optimize="greedy"):
    """NumPy's contraction order for `einsum` (computed from the operands' shapes only):
    returns (path, description) as np.einsum_path."""
    dummies = [np.zeros(np.shape(x), dtype=np.float32) for x in operands]
    return np.einsum_path(subscripts, *dummies, optimize=optimize)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of the array's value (np.array_repr)."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of the array's value (np.array_str)."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)
