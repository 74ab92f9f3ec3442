"""yax.numpy products beyond matmul/dot: kron, cross, vecdot, matvec and vecmat.
"""

from __future__ import annotations

from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr
from yax.numpy._promote import promote_dtypes
from yax.numpy.contractions import matmul

__all__ = ["kron", "cross", "vecdot", "matvec", "vecmat"]


def kron(a, b):
    """The Kronecker product: blocks a[i, j] * b."""
    a, b = promote_dtypes(arr("kron", a), arr("kron", b))
    a, b = arr("kron", a), arr("kron", b)
    nd = max(a.ndim, b.ndim)
    a = manipulation.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = manipulation.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # a on even axes, b on odd axes of a (2 * nd)-rank product, then merge the pairs
    a2 = manipulation.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b2 = manipulation.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    return manipulation.reshape(a2 * b2, tuple(p * q for p, q in zip(a.shape, b.shape,
                                                                    strict=True)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """The cross product of 2- or 3-vectors along the given axes (2-vectors give the z part)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(arr("cross", a), arr("cross", b))
    a = manipulation.moveaxis(arr("cross", a), axisa, -1)
    b = manipulation.moveaxis(arr("cross", b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"jnp.cross: vectors must have 2 or 3 components, got "
                         f"{a.shape[-1]} and {b.shape[-1]}")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    zero = creation.zeros((), a0.dtype)
    a2 = a[..., 2] if a.shape[-1] == 3 else zero
    b2 = b[..., 2] if b.shape[-1] == 3 else zero
    c = manipulation.stack(manipulation.broadcast_arrays(
        a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)
    return manipulation.moveaxis(c, -1, axisc)


def vecdot(x1, x2, /, *, axis: int = -1):
    """sum(conj(x1) * x2) along `axis` (broadcasting the other axes)."""
    a, b = promote_dtypes(arr("vecdot", x1), arr("vecdot", x2))
    a, b = arr("vecdot", a), arr("vecdot", b)
    return reductions.sum(ufuncs.conjugate(a) * b, axis=axis)


def matvec(x1, x2, /):
    """Batched matrix-vector products: (..., m, n) x (..., n) -> (..., m)."""
    return matmul(x1, manipulation.expand_dims(arr("matvec", x2), -1))[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix products conj(x1) @ x2: (..., n) x (..., n, m) -> (..., m)."""
    v = ufuncs.conjugate(arr("vecmat", x1))
    return matmul(manipulation.expand_dims(v, -2), x2)[..., 0, :]
