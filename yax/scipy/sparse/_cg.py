"""Preconditioned conjugate gradients on flat vectors (A Hermitian positive definite).

As a Python loop (M approximates A^-1; stop when |r| <= max(tol |b|, atol)):

    r = b - A x;  z = M r;  p = z;  gamma = <r, z>
    while |r| > max(tol |b|, atol) and k < maxiter:
        q = A p;  alpha = gamma / <p, q>
        x += alpha p;  r -= alpha q;  z = M r
        gamma, old = <r, z>, gamma
        p = z + (gamma / old) p;  k += 1
"""

from __future__ import annotations

import yax.numpy as jnp
from yax import lax
from yax.scipy.sparse._vectors import dot, norm2


def cg_flat(A, M, b, x0, *, tol, atol, maxiter):
    """x with A x ~= b, from x0 (A, M: maps of flat vectors)."""
    threshold = jnp.maximum(jnp.square(tol) * norm2(b), jnp.square(atol))
    r = b - A(x0)
    z = M(r)

    def cond(carry):
        _, r, _, _, _, k = carry
        return (norm2(r) > threshold) & (k < maxiter)

    def body(carry):
        x, r, z, p, gamma, k = carry
        q = A(p)
        alpha = gamma / dot(p, q)
        x = x + alpha * p
        r = r - alpha * q
        z = M(r)
        new_gamma = dot(r, z)
        p = z + (new_gamma / gamma) * p
        return x, r, z, p, new_gamma, k + 1

    init = (x0, r, z, z, dot(r, z), jnp.asarray(0, jnp.int32))
    return lax.while_loop(cond, body, init)[0]
