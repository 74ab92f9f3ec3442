"""yax.lax.linalg: the linear-algebra primitives, mirroring jax.lax.linalg.

Matrices live in the last two dims; leading dims are batch dims. Inputs must be float32/64 or
complex64/128 (convert integers first). The NumPy/SciPy-style API is yax.numpy.linalg and
yax.scipy.linalg.
"""

from __future__ import annotations

from yax.core.trace import bind
from yax.lax_like._util import as_operand
from yax.primitives.linalg import _common as C
from yax.primitives.linalg.triangular import cholesky_p, triangular_solve_p

__all__ = ["cholesky", "triangular_solve", "symmetrize"]


def symmetrize(x):
    """(x + x^H) / 2: the Hermitian part of each matrix."""
    x = as_operand(x)
    C.check_matrix("symmetrize", x.aval, square=True)
    from yax import lax
    return lax.mul(lax.add(x, C.H(x)), 0.5)


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
    if symmetrize_input:
        x = symmetrize(x)
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


def broadcast_batch_dims(name: str, *xs):
    """Broadcast the leading (batch) dims of matrices NumPy-style; the last two stay."""
    import numpy as np

    from yax import errors, lax
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
            x = lax.broadcast_in_dim(x, shape, tuple(range(off, len(shape))))
        out.append(x)
    return out
