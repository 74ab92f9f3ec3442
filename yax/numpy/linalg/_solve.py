"""yax.numpy.linalg solvers and matrix functions built on LU and SVD: solve, inv, det, slogdet,
lstsq, pinv, matrix_power, matrix_rank, cond.

Derivatives come from composing the differentiable primitives (lu, triangular_solve, svd), so
every function here works under grad, jvp, vmap and jit without rules of its own.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from yax import errors, lax
from yax.lax import linalg as lax_linalg
from yax.numpy._promote import promote_dtypes_inexact, to_operand
from yax.numpy.linalg._decomp import svd
from yax.numpy.linalg._norm import norm
from yax.numpy.linalg._util import (
    C,
    as_matrix,
    as_matrix_pair,
    broadcast_batch_dims,
    compiled_when_eager,
    eps,
)
from yax.primitives.linalg.lu import permutation_matrix


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def lu_solve_factored(lu, perm, b, trans: int = 0):
    """Solve op(a) x = b from a's LU factors (a[perm] = L U); b (..., n, k), same batch dims.

    trans: 0 for a, 1 for a^T, 2 for a^H.
    """
    p = permutation_matrix(perm, lu.dtype)
    if trans == 0:
        y = C.matmul(p, b)
        y = lax_linalg.triangular_solve(lu, y, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)
    conj = trans == 2
    y = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conj)
    y = lax_linalg.triangular_solve(lu, y, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=conj, unit_diagonal=True)
    return C.matmul(C.mT(p), y)


def _as_columns(name: str, a, b):
    """NumPy 2 rules: b is a vector (n,) only when 1-D, else (..., n, k). Returns the batch
    broadcast a, b as a matrix, and a function restoring b's kind on the result."""
    n = a.shape[-1]
    vector = b.ndim == 1
    shown = f"a {a.aval.str_short()} and b {b.aval.str_short()}"
    if vector:
        b = lax.reshape(b, (b.shape[0], 1))
    if b.ndim < 2 or b.shape[-2] != n:
        raise errors.ShapeError(
            f"{name}: {shown} do not fit: b must be "
            f"(n,) or (..., n, k) with n = {n} (NumPy 2 rules; use b[..., None] for a batch of "
            f"vectors).")
    a, b = broadcast_batch_dims(name, a, b)

    def restore(x):
        return lax.reshape(x, tuple(x.shape[:-1])) if vector else x
    return a, b, restore


@compiled_when_eager
def solve(a, b):
    """Solve a x = b for x (LU with partial pivoting).

    Args:
      a: (..., n, n).
      b: (n,) or (..., n, k) (batch dims broadcast against a's).
    Returns:
      x, shaped like b after broadcasting.

    Example: `x = jnp.linalg.solve(a, b)`.
    """
    a, b = as_matrix_pair("solve", a, b)
    a, b, restore = _as_columns("solve", a, b)
    lu, _, perm = lax_linalg.lu(a)
    return restore(lu_solve_factored(lu, perm, b))


@compiled_when_eager
def inv(a):
    """The inverse of square matrices (..., n, n); inf/NaN for singular ones."""
    a = as_matrix("inv", a, square=True)
    eye = C.eye_like(a)
    lu, _, perm = lax_linalg.lu(a)
    return lu_solve_factored(lu, perm, eye)


def _lu_parts(name: str, a):
    """diag(U) (..., n) and the permutation's parity (..., ) as +-1 in a's dtype."""
    a = as_matrix(name, a, square=True)
    lu, pivots, _ = lax_linalg.lu(a)
    idx = lax.broadcasted_iota(np.int32, tuple(pivots.shape), pivots.ndim - 1)
    swaps = lax.reduce_sum(lax.convert_element_type(lax.ne(pivots, idx), np.int32),
                           (pivots.ndim - 1,))
    odd = lax.eq(lax.rem(swaps, 2), 1)
    ones = lax.broadcast_in_dim(np.ones((), a.dtype), tuple(swaps.shape), ())
    parity = lax.select(odd, lax.neg(ones), ones)
    return C.diag_part(lu), parity


@compiled_when_eager
def det(a):
    """Determinants of square matrices (..., n, n) -> (...,), from the LU factorisation."""
    diag, parity = _lu_parts("det", a)
    return lax.mul(parity, lax.reduce_prod(diag, (diag.ndim - 1,)))


@compiled_when_eager
def slogdet(a):
    """sign and log|det| of square matrices: SlogdetResult(sign, logabsdet), each (...,).

    sign is +-1 (a unit complex number for complex input; 0 for singular matrices) and
    logabsdet is real (-inf for singular matrices)."""
    diag, parity = _lu_parts("slogdet", a)
    mag = lax.abs(diag)
    logabs = lax.reduce_sum(lax.log(mag), (diag.ndim - 1,))
    zero = lax.broadcast_in_dim(np.zeros((), mag.dtype), tuple(mag.shape), ())
    unit = lax.div(diag, lax.convert_element_type(lax.select(lax.eq(mag, zero),
                                                             lax.add(zero, 1), mag),
                                                  diag.dtype))
    unit = lax.select(lax.eq(mag, zero), lax.convert_element_type(zero, diag.dtype), unit)
    sign = lax.mul(parity, lax.reduce_prod(unit, (diag.ndim - 1,)))
    return SlogdetResult(sign, logabs)


def _svd_cutoff(s, rtol, dtype, m: int, n: int):
    """Singular values below rtol * s_max count as zero; returns the boolean keep mask."""
    if rtol is None:
        rtol = max(m, n) * eps(dtype)
    smax = lax.reduce_max(s, (s.ndim - 1,))
    shape = tuple(s.shape)
    cut = lax.mul(lax.broadcast_in_dim(smax, shape, tuple(range(s.ndim - 1))), rtol)
    return lax.gt(s, cut)


def _pinv_from_svd(u, s, vh, keep):
    ones = lax.broadcast_in_dim(np.ones((), s.dtype), tuple(s.shape), ())
    s_inv = lax.select(keep, lax.div(ones, lax.select(keep, s, ones)), lax.sub(ones, ones))
    return C.matmul(C.H(vh), C.scale_rows(C.H(u), s_inv))


@compiled_when_eager
def pinv(a, rtol=None, hermitian: bool = False):
    """Moore-Penrose pseudo-inverse (..., m, n) -> (..., n, m), via the SVD.

    Singular values below rtol * max(s) are dropped; rtol defaults to 10 * max(m, n) * eps.
    Derivatives are those of the SVD (distinct singular values)."""
    del hermitian
    a = as_matrix("pinv", a)
    m, n = a.shape[-2:]
    u, s, vh = svd(a, full_matrices=False)
    if rtol is None:
        rtol = 10 * max(m, n) * eps(a.dtype)
    return _pinv_from_svd(u, s, vh, _svd_cutoff(s, rtol, a.dtype, m, n))


@compiled_when_eager
def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of a x = b via the SVD.

    Args:
      a: (m, n). b: (m,) or (m, k).
      rcond: relative cutoff for small singular values (default eps * max(m, n)).
    Returns:
      (x, residuals, rank, s). residuals are |b - a x|^2 per column, always computed (as
      jax does, since the rank is not known at trace time).
    """
    del numpy_resid
    a = as_matrix("lstsq", a)
    a, b = promote_dtypes_inexact(a, to_operand(b))
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise errors.ShapeError(f"lstsq: needs a (m, n) and b (m,) or (m, k) with equal m, got "
                                f"a {a.aval.str_short()} and b {b.aval.str_short()}")
    m, n = a.shape
    vector = b.ndim == 1
    bm = lax.reshape(b, (m, 1)) if vector else b
    u, s, vh = svd(a, full_matrices=False)
    keep = _svd_cutoff(s, rcond, a.dtype, m, n)
    x = C.matmul(_pinv_from_svd(u, s, vh, keep), bm)
    r = lax.sub(bm, C.matmul(a, x))
    resid = lax.reduce_sum(lax.real(lax.mul(r, lax.conj(r))) if np.dtype(a.dtype).kind == "c"
                           else lax.mul(r, r), (0,))
    rank = lax.reduce_sum(lax.convert_element_type(keep, np.int32), (0,))
    if vector:
        x, resid = lax.reshape(x, (n,)), lax.reshape(resid, ())
    return x, resid, rank, s


@compiled_when_eager
def matrix_power(a, n: int):
    """a @ a @ ... (n times) for square (..., m, m) matrices; n may be 0 (identity) or negative
    (powers of the inverse). Binary exponentiation: O(log n) products."""
    a = as_matrix("matrix_power", a, square=True)
    if not isinstance(n, (int, np.integer)):
        raise errors.YaxError(f"matrix_power: the exponent must be a Python int, got {n!r}")
    n = int(n)
    if n == 0:
        return C.eye_like(a)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else C.matmul(result, a)
        n >>= 1
        if n:
            a = C.matmul(a, a)
    return result


@compiled_when_eager
def matrix_rank(M, rtol=None, *, tol=None):
    """Number of singular values above rtol * max(s) (default rtol: max(m, n) * eps)."""
    M = as_matrix("matrix_rank", M)
    s = svd(M, compute_uv=False)
    if tol is not None:
        keep = lax.gt(s, lax.broadcast_in_dim(np.asarray(tol, s.dtype), tuple(s.shape), ()))
    else:
        keep = _svd_cutoff(s, rtol, M.dtype, *M.shape[-2:])
    return lax.reduce_sum(lax.convert_element_type(keep, np.int32), (s.ndim - 1,))


@compiled_when_eager
def cond(x, p=None):
    """Condition number: s_max / s_min for p in (None, 2), s_min / s_max for -2, otherwise
    norm(x, p) * norm(inv(x), p)."""

    x = as_matrix("cond", x)
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        k = s.shape[-1]
        first = lax.index_in_dim(s, 0, axis=s.ndim - 1, keepdims=False)
        last = lax.index_in_dim(s, k - 1, axis=s.ndim - 1, keepdims=False)
        return lax.div(last, first) if p == -2 else lax.div(first, last)
    return lax.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
