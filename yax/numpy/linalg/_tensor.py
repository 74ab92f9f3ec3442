"""Products and solves over tensor axes: multi_dot (a matrix chain multiplied in the cheapest
order), tensorsolve and tensorinv (solve/inv of a tensor reshaped to a square matrix).
"""

from __future__ import annotations

import math
import operator

from yax import errors
from yax.numpy import contractions, creation, manipulation
from yax.numpy.linalg._solve import inv, solve

__all__ = ["multi_dot", "tensorsolve", "tensorinv"]


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the first may be 1-D, the last too), multiplied in
    the order that needs the fewest scalar multiplications (dynamic programming, as NumPy)."""
    arrays = [creation.asarray(a) for a in arrays]
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
        return contractions.matmul(product(i, k), product(k + 1, j), precision=precision)

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
    a, b = creation.asarray(a), creation.asarray(b)
    if axes is not None:
        axes = [operator.index(ax) % a.ndim for ax in axes]
        a = manipulation.moveaxis(a, axes, list(range(a.ndim - len(axes), a.ndim)))
    x_shape = a.shape[b.ndim:]
    rows = math.prod(b.shape)
    if rows != math.prod(x_shape):
        raise errors.ShapeError(f"tensorsolve: a of shape {a.shape} is not square for b of "
                                f"shape {b.shape} (prod of b's dims must equal that of x's)")
    x = solve(a.reshape(rows, rows), b.reshape(rows))
    return x.reshape(x_shape)


def tensorinv(a, ind: int = 2):
    """The inverse of `a` with respect to tensordot over its first `ind` dims."""
    a = creation.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise errors.ShapeError(f"tensorinv: ind must be a positive int, got {ind}")
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = math.prod(a.shape[:ind])
    if rows != math.prod(a.shape[ind:]):
        raise errors.ShapeError(f"tensorinv: a of shape {a.shape} with ind={ind} is not square")
    return inv(a.reshape(rows, -1)).reshape(out_shape)
