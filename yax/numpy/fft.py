"""yax.numpy.fft: NumPy's discrete Fourier transforms on the `fft` primitive.

    import yax.numpy as jnp
    spectrum = jnp.fft.rfft(signal)
    power = jnp.abs(spectrum) ** 2

Every transform takes `n`/`s` (zero-pad or truncate the input along the transformed axes first),
`axis`/`axes`, and `norm`: "backward" (the default: no scaling forward, 1/n inverse), "ortho"
(1/sqrt(n) both ways) or "forward" (1/n forward, none inverse). Any number of axes works: XLA
transforms at most three at once, so more are done three at a time. Results are complex64 for
float32 input (complex128 for float64), as in JAX (NumPy always gives complex128).
"""

from __future__ import annotations

import operator

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.lax import shape as _shape
from yax.lax import slicing as _slicing
from yax.lax.elementwise import mul as _mul
from yax.lax.fft import fft as _lax_fft
from yax.numpy.creation import asarray
from yax.numpy.manipulation import moveaxis
from yax.numpy.rearrange import roll
from yax.numpy.ufuncs import conjugate
from yax.primitives.fft import FftType

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_INVERSE = (FftType.IFFT, FftType.IRFFT)
_NORMS = (None, "backward", "ortho", "forward")


def _resize(a, axis: int, size: int):
    """Zero-pad or truncate `a` to `size` along `axis` (NumPy's `n=`)."""
    have = a.shape[axis]
    if size == have:
        return a
    if size < have:
        return _slicing.slice_in_dim(a, 0, size, axis=axis)
    config = [(0, 0, 0)] * a.ndim
    config[axis] = (0, size - have, 0)
    return _shape.pad(a, np.zeros((), a.dtype).item(), config)


def _canonical_axes(func: str, ndim: int, s, axes) -> tuple:
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise errors.ShapeError(f"{func}: axis {ax} is out of range for an array of rank "
                                    f"{ndim}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise errors.ShapeError(f"{func}: axes {tuple(axes)} repeat an axis")
    if s is not None and len(s) != len(out):
        raise errors.ShapeError(f"{func}: s={tuple(s)} and axes={tuple(axes)} differ in length")
    return tuple(out)


def _scale(x, norm, fft_type: FftType, size: int):
    if norm not in _NORMS:
        raise errors.InvalidArgumentError(
            f"norm must be one of 'backward', 'ortho', 'forward' or None, got {norm!r}")
    inverse = fft_type in _INVERSE
    if norm in (None, "backward") or size == 0:
        return x
    if norm == "ortho":
        factor = np.sqrt(size) if inverse else 1 / np.sqrt(size)
    else:  # forward: the 1/n moves onto the forward transform
        factor = float(size) if inverse else 1.0 / size
    return _mul(x, float(factor))


def _fft_core(func: str, fft_type: FftType, a, s, axes, norm):
    a = asarray(a)
    if s is not None:
        s = tuple(operator.index(n) for n in ((s,) if np.ndim(s) == 0 else s))
        if any(n < 1 for n in s):
            raise errors.ShapeError(f"{func}: invalid number of data points {s}; each must be "
                                    f">= 1")
    axes = _canonical_axes(func, a.ndim, s, axes)
    if not axes:
        return a
    if s is None:
        s = tuple(a.shape[ax] for ax in axes)
        if fft_type is FftType.IRFFT:
            s = s[:-1] + (2 * (s[-1] - 1),)
    for ax, n in zip(axes, s, strict=True):
        want = n // 2 + 1 if fft_type is FftType.IRFFT and ax == axes[-1] else n
        a = _resize(a, ax, want)
    k = len(axes)
    x = moveaxis(a, axes, tuple(range(a.ndim - k, a.ndim)))
    x = _transform_trailing(x, fft_type, s)
    x = moveaxis(x, tuple(range(a.ndim - k, a.ndim)), axes)
    return _scale(x, norm, fft_type, int(np.prod(s)))


def _transform_trailing(x, fft_type: FftType, s: tuple):
    """Apply the transform over the trailing len(s) axes, at most three at a time. Real
    transforms act on the last axis: RFFT first (then complex FFTs), IRFFT last."""
    ndim = x.ndim
    if fft_type is FftType.IRFFT and len(s) > 3:
        for start in range(0, len(s) - 3, 3):
            x = _over(x, FftType.IFFT, s[start:min(start + 3, len(s) - 3)], ndim, start, s)
        return _lax_fft(x, FftType.IRFFT, s[-3:])
    if fft_type is FftType.RFFT and len(s) > 3:
        x = _lax_fft(x, FftType.RFFT, s[-3:])
        for start in range(0, len(s) - 3, 3):
            x = _over(x, FftType.FFT, s[start:min(start + 3, len(s) - 3)], ndim, start, s)
        return x
    if len(s) <= 3:
        return _lax_fft(x, fft_type, s)
    for start in range(0, len(s), 3):
        x = _over(x, fft_type, s[start:start + 3], ndim, start, s)
    return x


def _over(x, fft_type, lengths, ndim, start, s):
    """The transform of `lengths` over trailing-axis positions start.. of the len(s) trailing
    axes: moved to the end, transformed, moved back."""
    first = ndim - len(s) + start
    src = tuple(range(first, first + len(lengths)))
    dst = tuple(range(ndim - len(lengths), ndim))
    return moveaxis(_lax_fft(moveaxis(x, src, dst), fft_type, lengths), dst, src)


def _one_axis(func, fft_type):
    def transform(a, n=None, axis=-1, norm=None):
        return _fft_core(func, fft_type, a, None if n is None else (n,), (axis,), norm)
    transform.__name__ = transform.__qualname__ = func
    return transform


def _n_axes(func, fft_type, default_axes):
    def transform(a, s=None, axes=default_axes, norm=None):
        return _fft_core(func, fft_type, a, s, axes, norm)
    transform.__name__ = transform.__qualname__ = func
    return transform


_DOCS = {
    FftType.FFT: "the discrete Fourier transform",
    FftType.IFFT: "the inverse discrete Fourier transform",
    FftType.RFFT: "the discrete Fourier transform of real input (the n // 2 + 1 non-negative "
                  "frequencies of the last transformed axis)",
    FftType.IRFFT: "the inverse of rfft: real output from the non-negative frequencies (the "
                   "last transformed axis has n // 2 + 1 of them; n defaults to 2 * (m - 1))",
}


_RETURNS = {False: "complex array (complex64 for 32-bit input, as JAX)",
            True: "real array (float32 for complex64 input, as JAX)"}


def _document(f, fft_type, shape_words):
    f.__doc__ = (f"{_DOCS[fft_type][0].upper()}{_DOCS[fft_type][1:]}, {shape_words}.\n\n"
                 f"    Args: a (array), {'n, axis' if 'one' in shape_words else 's, axes'}, norm "
                 f"(see the yax.numpy.fft module docstring).\n    Returns: a "
                 f"{_RETURNS[fft_type is FftType.IRFFT]}.")
    return f


fft = _document(_one_axis("fft", FftType.FFT), FftType.FFT, "over one axis")
ifft = _document(_one_axis("ifft", FftType.IFFT), FftType.IFFT, "over one axis")
rfft = _document(_one_axis("rfft", FftType.RFFT), FftType.RFFT, "over one axis")
irfft = _document(_one_axis("irfft", FftType.IRFFT), FftType.IRFFT, "over one axis")
fft2 = _document(_n_axes("fft2", FftType.FFT, (-2, -1)), FftType.FFT, "over two axes")
ifft2 = _document(_n_axes("ifft2", FftType.IFFT, (-2, -1)), FftType.IFFT, "over two axes")
rfft2 = _document(_n_axes("rfft2", FftType.RFFT, (-2, -1)), FftType.RFFT, "over two axes")
irfft2 = _document(_n_axes("irfft2", FftType.IRFFT, (-2, -1)), FftType.IRFFT, "over two axes")
fftn = _document(_n_axes("fftn", FftType.FFT, None), FftType.FFT, "over several axes")
ifftn = _document(_n_axes("ifftn", FftType.IFFT, None), FftType.IFFT, "over several axes")
rfftn = _document(_n_axes("rfftn", FftType.RFFT, None), FftType.RFFT, "over several axes")
irfftn = _document(_n_axes("irfftn", FftType.IRFFT, None), FftType.IRFFT, "over several axes")


def _swap_norm(norm):
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry, given by its non-negative frequencies `a`;
    the result is real, of length n (default 2 * (m - 1)). Inverse of ihfft.

    Args: a, n, axis, norm as for irfft. Returns: a real array.
    """
    a = asarray(a)
    return _fft_core("hfft", FftType.IRFFT, conjugate(a), None if n is None else (n,), (axis,),
                     _swap_norm(norm))


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: the n // 2 + 1 non-negative frequencies of the Hermitian-symmetric
    spectrum whose FFT is the real signal `a`.

    Args: a (real), n, axis, norm as for rfft. Returns: a complex array.
    """
    return conjugate(_fft_core("ihfft", FftType.RFFT, a, None if n is None else (n,), (axis,),
                               _swap_norm(norm)))


def _check_window(func: str, n):
    try:
        n = operator.index(n)
    except TypeError:
        raise errors.DTypeError(f"{func}: n must be a Python int, got {n!r}") from None
    return n


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an FFT of length n with sample spacing d:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n), in the default float type.

    Example: `jnp.fft.fftfreq(4)` is `[0., 0.25, -0.5, -0.25]`.
    """
    del device
    n = _check_window("fftfreq", n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies(k, n, d, dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an rfft of length n: [0, 1, ..., n // 2] / (d * n)."""
    del device
    n = _check_window("rfftfreq", n)
    return _frequencies(np.arange(0, n // 2 + 1), n, d, dtype)


def _frequencies(k, n, d, dtype):
    k = asarray(k, dtype=dtypes.canonicalize(np.float64) if dtype is None else dtype)
    return k / (d * n) if n else k


def _shifts(x, axes, sign: int):
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    shift = tuple(sign * (x.shape[ax] // 2) for ax in axes)
    return roll(x, shift, tuple(axes))


def fftshift(x, axes=None):
    """Move the zero frequency to the centre: roll each of `axes` (default all) by n // 2."""
    return _shifts(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift: roll each of `axes` (default all) by -(n // 2)."""
    return _shifts(x, axes, -1)
