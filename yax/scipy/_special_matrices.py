"""yax.scipy.linalg's special matrices, built from their definitions: block_diag, toeplitz,
circulant, hankel, companion, hilbert and invhilbert, pascal and invpascal, dft, hadamard,
helmert, leslie, fiedler, fiedler_companion and convolution_matrix.
"""

from __future__ import annotations

import math
import operator

import numpy as np

import yax.numpy as jnp
from yax import errors

__all__ = ["block_diag", "toeplitz", "circulant", "hankel", "companion", "hilbert", "pascal",
           "dft", "hadamard", "helmert", "leslie", "fiedler", "convolution_matrix", "invhilbert",
           "invpascal", "fiedler_companion"]


def block_diag(*arrs):
    """The block-diagonal matrix of the given arrays (scalars and 1-D arrays count as 1 x n)."""
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
    c = jnp.asarray(c)
    r = jnp.conj(c) if r is None else jnp.asarray(r)
    c, r = jnp.atleast_1d(c), jnp.atleast_1d(r)
    m, n = c.shape[-1], r.shape[-1]
    values = jnp.concatenate([jnp.flip(r[..., 1:], -1), c], axis=-1)  # r[n-1..1], c[0..m-1]
    index = (np.arange(m)[:, None] - np.arange(n)[None, :]) + (n - 1)
    return values[..., index]


def circulant(c):
    """The circulant matrix whose first column is c (batched over leading dims)."""
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., index]


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (default zeros); r[0] is ignored."""
    c = jnp.ravel(jnp.asarray(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
    m, n = c.shape[0], r.shape[0]
    values = jnp.concatenate([c, r[1:].astype(jnp.result_type(c, r))])
    index = np.arange(m)[:, None] + np.arange(n)[None, :]
    return values[index]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest power first):
    first row -a[1:] / a[0], ones below the diagonal."""
    a = jnp.ravel(jnp.asarray(a))
    if a.shape[0] < 2:
        raise errors.ShapeError("companion: a needs at least two coefficients")
    n = a.shape[0] - 1
    top = (-a[1:] / a[0])[None, :]
    return jnp.concatenate([top, jnp.eye(n - 1, n, dtype=top.dtype)], axis=0)


def hilbert(n: int):
    """The n x n Hilbert matrix h[i, j] = 1 / (i + j + 1)."""
    i = np.arange(n)
    return jnp.asarray(1.0 / (i[:, None] + i[None, :] + 1.0), dtype=jnp.result_type(float))


def pascal(n: int, kind: str | None = None):
    """The n x n Pascal matrix: 'symmetric' (default), 'lower' or 'upper'."""
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
    if scale not in (None, "n", "sqrtn"):
        raise errors.InvalidArgumentError(f"dft: scale must be None, 'n' or 'sqrtn', got "
                                          f"{scale!r}")
    k = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(k, k) / n)
    m = m / n if scale == "n" else m / np.sqrt(n) if scale == "sqrtn" else m
    return jnp.asarray(m, dtype=dtype or jnp.result_type(complex))


def hadamard(n: int, dtype=int):
    """The n x n Sylvester-Hadamard matrix of +1/-1 (n a power of two)."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise errors.InvalidArgumentError(f"hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def helmert(n: int, full: bool = False):
    """The Helmert matrix of order n (orthogonal); without `full`, its last n - 1 rows."""
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n, dtype=np.float64))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1.0
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return jnp.asarray(h if full else h[1:], dtype=jnp.result_type(float))


def leslie(f, s):
    """The Leslie matrix of fecundities f (n,) and survival rates s (n - 1,)."""
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
    a = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def convolution_matrix(a, n: int, mode: str = "full"):
    """The matrix of 1-D convolution with a: convolution_matrix(a, n, mode) @ v equals
    jnp.convolve(a, v, mode) for v of length n."""
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


def invhilbert(n: int, exact: bool = False):
    """The inverse of the n x n Hilbert matrix, from its closed form (integers)."""
    del exact
    inv = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            inv[i, j] = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return jnp.asarray(inv, dtype=jnp.result_type(float))


def invpascal(n: int, kind: str = "symmetric", exact: bool = False):
    """The inverse of pascal(n, kind): the lower factor's inverse is (-1)^(i-j) C(i, j)."""
    del exact
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    lower = np.vectorize(lambda a, b: (-1) ** (a - b) * math.comb(a, b) if a >= b else 0)(i, j)
    lower = lower.astype(np.float64)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.T @ lower}.get(kind)
    if out is None:
        raise errors.InvalidArgumentError(f"invpascal: kind must be 'symmetric', 'lower' or "
                                          f"'upper', got {kind!r}")
    return jnp.asarray(out, dtype=jnp.result_type(float))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial a (highest power first): pentadiagonal,
    with the same eigenvalues (the roots) as companion(a)."""
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
