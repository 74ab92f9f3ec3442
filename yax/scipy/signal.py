"""yax.scipy.signal: convolution and correlation of N-d arrays, direct or by FFT, and detrend.

    import yax.scipy.signal as signal
    smoothed = signal.convolve(x, jnp.ones(5) / 5, mode="same")

`mode` is "full" (every overlap, size n + k - 1), "same" (the size of in1, centred on "full") or
"valid" (only complete overlaps, size n - k + 1; the larger input slides over the smaller, as
SciPy does). The direct method is an XLA convolution; `method="fft"` and `fftconvolve` go through
yax.numpy.fft. Inputs are promoted to a common inexact dtype; complex inputs are supported.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.lax.conv import conv_general_dilated
from yax.lax.shape import expand_dims as _expand_dims
from yax.lax.shape import rev as _rev
from yax.lax.shape import squeeze as _squeeze
from yax.numpy import fft as _fft
from yax.numpy._promote import promote_dtypes_inexact
from yax.numpy.creation import asarray
from yax.numpy.ufuncs import conjugate, imag, real
from yax.scipy._spectral import csd, detrend, istft, stft, welch  # noqa: F401  (re-exported)

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend",
           "stft", "istft", "csd", "welch"]

_MODES = ("full", "same", "valid")


def _check_mode(func: str, mode: str):
    if mode not in _MODES:
        raise errors.InvalidArgumentError(f"{func}: mode must be 'full', 'same' or 'valid', got "
                                   f"{mode!r}")


def _inputs(func: str, in1, in2):
    in1, in2 = promote_dtypes_inexact(asarray(in1), asarray(in2))
    if in1.ndim != in2.ndim:
        raise errors.ShapeError(f"{func}: in1 and in2 must have the same rank, got shapes "
                                f"{in1.shape} and {in2.shape}")
    return in1, in2


def _slide_order(func: str, in1, in2, mode: str):
    """For 'valid', SciPy slides the smaller input over the larger: swap when in2 is larger
    everywhere; refuse when neither contains the other."""
    if mode != "valid":
        return in1, in2, False
    if all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True)):
        return in1, in2, False
    if all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True)):
        return in2, in1, True
    raise errors.ShapeError(f"{func}: for mode='valid' one input must be at least as large as "
                            f"the other in every dimension, got {in1.shape} and {in2.shape}")


def _centre(full, shape, mode: str, kernel_shape):
    """Slice the 'full' result down to the 'same' or 'valid' window."""
    if mode == "full":
        return full
    index = []
    for n, k, length in zip(shape, kernel_shape, full.shape, strict=True):
        size = n if mode == "same" else n - k + 1
        start = (length - size) // 2 if mode == "same" else k - 1
        index.append(slice(start, start + size))
    return full[tuple(index)]


def _direct_real(lhs, rhs, precision):
    """The 'full' convolution of two real arrays of one rank, by one XLA convolution."""
    ndim = lhs.ndim
    kernel = _rev(rhs, tuple(range(ndim)))  # XLA convolutions correlate: flip for convolve
    pads = [(k - 1, k - 1) for k in rhs.shape]
    out = conv_general_dilated(_expand_dims(lhs, (0, 1)), _expand_dims(kernel, (0, 1)),
                               (1,) * ndim, pads, precision=precision)
    return _squeeze(out, (0, 1))


def _direct_full(in1, in2, precision):
    if in1.size == 0 or in2.size == 0:
        return asarray(np.zeros(tuple(max(a + b - 1, 0) for a, b in zip(in1.shape, in2.shape)),
                                in1.dtype))
    if not np.issubdtype(in1.dtype, np.complexfloating):
        return _direct_real(in1, in2, precision)
    a, b, c, d = real(in1), imag(in1), real(in2), imag(in2)
    re = _direct_real(a, c, precision) - _direct_real(b, d, precision)
    im = _direct_real(a, d, precision) + _direct_real(b, c, precision)
    return re + 1j * im


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-d convolution of in1 with in2 (SciPy's scipy.signal.convolve).

    Args:
      in1, in2: arrays of the same rank.
      mode: "full", "same" or "valid" (see the module docstring).
      method: "auto" or "direct" (an XLA convolution) or "fft" (fftconvolve).
      precision: the XLA precision of the direct method.
    Returns:
      the convolution, in the promoted inexact dtype.

    Example: `convolve(jnp.array([1., 2., 3.]), jnp.array([0., 1., .5]))` is
    `[0., 1., 2.5, 4., 1.5]`.
    """
    _check_mode("convolve", mode)
    if method not in ("auto", "direct", "fft"):
        raise errors.InvalidArgumentError(
            f"convolve: method must be 'auto', 'direct' or 'fft', got {method!r}")
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    in1, in2 = _inputs("convolve", in1, in2)
    if in1.ndim == 0:
        return in1 * in2
    shape = in1.shape
    in1, in2, _ = _slide_order("convolve", in1, in2, mode)
    full = _direct_full(in1, in2, precision)
    return _centre(full, shape if mode == "same" else in1.shape, mode, in2.shape)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-d cross-correlation of in1 and in2 (SciPy's scipy.signal.correlate):
    z[k] = sum_l in1[l] * conj(in2[l - k]), i.e. convolve(in1, conj(flip(in2))).

    Args and Returns: as `convolve`.
    """
    _check_mode("correlate", mode)
    in1, in2 = _inputs("correlate", in1, in2)
    if in1.ndim == 0:
        return in1 * conjugate(in2)
    _, _, swapped = _slide_order("correlate", in1, in2, mode)
    if swapped:  # correlate(a, b) = conj(flip(correlate(b, a)))
        out = correlate(in2, in1, mode, method, precision)
        return conjugate(_rev(out, tuple(range(out.ndim))))
    flipped = conjugate(_rev(in2, tuple(range(in2.ndim))))
    return convolve(in1, flipped, mode, method, precision)


def _check_2d(func: str, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise errors.InvalidArgumentError(f"{func}: only boundary='fill' with fillvalue=0 is "
                                   f"supported (as in JAX), got {boundary!r}, {fillvalue!r}")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise errors.ShapeError(f"{func} needs two 2-D inputs, got shapes {np.shape(in1)} and "
                                f"{np.shape(in2)}")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
    """The 2-D convolution of two 2-D arrays (boundary='fill' with 0 only, as in JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode, "direct", precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
    """The 2-D cross-correlation of two 2-D arrays (boundary='fill' with 0 only, as in JAX)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    return correlate(in1, in2, mode, "direct", precision)


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """The N-d convolution of in1 with in2 by FFT (SciPy's scipy.signal.fftconvolve).

    Args:
      in1, in2: arrays of the same rank; along axes not in `axes` their sizes must match or be 1
        (those axes broadcast, and are not convolved).
      mode: "full", "same" or "valid".
      axes: the axes to convolve over (default all).
    Returns:
      the convolution; real for real inputs.
    """
    _check_mode("fftconvolve", mode)
    in1, in2 = _inputs("fftconvolve", in1, in2)
    if in1.ndim == 0:
        return in1 * in2
    axes = tuple(range(in1.ndim)) if axes is None else tuple(a % in1.ndim for a in
                                                              np.atleast_1d(axes))
    for ax in range(in1.ndim):
        if ax not in axes and in1.shape[ax] != in2.shape[ax] and 1 not in (
                in1.shape[ax], in2.shape[ax]):
            raise errors.ShapeError(f"fftconvolve: axis {ax} is not convolved, so its sizes "
                                    f"must match or be 1, got {in1.shape} and {in2.shape}")
    if in1.size == 0 or in2.size == 0:
        return asarray(np.zeros((0,) * in1.ndim, in1.dtype))
    shape1 = in1.shape
    if mode == "valid" and not all(in1.shape[a] >= in2.shape[a] for a in axes):
        in1, in2 = in2, in1
    sizes = tuple(in1.shape[a] + in2.shape[a] - 1 for a in axes)
    if np.issubdtype(in1.dtype, np.complexfloating):
        full = _fft.ifftn(_fft.fftn(in1, sizes, axes) * _fft.fftn(in2, sizes, axes), sizes, axes)
    else:
        full = _fft.irfftn(_fft.rfftn(in1, sizes, axes) * _fft.rfftn(in2, sizes, axes), sizes,
                           axes)
    index = [slice(None)] * full.ndim
    for ax in axes:
        n, k, length = in1.shape[ax], in2.shape[ax], full.shape[ax]
        if mode == "same":
            size = shape1[ax]
            start = (length - size) // 2
        elif mode == "valid":
            size, start = n - k + 1, k - 1
        else:
            size, start = length, 0
        index[ax] = slice(start, start + size)
    return full[tuple(index)]
