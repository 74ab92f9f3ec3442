"""Argument handling shared by yax.numpy.linalg and yax.scipy.linalg."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.lax_like._util import aval_of
from yax.lax_like.linalg import broadcast_batch_dims
from yax.numpy._promote import check_arraylike, promote_dtypes_inexact, to_operand
from yax.primitives.linalg import _common as C

__all__ = ["as_matrix", "as_matrix_pair", "broadcast_batch_dims", "C"]


def _check_dtype(name: str, x) -> None:
    aval = aval_of(x)
    if not dtypes.is_inexact(aval.dtype):
        raise errors.DTypeError(
            f"{name} needs floating or complex input, got {aval.str_short()}; convert it "
            f"first, e.g. `x.astype(jnp.float32)`.")


def as_matrix(name: str, x, *, square: bool = False):
    """One (batch of) matrices: an operand with the dtype and shape checked."""
    check_arraylike(name, x)
    x = to_operand(x)
    _check_dtype(name, x)
    C.check_matrix(name, aval_of(x), square=square)
    return x


def as_matrix_pair(name: str, a, b):
    """a (..., n, n) and b with one common inexact dtype (no shape checks on b here)."""
    check_arraylike(name, a, b)
    a, b = to_operand(a), to_operand(b)
    for x in (a, b):
        _check_dtype(name, x)
    a, b = promote_dtypes_inexact(a, b)
    C.check_matrix(name, aval_of(a), square=True)
    return a, b


def eps(dtype) -> float:
    return float(np.finfo(C.real_dtype(dtype)).eps)
