"""The array-API names of yax.numpy.linalg, which act on the last axes: cross, outer, vecdot,
matrix_transpose, diagonal, trace, tensordot and matmul (thin forms of the yax.numpy functions).
"""

from __future__ import annotations

from yax import errors
from yax.numpy import (
    construction,
    contractions,
    creation,
    manipulation,
    products,
    reductions,
    ufuncs,
)

__all__ = ["cross", "outer", "vecdot", "matrix_transpose", "diagonal", "trace", "tensordot",
           "matmul"]


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along `axis` (the array-API form of jnp.cross)."""
    x1, x2 = creation.asarray(x1), creation.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise errors.ShapeError(f"linalg.cross needs vectors of size 3 along axis {axis}, got "
                                f"shapes {x1.shape} and {x2.shape}")
    return products.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
    """The outer product of two 1-D arrays."""
    x1, x2 = creation.asarray(x1), creation.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise errors.ShapeError(f"linalg.outer needs 1-D inputs, got shapes {x1.shape} and "
                                f"{x2.shape}")
    return contractions.outer(x1, x2)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along `axis`, broadcasting the other dims."""
    del precision, preferred_element_type
    x1, x2 = creation.asarray(x1), creation.asarray(x2)
    return reductions.sum(ufuncs.conj(x1) * x2, axis=axis)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    x = creation.asarray(x)
    if x.ndim < 2:
        raise errors.ShapeError(f"matrix_transpose needs rank >= 2, got shape {x.shape}")
    return manipulation.swapaxes(x, -1, -2)


def diagonal(x, /, *, offset: int = 0):
    """The `offset` diagonal of each matrix in the last two axes."""
    return construction.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of the `offset` diagonal of each matrix in the last two axes."""
    return construction.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """jnp.tensordot with the array-API signature."""
    return contractions.tensordot(x1, x2, axes=axes, precision=precision,
                            preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """jnp.matmul with the array-API signature."""
    return contractions.matmul(x1, x2, precision=precision,
                         preferred_element_type=preferred_element_type)
