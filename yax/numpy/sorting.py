"""yax.numpy sorting: sort and argsort (stable, NaNs last, as NumPy), on top of lax.sort."""

from __future__ import annotations

from yax import lax
from yax.core import dtypes
from yax.numpy._promote import to_operand

__all__ = ["sort", "argsort"]


def _flatten_if_none(a, axis):
    if axis is None:
        return lax.reshape(a, (a.size,)), 0
    return a, axis % max(a.ndim, 1)


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """A sorted copy of `a` along `axis` (None: the flattened array). Always stable."""
    if order is not None:
        raise NotImplementedError("sort(order=...) is not supported: yax arrays have no fields")
    a, axis = _flatten_if_none(to_operand(a), axis)
    out = lax.sort(a, dimension=axis)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Indices that sort `a` along `axis` (stable: equal elements keep their order), of
    `dtype` (default: the default int; as in JAX the indices are counted in that dtype)."""
    if order is not None:
        raise NotImplementedError("argsort(order=...) is not supported")
    a, axis = _flatten_if_none(to_operand(a), axis)
    if descending:
        a = lax.rev(a, (axis,))
    idx_dtype = lax_int_dtype() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype),
                                                                           warn=True)
    idx = lax.broadcasted_iota(idx_dtype, a.shape, axis)
    _, perm = lax.sort((a, idx), dimension=axis, num_keys=1)
    if descending:  # reversed input: map back and reverse for a stable descending order
        perm = lax.rev(lax.sub(a.shape[axis] - 1, perm), (axis,))
    return perm


def lax_int_dtype():
    return dtypes.canonicalize(dtypes.default_int())
