"""lax.linalg's Householder helpers and the rank-1 Cholesky update, with yax.lax operations.

`householder_product(a, taus)` builds Q from the reflectors a QR factorization leaves below
the diagonal of `a` (LAPACK's orgqr: H_i = I - tau_i v_i v_i^H, v_i = e_i + a[i+1:, i]);
`ormqr` multiplies by that Q (or Q^H) without the caller forming it; `cholesky_update(r, w)`
is the upper factor of R^H R + w w^H by Givens rotations (LINPACK's dchud). The loops run over
the (static) matrix size in Python, so every transformation applies to the result.
"""

from __future__ import annotations

import numpy as np

from yax.lax import elementwise as ew
from yax.lax.construction import full_like
from yax.lax.dot import dot_general
from yax.lax.shape import broadcast_in_dim, broadcasted_iota, transpose
from yax.lax.slicing import dynamic_update_index_in_dim, index_in_dim, slice_in_dim
from yax.runtime.values import as_operand

__all__ = ["cholesky_update", "householder_product", "ormqr"]


def _mT(x):
    return transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _conj(x):
    return ew.conj(x) if np.issubdtype(np.dtype(x.dtype), np.complexfloating) else x


def _matmul(a, b):
    batch = tuple(range(a.ndim - 2))
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)))


def _full_q(a, taus):
    """The m x m product H_0 H_1 ... H_{k-1} of the reflectors of `a` [..., m, n]."""
    *batch, m, _ = a.shape
    k = taus.shape[-1]
    rows = broadcasted_iota(np.int32, (*batch, m), len(batch))
    eye = ew.convert_element_type(ew.eq(broadcasted_iota(np.int32, (*batch, m, m), len(batch)),
                                        broadcasted_iota(np.int32, (*batch, m, m),
                                                         len(batch) + 1)), a.dtype)
    q = eye
    for i in reversed(range(k)):  # Q = H_0 (H_1 (... H_{k-1})): apply from the last one
        col = index_in_dim(a, i, axis=a.ndim - 1, keepdims=False)          # [..., m]
        v = ew.select(ew.gt(rows, np.int32(i)), col,
                      ew.select(ew.eq(rows, np.int32(i)), full_like(col, 1), full_like(col, 0)))
        tau = index_in_dim(taus, i, axis=taus.ndim - 1, keepdims=True)     # [..., 1]
        vq = _matmul(broadcast_in_dim(_conj(v), (*batch, 1, m), (*range(len(batch)),
                                                                  len(batch) + 1)), q)
        nb = len(batch)
        outer = ew.mul(broadcast_in_dim(v, (*batch, m, m), (*range(nb), nb)),
                       broadcast_in_dim(vq, (*batch, m, m), tuple(range(nb + 2))))
        q = ew.sub(q, ew.mul(broadcast_in_dim(tau, (*batch, m, m),
                                              (*range(len(batch)), len(batch) + 1)), outer))
    return q


def householder_product(a, taus):
    """The first n columns of Q (m x n) from Householder reflectors `a` [..., m, n] and their
    scalar factors `taus` [..., k], as LAPACK's orgqr (jax.lax.linalg.householder_product)."""
    a, taus = as_operand(a), as_operand(taus)
    if a.shape[-2] < a.shape[-1]:
        raise ValueError(f"householder_product needs m >= n, got {a.shape}")
    q = _full_q(a, taus)
    return slice_in_dim(q, 0, a.shape[-1], axis=q.ndim - 1)


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q @ c, Q^H @ c (transpose), c @ Q (left=False) or c @ Q^H, Q the m x m orthogonal
    matrix of the reflectors `a`, `taus` (as LAPACK's ormqr / jax.lax.linalg.ormqr)."""
    a, taus, c = as_operand(a), as_operand(taus), as_operand(c)
    q = _full_q(a, taus)
    if transpose:
        q = _conj(_mT(q))
    return _matmul(q, c) if left else _matmul(c, q)


def cholesky_update(r_matrix, w_vector):
    """The upper-triangular R' with R'^H R' = R^H R + w w^H, for upper-triangular `r_matrix`
    [n, n] and `w_vector` [n] (real), by one Givens rotation per row."""
    r, w = as_operand(r_matrix), as_operand(w_vector)
    n = r.shape[-1]
    for k in range(n):
        row = index_in_dim(r, k, axis=0, keepdims=False)                   # R[k, :]
        rkk = index_in_dim(row, k, axis=0, keepdims=False)
        wk = index_in_dim(w, k, axis=0, keepdims=False)
        norm = ew.sqrt(ew.add(ew.mul(rkk, rkk), ew.mul(wk, wk)))
        cos, sin = ew.div(norm, rkk), ew.div(wk, rkk)
        after = ew.gt(broadcasted_iota(np.int32, (n,), 0), np.int32(k))     # columns > k
        new_row = ew.div(ew.add(row, ew.mul(sin, w)), cos)
        new_row = ew.select(after, new_row,
                            ew.select(ew.eq(broadcasted_iota(np.int32, (n,), 0), np.int32(k)),
                                      broadcast_in_dim(norm, (n,), ()), row))
        w = ew.select(after, ew.sub(ew.mul(cos, w), ew.mul(sin, new_row)), w)
        r = dynamic_update_index_in_dim(r, new_row, k, 0)
    return r
