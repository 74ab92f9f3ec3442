"""yax.scipy.fft: discrete cosine transforms (type 2 and its inverse), as jax.scipy.fft.

Computed with one complex FFT of length n (Makhoul's reordering: even samples, then odd ones
reversed), so they are O(n log n) and differentiable like any yax.numpy function.
"""

from __future__ import annotations

import math

import numpy as np

import yax.numpy as jnp

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(type: int, norm) -> None:
    if type != 2:
        raise NotImplementedError(f"only DCT type 2 is implemented (as in jax), got type={type}")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"norm must be None, 'backward' or 'ortho', got {norm!r}")


def _resize(x, n, axis: int):
    if n is None or n == x.shape[axis]:
        return x
    if n < x.shape[axis]:
        return jnp.take(x, jnp.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - x.shape[axis])
    return jnp.pad(x, pad)


def _ortho_scale(n: int) -> np.ndarray:
    scale = np.full(n, math.sqrt(1 / (2 * n)))
    scale[0] = math.sqrt(1 / (4 * n))
    return scale


def _dct_last(x, norm):
    n = x.shape[-1]
    v = jnp.concatenate([x[..., 0::2], jnp.flip(x[..., 1::2], axis=-1)], axis=-1)
    k = np.arange(n)
    twiddle = np.exp(-1j * np.pi * k / (2 * n))
    out = 2 * jnp.real(jnp.fft.fft(v, axis=-1) * twiddle.astype(np.complex64))
    if norm == "ortho":
        out = out * _ortho_scale(n).astype(np.float32)
    return out.astype(x.dtype) if jnp.issubdtype(x.dtype, jnp.floating) else out


def _idct_last(y, norm):
    n = y.shape[-1]
    if norm == "ortho":
        y = y / _ortho_scale(n).astype(np.float32)
    k = np.arange(n)
    # V_k = (X_k - i X_{n-k}) e^{i pi k / 2n} / 2, with X_n = 0, undoes _dct_last's twiddle
    shifted = jnp.concatenate([jnp.zeros_like(y[..., :1]), jnp.flip(y[..., 1:], axis=-1)],
                              axis=-1)
    twiddle = (np.exp(1j * np.pi * k / (2 * n)) / 2).astype(np.complex64)
    v = jnp.real(jnp.fft.ifft((y - 1j * shifted) * twiddle, axis=-1))
    half = (n + 1) // 2
    x = jnp.zeros_like(v)
    x = x.at[..., 0::2].set(v[..., :half])
    x = x.at[..., 1::2].set(jnp.flip(v[..., half:], axis=-1))
    return x.astype(y.dtype) if jnp.issubdtype(y.dtype, jnp.floating) else x


def _along(fn, x, axis: int, norm):
    x = jnp.moveaxis(x, axis, -1)
    return jnp.moveaxis(fn(x, norm), -1, axis)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The type-2 discrete cosine transform of `x` along `axis` (as scipy.fft.dct)."""
    _check(type, norm)
    x = _resize(jnp.asarray(x), n, axis)
    return _along(_dct_last, x, axis, norm)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of `dct` (a scaled type-3 DCT), as scipy.fft.idct."""
    _check(type, norm)
    x = _resize(jnp.asarray(x), n, axis)
    return _along(_idct_last, x, axis, norm)


def _axes_and_sizes(x, s, axes):
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(axes)
    sizes = (None,) * len(axes) if s is None else tuple(s)
    if len(sizes) != len(axes):
        raise ValueError("s and axes must have the same length")
    return axes, sizes


def dctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):
    """`dct` over each of `axes` (all by default), as scipy.fft.dctn."""
    _check(type, norm)
    x = jnp.asarray(x)
    for axis, n in zip(*_axes_and_sizes(x, s, axes), strict=True):
        x = dct(x, n=n, axis=axis, norm=norm)
    return x


def idctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):
    """The inverse of `dctn`, as scipy.fft.idctn."""
    _check(type, norm)
    x = jnp.asarray(x)
    for axis, n in zip(*_axes_and_sizes(x, s, axes), strict=True):
        x = idct(x, n=n, axis=axis, norm=norm)
    return x
