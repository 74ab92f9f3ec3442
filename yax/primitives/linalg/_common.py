"""Shared pieces of the linalg primitives: input checks and small matrix helpers for rules.

All linalg primitives act on the two minor dims of their operands; leading dims are batch dims.
The helpers below are written with yax.lax (through the lazy `lax` proxy), so rules built from
them are themselves differentiable and batchable.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.interpreters.batching import move_batch_axis
from yax.primitives._lax import lax

LAPACK_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
                 np.dtype(np.complex128))


def check_matrix(name: str, aval, *, square: bool = False) -> None:
    """A (batch of) float32/64 or complex64/128 matrices, square if asked."""
    if aval.dtype not in LAPACK_DTYPES:
        hint = (" Convert it first, e.g. `x.astype(jnp.float32)`."
                if not dtypes.is_complex(aval.dtype) else "")
        raise errors.DTypeError(
            f"{name} needs a float32, float64, complex64 or complex128 matrix, got "
            f"{aval.str_short()}.{hint}")
    if aval.ndim < 2:
        raise errors.ShapeError(
            f"{name} needs an array of rank >= 2 (a matrix, or a batch of matrices in the "
            f"leading dims), got {aval.str_short()}. Reshape a vector with x[None, :] or "
            f"x[:, None].")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise errors.ShapeError(
            f"{name} needs square matrices in the last two dims, got {aval.str_short()} "
            f"({aval.shape[-2]}x{aval.shape[-1]}).")


def real_dtype(dtype) -> np.dtype:
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(np.dtype(dtype), np.dtype(dtype))


# --- matrix helpers for rules (operate on the last two dims) ----------------------------------

def mT(x):
    """Swap the last two dims."""
    n = x.ndim
    return lax.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def conj(x):
    return lax.conj(x) if dtypes.is_complex(x.dtype) else x


def H(x):
    """Conjugate transpose of the last two dims."""
    return conj(mT(x))


def matmul(a, b):
    """Batched a @ b; both operands have the same leading batch dims."""
    nb = a.ndim - 2
    assert b.ndim == a.ndim, (a.shape, b.shape)
    batch = tuple(range(nb))
    return lax.dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)), precision="HIGHEST")


def _mask(shape, k: int, lower: bool):
    """Boolean mask of `shape` selecting j <= i + k (lower) or j >= i + k (upper)."""
    m, n = shape[-2:]
    rows = lax.broadcasted_iota(np.int32, (m, n), 0)
    cols = lax.broadcasted_iota(np.int32, (m, n), 1)
    rows = lax.add(rows, k) if k else rows
    mask = lax.le(cols, rows) if lower else lax.ge(cols, rows)
    return lax.broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def zeros_like(x):
    return lax.broadcast_in_dim(np.zeros((), x.dtype), tuple(x.shape), ())


def tril(x, k: int = 0):
    return lax.select(_mask(x.shape, k, True), x, zeros_like(x))


def triu(x, k: int = 0):
    return lax.select(_mask(x.shape, k, False), x, zeros_like(x))


def eye_like(x):
    """Identity matrices shaped like x (batch dims included), in x's dtype."""
    m, n = x.shape[-2:]
    rows = lax.broadcasted_iota(np.int32, (m, n), 0)
    cols = lax.broadcasted_iota(np.int32, (m, n), 1)
    eye = lax.convert_element_type(lax.eq(rows, cols), x.dtype)
    return lax.broadcast_in_dim(eye, tuple(x.shape), (x.ndim - 2, x.ndim - 1))


def diag_part(x):
    """The main diagonal of each matrix: (..., m, n) -> (..., min(m, n))."""
    k = min(x.shape[-2:])
    x = lax.slice(x, (0,) * x.ndim, tuple(x.shape[:-2]) + (k, k))
    return lax.reduce_sum(lax.mul(x, eye_like(x)), (x.ndim - 1,))


def diag_embed(d):
    """(..., k) -> (..., k, k) diagonal matrices."""
    k = d.shape[-1]
    shape = tuple(d.shape) + (k,)
    full = lax.broadcast_in_dim(d, shape, tuple(range(d.ndim)))
    return lax.mul(full, eye_like(full))


def hermitian_part_of_triangle(x, lower: bool):
    """The Hermitian matrix a routine reading only one triangle of `x` actually sees."""
    if lower:
        return lax.add(tril(x), H(tril(x, -1)))
    return lax.add(triu(x), H(triu(x, 1)))


def scale_columns(x, s):
    """x * s[..., None, :] (s real or same dtype)."""
    s = lax.convert_element_type(s, x.dtype)
    return lax.mul(x, lax.broadcast_in_dim(s, tuple(x.shape), tuple(range(x.ndim - 2))
                                           + (x.ndim - 1,)))


def scale_rows(x, s):
    """x * s[..., :, None]."""
    s = lax.convert_element_type(s, x.dtype)
    return lax.mul(x, lax.broadcast_in_dim(s, tuple(x.shape), tuple(range(x.ndim - 1))))


def batch_leading(prim):
    """The vmap rule of a one-operand linalg primitive: the batch axis becomes a leading batch
    dim, which the routine handles itself."""

    def batch(args, dims, **params):
        x, = args
        d, = dims
        out = prim.bind(move_batch_axis(x, d, 0, x.shape[d]), **params)
        outs = list(out) if prim.multiple_results else [out]
        return outs, [0] * len(outs)
    prim.define(batch=batch)
