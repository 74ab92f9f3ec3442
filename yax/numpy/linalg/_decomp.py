"""yax.numpy.linalg decompositions: cholesky, qr, eigh, eigvalsh, svd (NumPy signatures)."""

from __future__ import annotations

from typing import NamedTuple

from yax import errors
from yax.lax import linalg as lax_linalg
from yax.numpy.linalg._util import C, as_matrix, compiled_when_eager


class QRResult(NamedTuple):
    Q: object
    R: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


@compiled_when_eager
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Cholesky factor of Hermitian positive definite matrices (NaN if not positive definite).

    Args:
      a: (..., n, n).
      upper: return U = L^H (a = U^H U) instead of L (a = L L^H).
      symmetrize_input: factor (a + a^H)/2 (derivatives are those of a symmetric function).
    Returns:
      (..., n, n) triangular factor.

    Example: `L = jnp.linalg.cholesky(a)`.
    """
    a = as_matrix("cholesky", a, square=True)
    low = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return C.H(low) if upper else low


@compiled_when_eager
def qr(a, mode: str = "reduced"):
    """QR decomposition.

    Args:
      a: (..., m, n).
      mode: 'reduced' (Q (..., m, k), R (..., k, n), k = min(m, n)), 'complete'
        (Q (..., m, m), R (..., m, n)) or 'r' (R only, reduced shape).
    Returns:
      QRResult(Q, R), or R for mode 'r'.

    Example: `q, r = jnp.linalg.qr(a)`.
    """
    a = as_matrix("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise errors.YaxError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = lax_linalg.qr(a, full_matrices=(mode == "complete"))
    return r if mode == "r" else QRResult(q, r)


@compiled_when_eager
def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices.

    Args:
      a: (..., n, n).
      UPLO: 'L' or 'U', the triangle read when symmetrize_input is False.
      symmetrize_input: use (a + a^H)/2.
    Returns:
      EighResult(eigenvalues (..., n) real, eigenvectors (..., n, n)).

    Example: `w, v = jnp.linalg.eigh(a)`.
    """
    a = as_matrix("eigh", a, square=True)
    lower = _uplo("eigh", UPLO)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO: str | None = "L"):
    """Eigenvalues (ascending, real) of Hermitian matrices: (..., n, n) -> (..., n)."""
    return eigh(a, UPLO).eigenvalues


def _uplo(name: str, UPLO) -> bool:
    if UPLO is None or UPLO in ("L", "l"):
        return True
    if UPLO in ("U", "u"):
        return False
    raise errors.YaxError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")


@compiled_when_eager
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """Singular value decomposition a = U @ diag(S) @ Vh.

    Args:
      a: (..., m, n).
      full_matrices: U (..., m, m) and Vh (..., n, n) if True, else (..., m, k), (..., k, n).
      compute_uv: return only S when False.
      hermitian: accepted for NumPy compatibility; the general algorithm is used.
    Returns:
      SVDResult(U, S, Vh), or S (..., min(m, n)) real, descending.

    Example: `u, s, vh = jnp.linalg.svd(a, full_matrices=False)`.
    """
    del hermitian
    a = as_matrix("svd", a)
    if not compute_uv:
        return lax_linalg.svd(a, compute_uv=False)
    u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(x):
    """Singular values (..., min(m, n)), descending (the array API's name)."""
    return svd(x, compute_uv=False)
