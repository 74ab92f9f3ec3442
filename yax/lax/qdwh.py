"""lax.linalg.qdwh: the polar decomposition x = u h by the QR-based dynamically weighted
Halley iteration (Nakatsukasa, Bai and Gygi 2010), written with yax.lax (every transformation
applies: jit, vmap, and derivatives through the unrolled arithmetic).

The iteration, on x0 = x / alpha with alpha >= ||x||_2 (so the singular values lie in (0, 1]),
is the Python loop

    l = eps                                 # a lower bound on x0's smallest singular value
    for k in range(max_iterations):
        a = h(l); b = (a - 1) ** 2 / 4; c = a + b - 1
        x = (b / c) x + (a - b / c) x (I + c x^H x)^-1   # QR-based when c > 100, else Cholesky
        l = l (a + b l^2) / (1 + c l^2)
        if c <= 100 and ||x - x_prev||_F < (4 eps)^(1/3) ||x||_F: break

with h(l) = sqrt(1 + g) + sqrt(8 - 4 g + 8 (2 - l^2) / (l^2 sqrt(1 + g))) / 2 and
g = (4 (1 - l^2) / l^4)^(1/3). The weights depend only on l, so they are computed once on the
host; each step maps every singular value s in [l, 1] to one in [l', 1], and the map tends to
the sign function's (cubic convergence). A Newton-Schulz step u (3 - u^H u) / 2 then polishes
orthogonality, and h = (u^H x + x^H u) / 2.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.trace import bind
from yax.lax import elementwise as ew
from yax.lax.cond import cond
from yax.lax.reductions import reduce_max, reduce_sum
from yax.lax.shape import broadcasted_iota, concatenate
from yax.lax.slicing import dynamic_index_in_dim, slice
from yax.lax.while_loop import while_loop
from yax.primitives.linalg import _common as C
from yax.primitives.linalg.qr import qr_p
from yax.primitives.linalg.triangular import cholesky_p, triangular_solve
from yax.runtime.values import as_operand

__all__ = ["qdwh"]

_QR_WHEN_C_ABOVE = 100.0  # below it the Cholesky form is accurate enough, and cheaper


def _weights(eps: float, steps: int) -> np.ndarray:
    """(steps, 4) float64 rows (a, b, c, use_qr) of the dynamically weighted iteration."""
    rows, l = [], eps
    for _ in range(steps):
        l2 = l * l
        g = (4.0 * (1.0 - l2) / (l2 * l2)) ** (1.0 / 3.0)
        s = np.sqrt(1.0 + g)
        a = s + 0.5 * np.sqrt(max(8.0 - 4.0 * g + 8.0 * (2.0 - l2) / (l2 * s), 0.0))
        b = (a - 1.0) ** 2 / 4.0
        c = a + b - 1.0
        rows.append((a, b, c, float(c > _QR_WHEN_C_ABOVE)))
        l = min(l * (a + b * l2) / (1.0 + c * l2), 1.0)
    return np.asarray(rows, np.float64).reshape(steps, 4)


def _mat(a, b):
    return C.matmul(a, b)


def _fro(x):
    ax = ew.abs(x)
    return ew.sqrt(reduce_sum(ew.mul(ax, ax), (0, 1)))


def _step_qr(x, a, b, c, m, n):
    """(b/c) x + (a - b/c) / sqrt(c) q1 q2^H, with [sqrt(c) x; I] = [q1; q2] r."""
    eye = C.eye_like(_mat(C.H(x), x))
    q, _ = bind(qr_p, concatenate([ew.mul(x, ew.sqrt(c)), eye], 0), full_matrices=False)
    q1, q2 = slice(q, (0, 0), (m, n)), slice(q, (m, 0), (m + n, n))
    coef = ew.div(ew.sub(a, ew.div(b, c)), ew.sqrt(c))
    return ew.add(ew.mul(x, ew.div(b, c)), ew.mul(_mat(q1, C.H(q2)), coef))


def _step_cholesky(x, a, b, c):
    """(b/c) x + (a - b/c) x w^-H w^-1, with w w^H = I + c x^H x."""
    xhx = _mat(C.H(x), x)
    w = bind(cholesky_p, ew.add(C.eye_like(xhx), ew.mul(xhx, c)))
    y = triangular_solve(w, x, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    y = triangular_solve(w, y, left_side=False, lower=True)
    return ew.add(ew.mul(x, ew.div(b, c)), ew.mul(y, ew.sub(a, ew.div(b, c))))


def _check(x, dynamic_shape):
    if x.ndim != 2:
        raise errors.ShapeError(f"qdwh needs a matrix (use vmap for a batch), got "
                                f"{x.aval.str_short()}")
    C.check_matrix("qdwh", x.aval)
    m, n = x.shape
    if m < n:
        raise errors.ShapeError(f"qdwh: the input matrix of shape M x N must have M >= N, got "
                                f"{m} x {n}; decompose its conjugate transpose instead")
    if dynamic_shape is not None:
        dm, dn = (int(d) for d in dynamic_shape)
        if not (0 <= dn <= dm <= m and dn <= n):
            raise errors.ShapeError(f"qdwh: dynamic_shape {dynamic_shape} must fit in {m} x {n} "
                                    f"with rows >= columns")


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """Polar decomposition x = u h of a full-rank M x N matrix (M >= N) by QDWH.

    Args:
      x: (m, n) float or complex, m >= n.
      is_hermitian: unused (as in jax).
      max_iterations: at most this many Halley steps (default 10).
      eps: the tolerance: stop once ||x_k - x_k-1|| < ||x_k|| (4 eps)^(1/3) (default: the
        dtype's machine epsilon).
      dynamic_shape: (m', n'): only x[:m', :n'] is decomposed (the rest counts as zeros and
        comes back as zeros in u and h).
    Returns:
      (u, h, num_iters, is_converged): u (m, n) with orthonormal columns, h (n, n) Hermitian
      positive semidefinite, the int32 number of steps taken and whether the tolerance was met.

    Example: `u, h, _, ok = lax.linalg.qdwh(a)`; then `u @ h ~= a`.
    """
    del is_hermitian
    x = as_operand(x)
    _check(x, dynamic_shape)
    real = C.real_dtype(x.dtype)
    eps = float(np.finfo(real).eps) if eps is None else float(eps)
    steps = 10 if max_iterations is None else int(max_iterations)
    if dynamic_shape is not None:
        x = _mask_outside(x, dynamic_shape)
    norm1 = reduce_max(reduce_sum(ew.abs(x), (0,)), (0,))
    norm_inf = reduce_max(reduce_sum(ew.abs(x), (1,)), (0,))
    alpha = ew.sqrt(ew.mul(norm1, norm_inf))  # >= ||x||_2
    alpha = ew.select(ew.eq(alpha, np.zeros((), real)), np.ones((), real), alpha)
    x0 = ew.div(x, ew.convert_element_type(alpha, x.dtype))
    num_iters, u, converged = _iterate(x0, _weights(eps, max(steps, 1)).astype(real), steps,
                                       np.asarray((4.0 * eps) ** (1.0 / 3.0), real))
    u = ew.sub(ew.mul(u, np.asarray(1.5, x.dtype)),
               ew.mul(_mat(u, _mat(C.H(u), u)), np.asarray(0.5, x.dtype)))
    h = _mat(C.H(u), x)
    h = ew.mul(ew.add(h, C.H(h)), np.asarray(0.5, x.dtype))
    return u, h, num_iters, converged


def _mask_outside(x, dynamic_shape):
    m, n = x.shape
    keep = ew.bitwise_and(ew.lt(broadcasted_iota(np.int32, (m, n), 0), dynamic_shape[0]),
                          ew.lt(broadcasted_iota(np.int32, (m, n), 1), dynamic_shape[1]))
    return ew.select(keep, x, C.zeros_like(x))


def _iterate(x0, table, steps: int, tol):
    """The while_loop of the weighted steps: (num_iters, x, converged)."""
    m, n = x0.shape
    real = table.dtype

    def body(state):
        k, u, _ = state
        a, b, c, use_qr = (dynamic_index_in_dim(dynamic_index_in_dim(table, k, 0, False), i, 0,
                                                False) for i in range(4))
        a, b, c = (ew.convert_element_type(v, x0.dtype) for v in (a, b, c))
        new = cond(ew.gt(use_qr, np.zeros((), real)),
                   lambda u: _step_qr(u, a, b, c, m, n), lambda u: _step_cholesky(u, a, b, c), u)
        # while the weights are far from Halley's (the QR regime) singular values near 1 barely
        # move, so a small step says nothing; from the Cholesky regime on it means converged
        done = ew.bitwise_and(ew.eq(use_qr, np.zeros((), real)),
                              ew.lt(_fro(ew.sub(new, u)), ew.mul(_fro(new), tol)))
        return ew.add(k, 1), new, done

    def more(state):
        k, _, done = state
        return ew.bitwise_and(ew.lt(k, steps), ew.bitwise_not(done))

    # a Python 0: the count is weakly typed, as jax's
    return while_loop(more, body, (0, x0, np.bool_(False)))
