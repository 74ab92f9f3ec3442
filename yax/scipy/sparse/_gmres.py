"""Restarted GMRES on flat vectors, left-preconditioned by M (any nonsingular A).

Each cycle builds an orthonormal basis V of the Krylov space of M A from the preconditioned
residual r = M (b - A x) (Arnoldi with classical Gram-Schmidt run twice, which keeps V
orthogonal to working precision), with M A V[:, :j] = V[:, :j+1] H, then moves x by V y with
y minimising |beta e1 - H y| (beta = |r|):

    while |r| > ptol and cycles < maxiter:      (ptol: tol and atol carried over to M b's scale)
        x = x + V(r) y;  r = M (b - A x)

"batched" builds all `restart` columns and solves the small least-squares problem at the end;
"incremental" triangularises H by Givens rotations as it grows, so it knows the residual after
every column and stops a cycle early once it is below ptol.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.lax import linalg as lax_linalg
from yax.scipy.sparse._vectors import norm


def _arnoldi_column(A, M, V, j):
    """h (length k+1) and the next basis vector from w = M A V[j], orthogonalised against V
    (rows of V past j are zero, so they add nothing)."""
    w = M(A(V[j]))
    w_norm = norm(w)
    h = jnp.zeros((V.shape[0],), V.dtype)
    for _ in range(2):  # twice is enough (Giraud et al.): one pass loses orthogonality
        coeffs = jnp.matmul(jnp.conj(V), w, precision=lax.Precision.HIGHEST)
        w = w - jnp.matmul(coeffs, V, precision=lax.Precision.HIGHEST)
        h = h + coeffs
    h_next = norm(w)
    # an invariant subspace (a "lucky breakdown"): w is round-off, so the basis gets no vector
    broke = h_next <= 10 * np.finfo(np.dtype(h_next.dtype)).eps * w_norm
    v = jnp.where(broke, jnp.zeros_like(w), w / jnp.where(broke, 1, h_next).astype(w.dtype))
    h = h.at[j + 1].set(jnp.where(broke, 0, h_next).astype(h.dtype))
    return h, v


def _cycle_batched(A, M, x, r, beta, restart, ptol):
    del ptol  # runs all `restart` columns
    n = r.shape[0]
    V = jnp.zeros((restart + 1, n), r.dtype).at[0].set(r / beta.astype(r.dtype))
    H = jnp.zeros((restart + 1, restart), r.dtype)

    def step(j, carry):
        V, H = carry
        h, v = _arnoldi_column(A, M, V, j)
        return V.at[j + 1].set(v), H.at[:, j].set(h)

    V, H = lax.fori_loop(0, restart, step, (V, H))
    rhs = jnp.zeros((restart + 1,), r.dtype).at[0].set(beta.astype(r.dtype))
    y = jnp.linalg.lstsq(H, rhs)[0]
    return x + jnp.matmul(y, V[:restart], precision=lax.Precision.HIGHEST)


def _givens(a, b):
    """(c, s) with [[c, s], [-conj(s), c]] @ [a, b] = [(a / |a|) hypot(a, b), 0], c real."""
    abs_a, abs_b = jnp.abs(a), jnp.abs(b)
    r = jnp.sqrt(abs_a * abs_a + abs_b * abs_b)
    phase = jnp.where(abs_a == 0, jnp.ones_like(a), a / jnp.where(abs_a == 0, 1, abs_a))
    safe_r = jnp.where(r == 0, 1, r)
    c = jnp.where(r == 0, 1, abs_a / safe_r)
    s = jnp.where(r == 0, jnp.zeros_like(a), phase * jnp.conj(b) / safe_r)
    return c.astype(a.dtype), s


def _rotate(v, i, c, s):
    vi, vj = v[i], v[i + 1]
    return v.at[i].set(c * vi + s * vj).at[i + 1].set(-jnp.conj(s) * vi + c * vj)


def _cycle_incremental(A, M, x, r, beta, restart, ptol):
    n = r.shape[0]
    V = jnp.zeros((restart + 1, n), r.dtype).at[0].set(r / beta.astype(r.dtype))
    R = jnp.zeros((restart + 1, restart), r.dtype)
    g = jnp.zeros((restart + 1,), r.dtype).at[0].set(beta.astype(r.dtype))
    cs = jnp.zeros((restart,), r.dtype)
    sn = jnp.zeros((restart,), r.dtype)

    def cond(carry):
        *_, g, j = carry
        return (j < restart) & (jnp.abs(g[j]) > ptol)

    def body(carry):
        V, R, cs, sn, g, j = carry
        h, v = _arnoldi_column(A, M, V, j)
        # the rotations of the earlier columns, then a new one zeroing h[j + 1]
        h = lax.fori_loop(0, restart, lambda i, h: jnp.where(
            i < j, _rotate(h, i, cs[i], sn[i]), h), h)
        c, s = _givens(h[j], h[j + 1])
        h, g = _rotate(h, j, c, s), _rotate(g, j, c, s)
        return V.at[j + 1].set(v), R.at[:, j].set(h), cs.at[j].set(c), sn.at[j].set(s), g, j + 1

    init = (V, R, cs, sn, g, jnp.asarray(0, jnp.int32))
    V, R, _, _, g, k = lax.while_loop(cond, body, init)
    # columns past k were never built: a unit diagonal and a zero right-hand side there
    used = jnp.arange(restart) < k
    U = jnp.where(used[None, :], R[:restart], jnp.eye(restart, dtype=r.dtype))
    y = lax_linalg.triangular_solve(U, jnp.where(used, g[:restart], 0)[:, None],
                                    left_side=True, lower=False)[:, 0]
    return x + jnp.matmul(y, V[:restart], precision=lax.Precision.HIGHEST)


_CYCLES = {"batched": _cycle_batched, "incremental": _cycle_incremental}


def gmres_flat(A, M, b, x0, *, tol, atol, restart, maxiter, solve_method):
    """x with A x ~= b, from x0 (A, M: maps of flat vectors)."""
    cycle = _CYCLES[solve_method]
    restart = max(1, min(restart, b.shape[0]))  # a Krylov space has at most n dimensions
    b_norm = norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    # the test |M(b - A x)| <= ptol in the preconditioned space, scaled as |b - A x| <= atol
    ratio = jnp.where(b_norm == 0, 1, atol / jnp.where(b_norm == 0, 1, b_norm))
    ptol = norm(M(b)) * jnp.minimum(1, ratio)

    def residual(x):
        r = M(b - A(x))
        return r, norm(r)

    def cond(carry):
        _, _, beta, k = carry
        return (beta > ptol) & (k < maxiter)

    def body(carry):
        x, r, beta, k = carry
        x = cycle(A, M, x, r, beta, restart, ptol)
        return (x, *residual(x), k + 1)

    return lax.while_loop(cond, body, (x0, *residual(x0), jnp.asarray(0, jnp.int32)))[0]
