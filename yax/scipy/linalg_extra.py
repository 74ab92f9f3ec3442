"""More of yax.scipy.linalg: special matrices (block_diag, toeplitz, circulant, hankel,
companion, hilbert, pascal, dft, hadamard, helmert, leslie, fiedler, convolution_matrix) and
matrix functions built on the decompositions (polar, sqrtm, funm, eigh_tridiagonal,
expm_frechet, solve_sylvester).

Differences from SciPy: sqrtm and funm go through the eigendecomposition (jnp.linalg.eig, CPU
only) rather than a Schur form, so they need a diagonalisable matrix and return complex results;
eigh_tridiagonal forms the dense tridiagonal matrix and calls eigh; solve_sylvester solves the
Kronecker-product system (fine for the small matrices it is usually called on).
"""

from __future__ import annotations

import math
import operator

import numpy as np

import yax.numpy as jnp
from yax import errors
from yax.core.trace import bind
from yax.numpy.linalg._util import as_matrix
from yax.primitives.linalg.schur import hessenberg_p, schur_p

__all__ = ["block_diag", "toeplitz", "circulant", "hankel", "companion", "hilbert", "pascal",
           "dft", "hadamard", "helmert", "leslie", "fiedler", "convolution_matrix", "polar",
           "sqrtm", "funm", "eigh_tridiagonal", "expm_frechet", "solve_sylvester", "schur",
           "rsf2csf", "hessenberg", "invhilbert", "invpascal", "qr_multiply",
           "fiedler_companion"]


def _jnp():
    return jnp


# --- special matrices ---------------------------------------------------------------------------

def block_diag(*arrs):
    """The block-diagonal matrix of the given arrays (scalars and 1-D arrays count as 1 x n)."""
    jnp = _jnp()
    if not arrs:
        return jnp.zeros((1, 0))
    blocks = [jnp.atleast_2d(jnp.asarray(a)) for a in arrs]
    if any(b.ndim != 2 for b in blocks):
        raise errors.ShapeError("block_diag: the arguments must have rank <= 2")
    dtype = jnp.result_type(*blocks)
    cols = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        rows.append(jnp.pad(b.astype(dtype), ((0, 0), (start, cols - start - b.shape[1]))))
        start += b.shape[1]
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (default conj(c)); r[0] is
    ignored. Batched over leading dims, as in JAX."""
    jnp = _jnp()
    c = jnp.asarray(c)
    r = jnp.conj(c) if r is None else jnp.asarray(r)
    c, r = jnp.atleast_1d(c), jnp.atleast_1d(r)
    m, n = c.shape[-1], r.shape[-1]
    values = jnp.concatenate([jnp.flip(r[..., 1:], -1), c], axis=-1)  # r[n-1..1], c[0..m-1]
    index = (np.arange(m)[:, None] - np.arange(n)[None, :]) + (n - 1)
    return values[..., index]


def circulant(c):
    """The circulant matrix whose first column is c (batched over leading dims)."""
    jnp = _jnp()
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., index]


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (default zeros); r[0] is ignored."""
    jnp = _jnp()
    c = jnp.ravel(jnp.asarray(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
    m, n = c.shape[0], r.shape[0]
    values = jnp.concatenate([c, r[1:].astype(jnp.result_type(c, r))])
    index = np.arange(m)[:, None] + np.arange(n)[None, :]
    return values[index]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest power first):
    first row -a[1:] / a[0], ones below the diagonal."""
    jnp = _jnp()
    a = jnp.ravel(jnp.asarray(a))
    if a.shape[0] < 2:
        raise errors.ShapeError("companion: a needs at least two coefficients")
    n = a.shape[0] - 1
    top = (-a[1:] / a[0])[None, :]
    return jnp.concatenate([top, jnp.eye(n - 1, n, dtype=top.dtype)], axis=0)


def hilbert(n: int):
    """The n x n Hilbert matrix h[i, j] = 1 / (i + j + 1)."""
    jnp = _jnp()
    i = np.arange(n)
    return jnp.asarray(1.0 / (i[:, None] + i[None, :] + 1.0), dtype=jnp.result_type(float))


def pascal(n: int, kind: str | None = None):
    """The n x n Pascal matrix: 'symmetric' (default), 'lower' or 'upper'."""
    jnp = _jnp()
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise errors.InvalidArgumentError(f"pascal: kind must be 'symmetric', 'lower' or "
                                          f"'upper', got {kind!r}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    if kind == "symmetric":
        values = np.vectorize(math.comb)(i + j, j)
    else:
        values = np.vectorize(lambda a, b: math.comb(a, b) if a >= b else 0)(i, j)
        values = values if kind == "lower" else values.T
    return jnp.asarray(values.astype(np.float64), dtype=jnp.result_type(float))


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The n x n DFT matrix m[j, k] = exp(-2 pi i j k / n), scaled by 1/n ('n') or
    1/sqrt(n) ('sqrtn'); m @ x == jnp.fft.fft(x)."""
    jnp = _jnp()
    if scale not in (None, "n", "sqrtn"):
        raise errors.InvalidArgumentError(f"dft: scale must be None, 'n' or 'sqrtn', got "
                                          f"{scale!r}")
    k = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(k, k) / n)
    m = m / n if scale == "n" else m / np.sqrt(n) if scale == "sqrtn" else m
    return jnp.asarray(m, dtype=dtype or jnp.result_type(complex))


def hadamard(n: int, dtype=int):
    """The n x n Sylvester-Hadamard matrix of +1/-1 (n a power of two)."""
    jnp = _jnp()
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise errors.InvalidArgumentError(f"hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def helmert(n: int, full: bool = False):
    """The Helmert matrix of order n (orthogonal); without `full`, its last n - 1 rows."""
    jnp = _jnp()
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n, dtype=np.float64))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1.0
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return jnp.asarray(h if full else h[1:], dtype=jnp.result_type(float))


def leslie(f, s):
    """The Leslie matrix of fecundities f (n,) and survival rates s (n - 1,)."""
    jnp = _jnp()
    f, s = jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s))
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise errors.ShapeError(f"leslie: s must have one entry fewer than f, got {s.shape} "
                                f"and {f.shape}")
    dtype = jnp.result_type(f, s, 1.0)
    sub = jnp.pad(jnp.eye(n - 1, dtype=dtype) * s[..., None, :], [(0, 0)] * (s.ndim - 1)
                  + [(0, 0), (0, 1)])
    return jnp.concatenate([f[..., None, :].astype(dtype), sub], axis=-2)


def fiedler(a):
    """The symmetric Fiedler matrix f[i, j] = |a[i] - a[j]|."""
    jnp = _jnp()
    a = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def convolution_matrix(a, n: int, mode: str = "full"):
    """The matrix of 1-D convolution with a: convolution_matrix(a, n, mode) @ v equals
    jnp.convolve(a, v, mode) for v of length n."""
    jnp = _jnp()
    a = jnp.ravel(jnp.asarray(a))
    m = a.shape[0]
    if mode not in ("full", "same", "valid"):
        raise errors.InvalidArgumentError(f"convolution_matrix: mode must be 'full', 'same' or "
                                          f"'valid', got {mode!r}")
    full_rows = m + n - 1
    i, j = np.arange(full_rows)[:, None], np.arange(n)[None, :]
    k = i - j
    inside = (k >= 0) & (k < m)
    padded = jnp.concatenate([a, jnp.zeros((1,), a.dtype)])
    out = padded[np.where(inside, k, m)]
    if mode == "same":
        size = max(m, n)
        start = (full_rows - size) // 2
        out = out[start:start + size]
    elif mode == "valid":
        size = max(m, n) - min(m, n) + 1
        start = min(m, n) - 1
        out = out[start:start + size]
    return out


# --- matrix functions ---------------------------------------------------------------------------

def polar(a, side: str = "right", *, method: str = "svd", eps=None, max_iterations=None):
    """The polar decomposition a = u p ('right') or a = p u ('left'), u unitary (with
    orthonormal columns) and p Hermitian positive semidefinite, by the SVD (JAX defaults to
    QDWH; both give the same factors up to rounding).

    Returns:
      (u, p).
    """
    del eps, max_iterations
    jnp = _jnp()
    if side not in ("right", "left"):
        raise errors.InvalidArgumentError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("svd", "qdwh"):
        raise errors.InvalidArgumentError(f"polar: method must be 'svd' or 'qdwh', got "
                                          f"{method!r}")
    w, s, vh = jnp.linalg.svd(a, full_matrices=False)
    u = w @ vh
    if side == "right":
        p = (jnp.conj(jnp.swapaxes(vh, -1, -2)) * s[..., None, :]) @ vh
    else:
        p = (w * s[..., None, :]) @ jnp.conj(jnp.swapaxes(w, -1, -2))
    return u, p


def funm(A, func, disp: bool = True):
    """The matrix function func(A) = V diag(func(w)) V^-1 of a diagonalisable matrix (func acts
    elementwise on the complex eigenvalues w). Complex result. With disp=False, returns
    (result, an error estimate: the relative residual of the eigendecomposition)."""
    jnp = _jnp()
    a = jnp.asarray(A)
    w, v = jnp.linalg.eig(a)
    result = jnp.linalg.solve(jnp.swapaxes(v, -1, -2),
                              jnp.swapaxes(v * func(w)[..., None, :], -1, -2))
    result = jnp.swapaxes(result, -1, -2)
    if disp:
        return result
    err = jnp.linalg.norm(a @ v - v * w[..., None, :]) / jnp.maximum(jnp.linalg.norm(a), 1e-300)
    return result, err


def sqrtm(A, blocksize: int = 1):
    """A principal square root of a diagonalisable matrix (complex), via its eigenvalues."""
    del blocksize
    return funm(A, _jnp().sqrt)


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (and eigenvectors) of the symmetric tridiagonal matrix with diagonal d and
    off-diagonal e. select='a' (all) and 'i' (eigenvalues select_range[0]..[1] by index, as
    SciPy) are supported."""
    del tol, key
    jnp = _jnp()
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


def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """The Frechet derivative of expm at A in the direction E (and expm(A)), from the block
    identity expm([[A, E], [0, A]]) = [[expm(A), L(A, E)], [0, expm(A)]]."""
    del method
    jnp = _jnp()
    from yax.scipy.linalg import expm
    a, e = jnp.asarray(A), jnp.asarray(E)
    if a.shape != e.shape or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise errors.ShapeError(f"expm_frechet needs square A and E of one shape, got "
                                f"{a.shape} and {e.shape}")
    n = a.shape[-1]
    zero = jnp.zeros_like(a)
    big = jnp.concatenate([jnp.concatenate([a, e], -1), jnp.concatenate([zero, a], -1)], -2)
    out = expm(big)
    frechet = out[..., :n, n:]
    return (out[..., :n, :n], frechet) if compute_expm else frechet


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """X with A X + X B = C, from the Kronecker system (I kron A + B^T kron I) vec(X) = vec(C)
    (column-major vec)."""
    del method, tol
    jnp = _jnp()
    a, b, c = jnp.asarray(A), jnp.asarray(B), jnp.asarray(C)
    m, n = a.shape[-1], b.shape[-1]
    if c.shape[-2:] != (m, n):
        raise errors.ShapeError(f"solve_sylvester: C must be {m} x {n} for A {a.shape} and B "
                                f"{b.shape}, got {c.shape}")
    dtype = jnp.result_type(a, b, c, 1.0)
    k = jnp.kron(jnp.eye(n, dtype=dtype), a) + jnp.kron(b.T, jnp.eye(m, dtype=dtype))
    x = jnp.linalg.solve(k, c.T.reshape(m * n))
    return x.reshape(n, m).T


# --- Schur and Hessenberg forms (LAPACK gees / gehrd) -------------------------------------------

def schur(a, output: str = "real"):
    """The Schur decomposition a = z t z^H (CPU): t upper triangular for output='complex',
    quasi-triangular with 2 x 2 blocks for conjugate pairs of a real matrix for 'real'.

    Returns:
      (t, z). Not differentiable (as in JAX).
    """
    jnp = _jnp()
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
    jnp = _jnp()
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
    jnp = _jnp()
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


# --- more special matrices ----------------------------------------------------------------------

def invhilbert(n: int, exact: bool = False):
    """The inverse of the n x n Hilbert matrix, from its closed form (integers)."""
    del exact
    jnp = _jnp()
    inv = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            inv[i, j] = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return jnp.asarray(inv, dtype=jnp.result_type(float))


def invpascal(n: int, kind: str = "symmetric", exact: bool = False):
    """The inverse of pascal(n, kind): the lower factor's inverse is (-1)^(i-j) C(i, j)."""
    del exact
    jnp = _jnp()
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    lower = np.vectorize(lambda a, b: (-1) ** (a - b) * math.comb(a, b) if a >= b else 0)(i, j)
    lower = lower.astype(np.float64)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.T @ lower}.get(kind)
    if out is None:
        raise errors.InvalidArgumentError(f"invpascal: kind must be 'symmetric', 'lower' or "
                                          f"'upper', got {kind!r}")
    return jnp.asarray(out, dtype=jnp.result_type(float))


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """(q @ c, r) for mode='left' or (c @ q, r) for 'right', with the economic QR of a."""
    del overwrite_a, overwrite_c
    jnp = _jnp()
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


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial a (highest power first): pentadiagonal,
    with the same eigenvalues (the roots) as companion(a)."""
    jnp = _jnp()
    a = jnp.atleast_1d(jnp.asarray(a))
    if a.shape[-1] <= 2:
        return (-(a[..., -1:] / a[..., :1]))[..., None] if a.shape[-1] == 2 else \
            jnp.zeros((0,), a.dtype)
    b = a / a[..., :1]
    n = a.shape[-1] - 1
    even, odd = np.arange(0, n, 2), np.arange(3, n, 2)
    rows = np.concatenate([[0, 1], even[even + 1 < n], even[even + 2 < n], even[even >= 2], odd])
    cols = np.concatenate([[0, 0], even[even + 1 < n] + 1, even[even + 2 < n] + 2,
                           even[even >= 2] - 1, odd - 2])
    ones = jnp.ones(b.shape[:-1] + (1,), b.dtype)
    values = jnp.concatenate([-b[..., 1:2], ones, -b[..., even[even + 1 < n] + 2],
                              jnp.broadcast_to(ones, b.shape[:-1] + (int((even + 2 < n).sum()),)),
                              -b[..., even[even >= 2] + 1],
                              jnp.broadcast_to(ones, b.shape[:-1] + (len(odd),))], axis=-1)
    out = jnp.zeros(b.shape[:-1] + (n, n), b.dtype)
    return out.at[..., rows, cols].set(values)
