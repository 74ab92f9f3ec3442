"""yax.lax.linalg's decompositions of general (and Hermitian to tridiagonal) square matrices:
`eig`, `schur`, `hessenberg`, `tridiagonal`, with jax.lax.linalg's signatures and outputs.

All four are LAPACK routines on CPU (geev, gees, gehrd, sytrd/hetrd); their primitives live in
yax/primitives/linalg/. Only eig has a derivative (eigenvalues; eigenvectors on request).
"""

from __future__ import annotations

from yax.core.trace import bind
from yax.primitives.linalg import _common as C
from yax.primitives.linalg.eig import eig_p
from yax.primitives.linalg.enums import check_eig_implementation
from yax.primitives.linalg.schur import hessenberg_p, schur_p
from yax.primitives.linalg.tridiagonal import tridiagonal_p
from yax.runtime.values import as_operand

__all__ = ["eig", "schur", "hessenberg", "tridiagonal"]


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None) -> list:
    """Eigendecomposition of general square matrices (LAPACK geev, CPU).

    Args:
      x: (..., n, n) float or complex.
      compute_left_eigenvectors / compute_right_eigenvectors: which eigenvectors to return.
      enable_eigvec_derivs: allow derivatives of the eigenvectors, taken under geev's
        normalisation (unit 2-norm, largest-magnitude component real); valid only for distinct
        eigenvalues and no tie for the largest component, which cannot be checked.
      implementation: None or EigImplementation.LAPACK. use_magma: ignored (a GPU option).
    Returns:
      [w, vl, vr] (vl, vr only when asked): complex eigenvalues (..., n), unsorted, and
      eigenvectors as columns with x vr = vr diag(w), vl^H x = diag(w) vl^H. NaN for a batch
      member where LAPACK does not converge.

    Example: `w, vr = lax.linalg.eig(a, compute_left_eigenvectors=False)`.
    """
    del use_magma
    check_eig_implementation(implementation)
    x = as_operand(x)
    C.check_matrix("eig", x.aval, square=True)
    return list(bind(eig_p, x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                     compute_right_eigenvectors=bool(compute_right_eigenvectors),
                     enable_eigvec_derivs=bool(enable_eigvec_derivs),
                     implementation=implementation))


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """Schur decomposition x = q u q^H (LAPACK gees, CPU; no derivative, as in JAX).

    Args:
      x: (..., n, n) float or complex.
      compute_schur_vectors: also return q.
      sort_eig_vals, select_callable: unused (as in jax).
    Returns:
      [u, q], or [u] without the vectors (lists, as jax): u upper triangular (complex x) or
      quasi-upper triangular with 2 x 2 blocks for conjugate pairs (real x); q unitary.

    Example: `u, q = lax.linalg.schur(a)`.
    """
    x = as_operand(x)
    C.check_matrix("schur", x.aval, square=True)
    return list(bind(schur_p, x, compute_schur_vectors=bool(compute_schur_vectors),
                     sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable))


def hessenberg(a):
    """Reduce square matrices to upper Hessenberg form (LAPACK gehrd, CPU; no derivative).

    Args:
      a: (..., n, n) float or complex.
    Returns:
      [a, taus] (a list, as jax): the upper triangle and first subdiagonal of a hold the
      Hessenberg matrix, the entries below the Householder reflectors, whose scalar factors
      are taus (..., n - 1).

    Example: `packed, taus = lax.linalg.hessenberg(a)`.
    """
    a = as_operand(a)
    C.check_matrix("hessenberg", a.aval, square=True)
    return list(bind(hessenberg_p, a))


def tridiagonal(a, *, lower: bool = True):
    """Reduce Hermitian matrices to real symmetric tridiagonal form (LAPACK sytrd/hetrd, CPU).

    Args:
      a: (..., n, n) float or complex; only its `lower` (or upper) triangle is read.
      lower: which triangle to read.
    Returns:
      [a, d, e, taus] (a list, as jax): the diagonal and first sub- (lower) or super-diagonal
      of a hold the tridiagonal matrix, beyond it the Householder reflectors with scalars
      taus (..., n - 1); d (..., n) its diagonal and e (..., n - 1) its off-diagonal, both
      real.

    Example: `_, d, e, _ = lax.linalg.tridiagonal(a)`.
    """
    a = as_operand(a)
    C.check_matrix("tridiagonal", a.aval, square=True)
    return list(bind(tridiagonal_p, a, lower=bool(lower)))
