"""yax.numpy's host-side input and output, through NumPy on concrete values as JAX's are:
saving and loading .npy/.npz files, and arrays from buffers, iterables, text and DLPack.
"""

from __future__ import annotations

import numpy as np

from yax.numpy.creation import asarray

__all__ = ["save", "savez", "load", "frombuffer", "fromiter", "fromstring", "fromfile",
           "from_dlpack"]


def save(file, arr, allow_pickle: bool = True) -> None:
    """Save an array to a .npy file (np.save of its value)."""
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds) -> None:
    """Save several arrays to an uncompressed .npz file (np.savez of their values)."""
    np.savez(file, *(np.asarray(a) for a in args), **{k: np.asarray(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """Load a .npy file as a yax Array (an .npz archive comes back as NumPy's NpzFile)."""
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) and out.dtype != object else out


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """An Array from the bytes of `buffer` (np.frombuffer, then to the device)."""
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromiter(iterable, dtype, count: int = -1, *, like=None):
    """An Array from the values of an iterable (np.fromiter)."""
    return asarray(np.fromiter(iterable, dtype=dtype, count=count))


def fromstring(string, dtype=float, count: int = -1, *, sep: str):
    """An Array from numbers in text separated by `sep` (np.fromstring's text mode)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
    """Not supported (as in JAX): reading a file is a side effect; use np.fromfile and
    jnp.asarray."""
    raise NotImplementedError("jnp.fromfile is not supported (a side effect); read with "
                              "np.fromfile and convert with jnp.asarray")


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array from an object exporting DLPack (through NumPy, so a host copy)."""
    return asarray(np.from_dlpack(x))
