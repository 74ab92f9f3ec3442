"""yax.scipy.linalg: SciPy's linear-algebra API on the yax.lax.linalg primitives.

    import yax.scipy.linalg as sla
    c = sla.cho_factor(a); x = sla.cho_solve(c, b)

Functions accept batches of matrices in the leading dims (unlike SciPy) and work under jit, grad
and vmap. `overwrite_*` and `check_finite` are accepted for compatibility and ignored.
"""

from __future__ import annotations

from yax import errors, lax
from yax.lax import linalg as lax_linalg
from yax.numpy import linalg as jnp_linalg
from yax.numpy.linalg._solve import _as_columns, lu_solve_factored
from yax.numpy.linalg._util import C, as_matrix, as_matrix_pair, compiled_when_eager
from yax.primitives.linalg.lu import lu_pivots_to_permutation, permutation_matrix
from yax.scipy._decompositions import *  # noqa: F401,F403
from yax.scipy._decompositions import __all__ as _decompositions
from yax.scipy._matrix_functions import *  # noqa: F401,F403
from yax.scipy._matrix_functions import MAX_SQUARINGS  # noqa: F401  (expm's default)
from yax.scipy._matrix_functions import __all__ as _matrix_functions
from yax.scipy._special_matrices import *  # noqa: F401,F403
from yax.scipy._special_matrices import __all__ as _special_matrices

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "inv", "lu", "lu_factor",
           "lu_solve", "qr", "solve", "solve_triangular", "svd",
           *_decompositions, *_matrix_functions, *_special_matrices]


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Cholesky factor of Hermitian positive definite a: upper U (a = U^H U) by default, as
    SciPy does, or lower L (a = L L^H). NaN for matrices that are not positive definite."""
    del overwrite_a, check_finite
    return jnp_linalg.cholesky(a, upper=not lower)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower) for cho_solve. Unlike SciPy, the unused triangle of c is zero."""
    return cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite), lower


@compiled_when_eager
def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve a x = b given cho_factor(a) = (c, lower)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = as_matrix_pair("cho_solve", c, b)
    c, b, restore = _as_columns("cho_solve", c, b)
    # a = L L^H: solve L y = b then L^H x = y (with U = L^H when upper)
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return restore(x)


_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


@compiled_when_eager
def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve op(a) x = b for triangular a; op = identity, transpose (trans=1 or 'T') or
    conjugate transpose (2 or 'C'). Only the `lower` (or upper) triangle of a is read."""
    del overwrite_b, debug, check_finite
    if trans not in _TRANS:
        raise errors.YaxError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                              f"{trans!r}")
    t = _TRANS[trans]
    a, b = as_matrix_pair("solve_triangular", a, b)
    a, b, restore = _as_columns("solve_triangular", a, b)
    x = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=t > 0,
                                    conjugate_a=t == 2, unit_diagonal=unit_diagonal)
    return restore(x)


@compiled_when_eager
def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv) as LAPACK getrf gives them (0-based pivots), for lu_solve."""
    del overwrite_a, check_finite
    a = as_matrix("lu_factor", a)
    lu_, piv, _ = lax_linalg.lu(a)
    return lu_, piv


@compiled_when_eager
def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """Solve op(a) x = b given lu_factor(a); trans as in solve_triangular."""
    del overwrite_b, check_finite
    lu_, piv = lu_and_piv
    lu_, b = as_matrix_pair("lu_solve", lu_, b)
    if trans not in _TRANS:
        raise errors.YaxError(f"lu_solve: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    perm = lu_pivots_to_permutation(piv, lu_.shape[-1])
    lu_, b, restore = _as_columns("lu_solve", lu_, b)
    if tuple(perm.shape[:-1]) != tuple(lu_.shape[:-2]):
        perm = lax.broadcast_in_dim(perm, tuple(lu_.shape[:-1]),
                                    tuple(range(lu_.ndim - 1 - perm.ndim, lu_.ndim - 1)))
    return restore(lu_solve_factored(lu_, perm, b, _TRANS[trans]))


@compiled_when_eager
def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """a = p @ l @ u with p a permutation matrix, l (m, k) unit lower, u (k, n) upper.

    Returns (p, l, u), or (p @ l, u) with permute_l."""
    del overwrite_a, check_finite
    a = as_matrix("lu", a)
    lu_, _, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    l_ = lax.slice(lu_, (0,) * a.ndim, batch + (m, k))
    l_ = lax.add(C.tril(l_, -1), C.eye_like(l_))
    u_ = C.triu(lax.slice(lu_, (0,) * a.ndim, batch + (k, n)))
    p = C.mT(permutation_matrix(perm, a.dtype))
    if permute_l:
        return C.matmul(p, l_), u_
    return p, l_, u_


@compiled_when_eager
def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, assume_a: str = "gen"):
    """Solve a x = b. assume_a='pos' uses a Cholesky factorisation (reading the `lower` or upper
    triangle); 'gen', 'sym' and 'her' use LU."""
    del overwrite_a, overwrite_b, check_finite
    if assume_a in ("pos", "positive definite"):
        a, b = as_matrix_pair("solve", a, b)
        c = lax_linalg.cholesky(C.hermitian_part_of_triangle(a, lower),
                                symmetrize_input=False)
        return cho_solve((c, True), b)
    if assume_a not in ("gen", "general", "sym", "symmetric", "her", "hermitian"):
        raise errors.YaxError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got "
                              f"{assume_a!r}")
    return jnp_linalg.solve(a, b)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of square matrices."""
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Determinants of square matrices, from the LU factorisation."""
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


@compiled_when_eager
def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, type: int = 1, check_finite: bool = True,  # noqa: A002
         subset_by_index=None, subset_by_value=None, driver=None):
    """Eigenvalues w (ascending) and eigenvectors v of a Hermitian matrix: (w, v), or w with
    eigvals_only. Only the `lower` (or upper) triangle is read, as in SciPy. The generalized
    problem (b) and subsets are not supported."""
    del overwrite_a, overwrite_b, check_finite, driver
    if b is not None or subset_by_index is not None or subset_by_value is not None or type != 1:
        raise errors.NotImplementedRuleError(
            "scipy.linalg.eigh: the generalized problem (b=...) and subset selection are not "
            "implemented")
    w, v = jnp_linalg.eigh(a, UPLO="L" if lower else "U", symmetrize_input=False)
    return w if eigvals_only else (w, v)


@compiled_when_eager
def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """(u, s, vh) with a = u @ diag(s) @ vh, or s when compute_uv is False."""
    del overwrite_a, check_finite, lapack_driver
    out = jnp_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return out if not compute_uv else tuple(out)


@compiled_when_eager
def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR: mode 'full' (q (m, m)), 'economic' (q (m, k)) or 'r' (returns (r,))."""
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise errors.NotImplementedRuleError("scipy.linalg.qr: pivoting=True is not implemented")
    if mode not in ("full", "economic", "r"):
        raise errors.YaxError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    a = as_matrix("qr", a)
    q, r = lax_linalg.qr(a, full_matrices=(mode != "economic"))
    return (r,) if mode == "r" else (q, r)


from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__, "jax.scipy.linalg")  # JAX names yax lacks
