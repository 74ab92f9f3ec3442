"""More of yax.numpy.linalg: eig/eigvals (LAPACK geev), multi_dot, tensorsolve/tensorinv and the
array-API names (cross, outer, vecdot, matrix_transpose, diagonal, trace, tensordot, matmul) that
act on the last axes; plus yax.numpy.roots, the eigenvalues of the companion matrix.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from yax import errors
from yax.core.trace import bind
from yax.numpy._promote import promote_dtypes_inexact
from yax.numpy.linalg._util import as_matrix
from yax.primitives.linalg.eig import eig_p

__all__ = ["EigResult", "eig", "eigvals", "multi_dot", "tensorsolve", "tensorinv", "cross",
           "outer", "vecdot", "matrix_transpose", "diagonal", "trace", "tensordot", "matmul",
           "roots"]


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def _jnp():
    import yax.numpy as jnp
    return jnp


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (CPU only, like JAX).

    Args:
      a: (..., n, n) float or complex.
    Returns:
      EigResult(eigenvalues (..., n), eigenvectors (..., n, n) as columns), both complex, in
      LAPACK's (unsorted) order; a @ v = v * w.
    Not differentiable (as in JAX): use eigvals for eigenvalue derivatives, eigh when Hermitian.
    """
    a = as_matrix("eig", a, square=True)
    w, v = bind(eig_p, a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    return EigResult(w, v)


def eigvals(a):
    """The (complex, unsorted) eigenvalues of general square matrices; differentiable for
    distinct eigenvalues. CPU only."""
    a = as_matrix("eigvals", a, square=True)
    w, = bind(eig_p, a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the first may be 1-D, the last too), multiplied in
    the order that needs the fewest scalar multiplications (dynamic programming, as NumPy)."""
    jnp = _jnp()
    arrays = [jnp.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise errors.ShapeError("multi_dot needs at least two arrays")
    first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_1d:
        arrays[0] = arrays[0][None, :]
    if last_1d:
        arrays[-1] = arrays[-1][:, None]
    if any(a.ndim != 2 for a in arrays):
        raise errors.ShapeError("multi_dot: the inner arrays must be 2-D (the first and last "
                                "may be 1-D)")
    order = _chain_order([a.shape[0] for a in arrays] + [arrays[-1].shape[1]])

    def product(i, j):
        if i == j:
            return arrays[i]
        k = order[i][j]
        return jnp.matmul(product(i, k), product(k + 1, j), precision=precision)

    out = product(0, len(arrays) - 1)
    if first_1d:
        out = out[0]
    if last_1d:
        out = out[..., 0]
    return out


def _chain_order(dims):
    """split[i][j]: where to split the product of matrices i..j (dims[i] x dims[i+1], ...)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, axes=x.ndim) == b (NumPy's tensorsolve).

    Args:
      a: an array whose trailing dims (after moving `axes` to the end) are x's shape and whose
        leading dims are b's shape, with prod(b.shape) == prod(x.shape).
      b: the right-hand side.
      axes: axes of a to move to the end first.
    """
    jnp = _jnp()
    a, b = jnp.asarray(a), jnp.asarray(b)
    if axes is not None:
        axes = [operator.index(ax) % a.ndim for ax in axes]
        a = jnp.moveaxis(a, axes, list(range(a.ndim - len(axes), a.ndim)))
    x_shape = a.shape[b.ndim:]
    rows = math.prod(b.shape)
    if rows != math.prod(x_shape):
        raise errors.ShapeError(f"tensorsolve: a of shape {a.shape} is not square for b of "
                                f"shape {b.shape} (prod of b's dims must equal that of x's)")
    x = jnp.linalg.solve(a.reshape(rows, rows), b.reshape(rows))
    return x.reshape(x_shape)


def tensorinv(a, ind: int = 2):
    """The inverse of `a` with respect to tensordot over its first `ind` dims."""
    jnp = _jnp()
    a = jnp.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise errors.ShapeError(f"tensorinv: ind must be a positive int, got {ind}")
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = math.prod(a.shape[:ind])
    if rows != math.prod(a.shape[ind:]):
        raise errors.ShapeError(f"tensorinv: a of shape {a.shape} with ind={ind} is not square")
    return jnp.linalg.inv(a.reshape(rows, -1)).reshape(out_shape)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along `axis` (the array-API form of jnp.cross)."""
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise errors.ShapeError(f"linalg.cross needs vectors of size 3 along axis {axis}, got "
                                f"shapes {x1.shape} and {x2.shape}")
    return jnp.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
    """The outer product of two 1-D arrays."""
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise errors.ShapeError(f"linalg.outer needs 1-D inputs, got shapes {x1.shape} and "
                                f"{x2.shape}")
    return jnp.outer(x1, x2)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along `axis`, broadcasting the other dims."""
    del precision, preferred_element_type
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    return jnp.sum(jnp.conj(x1) * x2, axis=axis)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    jnp = _jnp()
    x = jnp.asarray(x)
    if x.ndim < 2:
        raise errors.ShapeError(f"matrix_transpose needs rank >= 2, got shape {x.shape}")
    return jnp.swapaxes(x, -1, -2)


def diagonal(x, /, *, offset: int = 0):
    """The `offset` diagonal of each matrix in the last two axes."""
    return _jnp().diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of the `offset` diagonal of each matrix in the last two axes."""
    return _jnp().trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """jnp.tensordot with the array-API signature."""
    return _jnp().tensordot(x1, x2, axes=axes, precision=precision,
                            preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """jnp.matmul with the array-API signature."""
    return _jnp().matmul(x1, x2, precision=precision,
                         preferred_element_type=preferred_element_type)


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients `p` (highest power first), as the
    eigenvalues of its companion matrix; complex, in no particular order (CPU only).

    Args:
      p: 1-D coefficients.
      strip_zeros: drop leading zeros first (needs concrete p, as in JAX); with False, leading
        zeros give NaN roots and the function works under jit.
    Differs from NumPy: trailing zeros are kept as (computed) zero roots under strip_zeros=False.
    """
    jnp = _jnp()
    p = jnp.asarray(p)
    if p.ndim != 1:
        raise errors.ShapeError(f"roots needs 1-D coefficients, got shape {p.shape}")
    if strip_zeros:
        values = np.asarray(p)  # concrete: strip as NumPy does
        nonzero = np.flatnonzero(values)
        if nonzero.size == 0:
            return jnp.zeros((0,), dtype=jnp.result_type(p.dtype, np.complex64))
        trailing = len(values) - 1 - nonzero[-1]
        p = p[nonzero[0]:nonzero[-1] + 1]
        found = _companion_roots(jnp, p)
        zeros = jnp.zeros((int(trailing),), dtype=found.dtype)
        return jnp.concatenate([found, zeros])
    return _companion_roots(jnp, p)


def _companion_roots(jnp, p):
    n = p.shape[0] - 1
    (p,) = _inexact(jnp, p)
    if n < 1:
        return jnp.zeros((0,), dtype=jnp.result_type(p.dtype, np.complex64))
    top = -p[1:] / p[0]
    companion = jnp.concatenate([top[None, :], jnp.eye(n - 1, n, dtype=p.dtype)], axis=0)
    return eigvals(companion)


def _inexact(jnp, *xs):
    return promote_dtypes_inexact(*xs)
