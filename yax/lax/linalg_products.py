"""lax.linalg's `symmetric_product` (alpha A A^T + beta C) and `tridiagonal_solve` (a banded
system by the Thomas algorithm), written with yax.lax so that every transformation applies."""

from __future__ import annotations

import numpy as np

from yax.lax import elementwise as ew
from yax.lax.construction import full_like
from yax.lax.dot import dot_general
from yax.lax.scan import scan
from yax.lax.shape import broadcast_in_dim, broadcasted_iota, concatenate, transpose
from yax.runtime.values import as_operand

__all__ = ["symmetric_product", "tridiagonal_solve"]


def _swap_last(x):
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    return transpose(x, perm)


def _lower_mask(shape, k: int = 0):
    rows = broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    return ew.ge(ew.add(rows, np.int32(k)), cols)


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """alpha * A @ A^T + beta * C for a batch of A [..., m, n] and symmetric C [..., m, m].

    The whole product is computed (jax promises only the lower triangle); with
    `symmetrize_output` the upper triangle is the transpose of the lower one."""
    a, c = as_operand(a_matrix), as_operand(c_matrix)
    batch = tuple(range(a.ndim - 2))
    aat = dot_general(a, a, (((a.ndim - 1,), (a.ndim - 1,)), (batch, batch)))
    out = ew.add(ew.mul(aat, np.asarray(alpha, aat.dtype)),
                 ew.mul(c, np.asarray(beta, c.dtype)))
    if symmetrize_output:
        strictly_lower = ew.select(_lower_mask(out.shape, -1), out, full_like(out, 0))
        lower = ew.select(_lower_mask(out.shape, 0), out, full_like(out, 0))
        out = ew.add(lower, _swap_last(strictly_lower))
    return out


def _move_first(x, axis: int):
    perm = (axis, *[i for i in range(x.ndim) if i != axis])
    return transpose(x, perm)


def _move_back(x, axis: int):
    perm = list(range(1, x.ndim))
    perm.insert(axis, 0)
    return transpose(x, tuple(int(p) for p in np.argsort(perm)))


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """X with A X = B, A tridiagonal: `dl[i] = A[i, i-1]` (dl[0] = 0), `d[i] = A[i, i]`,
    `du[i] = A[i, i+1]` (du[-1] = 0), each [..., m]; B is [..., m, k].

    The Thomas algorithm (Gaussian elimination without pivoting, one forward and one backward
    sweep of `lax.scan`), as jax's generic implementation: stable for diagonally dominant or
    symmetric positive definite A. `perturb_singular` is not supported (jax's CPU kernel)."""
    if perturb_singular:
        raise NotImplementedError("tridiagonal_solve(perturb_singular=True): the Thomas "
                                  "algorithm has no pivots to perturb; yax does not offer it")
    dl, d, du, b = (as_operand(v) for v in (dl, d, du, b))
    m_axis = d.ndim - 1
    # the sweeps run over the m axis: put it first (b keeps its right-hand sides last)
    dl_, d_, du_ = (_move_first(v, m_axis) for v in (dl, d, du))
    b_ = _move_first(b, b.ndim - 2)

    def col(v):  # a per-row coefficient against b's columns
        return broadcast_in_dim(v, (*v.shape, b_.shape[-1]), tuple(range(v.ndim)))

    def forward(carry, row):
        cp, dp = carry
        lo, diag, up, rhs = row
        denom = ew.sub(diag, ew.mul(lo, cp))
        cp_next = ew.div(up, denom)
        dp_next = ew.div(ew.sub(rhs, ew.mul(col(lo), dp)), col(denom))
        return (cp_next, dp_next), (cp, dp)

    first = (ew.div(du_[0], d_[0]), ew.div(b_[0], col(d_[0])))
    (_, last), (cps, dps) = scan(forward, first, (dl_[1:], d_[1:], du_[1:], b_[1:]))

    def backward(x_next, row):
        cp, dp = row
        x = ew.sub(dp, ew.mul(col(cp), x_next))
        return x, x_next

    x0, rest = scan(backward, last, (cps, dps), reverse=True)
    x = concatenate([broadcast_in_dim(x0, (1, *x0.shape), tuple(range(1, x0.ndim + 1))), rest],
                    0)
    return _move_back(x, b.ndim - 2)
