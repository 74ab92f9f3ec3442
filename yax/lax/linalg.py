"""yax.lax.linalg: the linear-algebra primitives, mirroring jax.lax.linalg.

Matrices live in the last two dims; leading dims are batch dims. Inputs must be float32/64 or
complex64/128 (convert integers first). The NumPy/SciPy-style API is yax.numpy.linalg and
yax.scipy.linalg.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.trace import bind
from yax.lax import elementwise as ew
from yax.lax.shape import broadcast_in_dim
from yax.primitives.linalg import _common as C
from yax.primitives.linalg.eigh import eigh_p
from yax.primitives.linalg.enums import check_eigh_implementation, check_svd_algorithm
from yax.primitives.linalg.lu import lu_p
from yax.primitives.linalg.lu import lu_pivots_to_permutation as _pivots_to_perm
from yax.primitives.linalg.qr import qr_p
from yax.primitives.linalg.svd import svd_p
from yax.primitives.linalg.triangular import cholesky_p, triangular_solve_p
from yax.runtime.values import as_operand

__all__ = ["cholesky", "triangular_solve", "symmetrize", "lu", "lu_pivots_to_permutation",
           "qr", "eigh", "svd"]


def symmetrize(x):
    """(x + x^H) / 2: the Hermitian part of each matrix."""
    x = as_operand(x)
    C.check_matrix("symmetrize", x.aval, square=True)
    return ew.div(ew.add(x, C.H(x)), 2.0)


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor L of Hermitian positive definite matrices (x = L L^H).

    Args:
      x: (..., n, n) float or complex.
      symmetrize_input: use (x + x^H)/2, so the derivative is that of a symmetric function;
        otherwise only the lower triangle of x is read.
    Returns:
      L (..., n, n), lower triangular; NaN for matrices that are not positive definite.

    Example: `L = lax.linalg.cholesky(a); a ~= L @ L.T`.
    """
    x = as_operand(x)
    C.check_matrix("cholesky", x.aval, square=True)
    # the primitive's derivative assumes a Hermitian operand: without symmetrising, give it the
    # Hermitian matrix LAPACK reads (the lower triangle, mirrored): the same value, and the
    # derivative of the function computed
    x = symmetrize(x) if symmetrize_input else C.hermitian_part_of_triangle(x, lower=True)
    return bind(cholesky_p, x)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve op(a) x = b (left_side) or x op(a) = b for triangular `a`.

    Args:
      a: (..., m, m) triangular; only its `lower` (or upper) triangle is read, and not its
        diagonal if `unit_diagonal`.
      b: (..., m, n) for left_side, (..., n, m) otherwise; batch dims broadcast against a's.
      transpose_a, conjugate_a: op(a) is a, a^T, conj(a) or a^H.
    Returns:
      x, shaped like b (after batch broadcasting).

    Example: `x = triangular_solve(L, b, left_side=True, lower=True)` solves L x = b.
    """
    a, b = as_operand(a), as_operand(b)
    C.check_matrix("triangular_solve", a.aval, square=True)
    C.check_matrix("triangular_solve", b.aval)
    a, b = broadcast_batch_dims("triangular_solve", a, b)
    return bind(triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                unit_diagonal=bool(unit_diagonal))


def lu(x):
    """LU factorisation with partial pivoting.

    Args:
      x: (..., m, n).
    Returns:
      (lu, pivots, permutation): lu (..., m, n) holds unit-lower L below the diagonal and U on
      and above; pivots (..., min(m, n)) int32 row swaps; permutation (..., m) int32 with
      x[..., permutation, :] == L @ U.

    Example: `lu, piv, perm = lax.linalg.lu(a)`.
    """
    x = as_operand(x)
    C.check_matrix("lu", x.aval)
    lu_, pivots, permutation = bind(lu_p, x)
    return lu_, pivots, permutation


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation (..., permutation_size) int32 that LAPACK-style pivots describe."""
    return _pivots_to_perm(as_operand(pivots), int(permutation_size))


def qr(x, *, pivoting: bool = False, full_matrices: bool = True):
    """QR factorisation: x = q @ r.

    Args:
      x: (..., m, n).
      full_matrices: q (..., m, m), r (..., m, n) if True; else (..., m, k), (..., k, n), with
        k = min(m, n).
    Returns:
      (q, r).

    Example: `q, r = lax.linalg.qr(a, full_matrices=False)`.
    """
    if pivoting:
        raise errors.NotImplementedRuleError("qr: pivoting=True is not implemented")
    x = as_operand(x)
    C.check_matrix("qr", x.aval)
    q, r = bind(qr_p, x, full_matrices=bool(full_matrices))
    return q, r


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """Eigenvectors and eigenvalues of Hermitian matrices.

    Args:
      x: (..., n, n).
      lower: which triangle is read when symmetrize_input is False.
      symmetrize_input: use (x + x^H)/2.
      sort_eigenvalues: LAPACK's eigenvalues come ascending either way.
      subset_by_index: only None (as jax on CPU).
      implementation: None or EighImplementation.QR (LAPACK syevd/heevd).
    Returns:
      (v, w): v (..., n, n) with eigenvectors as columns, w (..., n) real, ascending.
      See yax/primitives/linalg/eigh.py for the derivative convention at repeated eigenvalues.

    Example: `v, w = lax.linalg.eigh(a)`.
    """
    check_eigh_implementation(implementation)
    _check_no_subset("eigh", subset_by_index)
    x = as_operand(x)
    C.check_matrix("eigh", x.aval, square=True)
    if symmetrize_input:
        x = symmetrize(x)
    v, w = bind(eigh_p, x, lower=bool(lower), algorithm=implementation,
                sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=None)
    return v, w


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """Singular value decomposition x = u @ diag(s) @ vh.

    Args:
      x: (..., m, n).
      full_matrices: u (..., m, m), vh (..., n, n) if True, else (..., m, k), (..., k, n).
      compute_uv: return only s when False.
      subset_by_index: only None (as jax on CPU).
      algorithm: None, SvdAlgorithm.DEFAULT or DIVIDE_AND_CONQUER (LAPACK gesdd), or
        SvdAlgorithm.QR (LAPACK gesvd).
    Returns:
      (u, s, vh), or s; s (..., min(m, n)) real, descending.

    Example: `u, s, vh = lax.linalg.svd(a, full_matrices=False)`.
    """
    check_svd_algorithm(algorithm)
    _check_no_subset("svd", subset_by_index)
    x = as_operand(x)
    C.check_matrix("svd", x.aval)
    params = dict(full_matrices=bool(full_matrices), algorithm=algorithm, subset_by_index=None)
    if not compute_uv:
        s, = bind(svd_p, x, compute_uv=False, **params)
        return s
    s, u, vh = bind(svd_p, x, compute_uv=True, **params)
    return u, s, vh


def _check_no_subset(name: str, subset_by_index) -> None:
    if subset_by_index is not None:
        raise errors.NotImplementedRuleError(
            f"{name}: subset_by_index is not supported on CPU (as in JAX); take the full "
            f"decomposition and slice it")


def broadcast_batch_dims(name: str, *xs):
    """Broadcast the leading (batch) dims of matrices NumPy-style; the last two stay."""
    try:
        batch = np.broadcast_shapes(*(tuple(x.shape[:-2]) for x in xs))
    except ValueError:
        shown = ", ".join(x.aval.str_short() for x in xs)
        raise errors.ShapeError(f"{name}: the batch dims (all but the last two) of {shown} do "
                                f"not broadcast together") from None
    out = []
    for x in xs:
        shape = tuple(batch) + tuple(x.shape[-2:])
        if tuple(x.shape) != shape:
            off = len(shape) - x.ndim
            x = broadcast_in_dim(x, shape, tuple(range(off, len(shape))))
        out.append(x)
    return out


from yax.lax.linalg_products import symmetric_product, tridiagonal_solve  # noqa: E402,F401

__all__ += ["symmetric_product", "tridiagonal_solve"]
from yax.lax.householder import cholesky_update, householder_product, ormqr  # noqa: E402,F401

__all__ += ["cholesky_update", "householder_product", "ormqr"]
from yax.lax.linalg_general import eig, hessenberg, schur, tridiagonal  # noqa: E402,F401
from yax.primitives.linalg.enums import (  # noqa: E402,F401
    EighImplementation,
    EigImplementation,
    SvdAlgorithm,
)

__all__ += ["EigImplementation", "EighImplementation", "SvdAlgorithm", "eig", "hessenberg",
            "schur", "tridiagonal"]
from yax.lax.qdwh import qdwh  # noqa: E402,F401

__all__ += ["qdwh"]
