"""yax.scipy.linalg's decompositions beyond yax.numpy.linalg's: the Schur and Hessenberg forms
(LAPACK gees / gehrd), rsf2csf, qr_multiply, eigh_tridiagonal (the dense tridiagonal matrix
through eigh), and solve_sylvester (the Kronecker-product system, fine for the small matrices it
is usually called on).
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import errors
from yax.core.trace import bind
from yax.numpy.linalg._util import as_matrix
from yax.primitives.linalg.schur import hessenberg_p, schur_p

__all__ = ["eigh_tridiagonal", "schur", "rsf2csf", "hessenberg", "qr_multiply", "solve_sylvester"]


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (and eigenvectors) of the symmetric tridiagonal matrix with diagonal d and
    off-diagonal e. select='a' (all) and 'i' (eigenvalues select_range[0]..[1] by index, as
    SciPy) are supported."""
    del tol, key
    d, e = jnp.asarray(d), jnp.asarray(e)
    n = d.shape[-1]
    if e.shape[-1] != n - 1:
        raise errors.ShapeError(f"eigh_tridiagonal: e must have n - 1 = {n - 1} entries, got "
                                f"{e.shape}")
    off = jnp.pad(e, (0, 1))
    m = (jnp.diag(d) + jnp.diag(off[:-1], 1) + jnp.diag(jnp.conj(off[:-1]), -1))
    w, v = jnp.linalg.eigh(m)
    if select == "i":
        lo, hi = (int(i) for i in select_range)
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    elif select != "a":
        raise errors.InvalidArgumentError(f"eigh_tridiagonal: select must be 'a' or 'i', got "
                                          f"{select!r}")
    return w if eigvals_only else (w, v)


def schur(a, output: str = "real"):
    """The Schur decomposition a = z t z^H (CPU): t upper triangular for output='complex',
    quasi-triangular with 2 x 2 blocks for conjugate pairs of a real matrix for 'real'.

    Returns:
      (t, z). Not differentiable (as in JAX).
    """
    if output not in ("real", "complex"):
        raise errors.InvalidArgumentError(f"schur: output must be 'real' or 'complex', got "
                                          f"{output!r}")
    a = as_matrix("schur", a, square=True)
    if output == "complex":
        a = jnp.asarray(a).astype(jnp.result_type(a.dtype, np.complex64))
    t, z = bind(schur_p, a)
    return t, z


def rsf2csf(T, Z, check_finite: bool = True):
    """Turn a real Schur form (t, z) into the complex one, rotating each 2 x 2 block of a
    conjugate pair into triangular form (Givens rotations, from the bottom up, as SciPy)."""
    del check_finite
    t, z = jnp.asarray(T), jnp.asarray(Z)
    cdt = jnp.result_type(t.dtype, z.dtype, np.complex64)
    t, z = t.astype(cdt), z.astype(cdt)
    n = t.shape[-1]
    for m in range(n - 1, 0, -1):
        block = t[m - 1:m + 1, m - 1:m + 1]
        sub = t[m, m - 1]
        tr, det = block[0, 0] + block[1, 1], block[0, 0] * block[1, 1] - block[0, 1] * block[1, 0]
        mu = tr / 2 + jnp.sqrt(tr * tr / 4 - det)
        r = jnp.sqrt(jnp.abs(mu - t[m, m]) ** 2 + jnp.abs(sub) ** 2)
        active = jnp.abs(sub) > 0
        safe_r = jnp.where(active, r, 1.0)
        c = jnp.where(active, (mu - t[m, m]) / safe_r, 1.0)
        s = jnp.where(active, sub / safe_r, 0.0)
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        gh = jnp.conj(g.T)
        t = t.at[m - 1:m + 1, m - 1:].set(g @ t[m - 1:m + 1, m - 1:])
        t = t.at[:m + 1, m - 1:m + 1].set(t[:m + 1, m - 1:m + 1] @ gh)
        z = z.at[:, m - 1:m + 1].set(z[:, m - 1:m + 1] @ gh)
        t = t.at[m, m - 1].set(0.0)
    return t, z


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The upper Hessenberg form h = q^H a q (CPU; LAPACK gehrd), and q when calc_q."""
    del overwrite_a, check_finite
    a = as_matrix("hessenberg", a, square=True)
    packed, taus = bind(hessenberg_p, a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    n = packed.shape[-1]
    q = jnp.eye(n, dtype=packed.dtype)
    for j in range(n - 2):  # q = H_0 H_1 ... with H_j = I - tau_j v_j v_j^H
        v = jnp.concatenate([jnp.zeros((j + 1,), packed.dtype), jnp.ones((1,), packed.dtype),
                             packed[j + 2:, j]])
        q = q - (q @ v)[:, None] * (taus[j] * jnp.conj(v))[None, :]
    return h, q


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """(q @ c, r) for mode='left' or (c @ q, r) for 'right', with the economic QR of a."""
    del overwrite_a, overwrite_c
    if pivoting:
        raise errors.InvalidArgumentError("qr_multiply: pivoting is not supported")
    if mode not in ("left", "right"):
        raise errors.InvalidArgumentError(f"qr_multiply: mode must be 'left' or 'right', got "
                                          f"{mode!r}")
    q, r = jnp.linalg.qr(a, mode="reduced")
    c = jnp.asarray(c)
    if conjugate:
        q = jnp.conj(q)
    if mode == "left":
        return q @ c, r
    return (c @ q), r


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """X with A X + X B = C, from the Kronecker system (I kron A + B^T kron I) vec(X) = vec(C)
    (column-major vec)."""
    del method, tol
    a, b, c = jnp.asarray(A), jnp.asarray(B), jnp.asarray(C)
    m, n = a.shape[-1], b.shape[-1]
    if c.shape[-2:] != (m, n):
        raise errors.ShapeError(f"solve_sylvester: C must be {m} x {n} for A {a.shape} and B "
                                f"{b.shape}, got {c.shape}")
    dtype = jnp.result_type(a, b, c, 1.0)
    k = jnp.kron(jnp.eye(n, dtype=dtype), a) + jnp.kron(b.T, jnp.eye(m, dtype=dtype))
    x = jnp.linalg.solve(k, c.T.reshape(m * n))
    return x.reshape(n, m).T
