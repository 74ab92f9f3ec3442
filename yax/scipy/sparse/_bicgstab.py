"""Preconditioned BiCGSTAB on flat vectors (any nonsingular A), right-preconditioned by M.

As a Python loop (rho, alpha, omega start at 1, p and v at 0, r_hat = r at the start):

    while |r| > max(tol |b|, atol) and k < maxiter and no breakdown (rho == 0 or omega == 0):
        rho, old = <r_hat, r>, rho
        p = r + (rho / old) (alpha / omega) (p - omega v)
        p_hat = M p;  v = A p_hat;  alpha = rho / <r_hat, v>
        s = r - alpha v;  s_hat = M s;  t = A s_hat
        omega = <t, s> / <t, t>            (0 when t == 0, i.e. s == 0: converged)
        x += alpha p_hat + omega s_hat;  r = s - omega t;  k += 1
"""

from __future__ import annotations

import yax.numpy as jnp
from yax import lax
from yax.scipy.sparse._vectors import dot, norm2


def _safe_divide(num, den):
    return jnp.where(den == 0, jnp.zeros_like(num), num / jnp.where(den == 0, 1, den))


def bicgstab_flat(A, M, b, x0, *, tol, atol, maxiter):
    """x with A x ~= b, from x0 (A, M: maps of flat vectors)."""
    threshold = jnp.maximum(jnp.square(tol) * norm2(b), jnp.square(atol))
    r = b - A(x0)
    r_hat = r
    one = jnp.ones((), r.dtype)

    def cond(carry):
        _, r, _, _, rho, _, omega, k = carry
        broken = (rho == 0) | (omega == 0)
        return (norm2(r) > threshold) & (k < maxiter) & ~broken

    def body(carry):
        x, r, p, v, rho, alpha, omega, k = carry
        new_rho = dot(r_hat, r)
        p = r + (new_rho / rho) * (alpha / omega) * (p - omega * v)
        p_hat = M(p)
        v = A(p_hat)
        alpha = _safe_divide(new_rho, dot(r_hat, v))
        s = r - alpha * v
        s_hat = M(s)
        t = A(s_hat)
        omega = _safe_divide(dot(t, s), dot(t, t))
        x = x + alpha * p_hat + omega * s_hat
        r = s - omega * t
        # a converged step (s == 0) leaves omega 0: keep the loop's breakdown test for real ones
        omega = jnp.where(norm2(s) == 0, one, omega)
        return x, r, p, v, new_rho, alpha, omega, k + 1

    zeros = jnp.zeros_like(r)
    init = (x0, r, zeros, zeros, one, one, one, jnp.asarray(0, jnp.int32))
    return lax.while_loop(cond, body, init)[0]
