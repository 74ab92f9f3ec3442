"""Short-time Fourier analysis for yax.scipy.signal: stft, istft, csd and welch (SciPy's).

A signal is cut into segments of `nperseg` samples, `nperseg - noverlap` apart (after optional
zero padding at both ends, `boundary="zeros"`, and at the end so the last segment is complete,
`padded=True`); each segment is detrended (optionally), windowed and transformed by rfft (fft for
complex or two-sided output). stft scales each spectrum by 1 / sum(window) (amplitudes); csd and
welch by 1 / (fs * sum(window ** 2)) ("density") or 1 / sum(window) ** 2 ("spectrum"), double
the one-sided power except at 0 and Nyquist, and average over segments. istft inverts stft by
windowed overlap-add, normalised by the summed squared windows.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import errors
from yax.numpy._promote import promote_dtypes_inexact

__all__ = ["stft", "istft", "csd", "welch", "detrend"]


def _jnp():
    return jnp


def _window(window, nperseg: int) -> np.ndarray:
    """A periodic window of `nperseg` samples ("hann", "hamming", "blackman", "boxcar"), or
    the given array."""
    if not isinstance(window, str):
        w = np.asarray(window, dtype=np.float64)
        if w.shape != (nperseg,):
            raise errors.ShapeError(f"window of shape {w.shape} must have nperseg={nperseg} "
                                    f"samples")
        return w
    phase = 2 * np.pi * np.arange(nperseg) / nperseg
    name = window.lower()
    if name in ("hann", "hanning"):
        return 0.5 - 0.5 * np.cos(phase)
    if name == "hamming":
        return 0.54 - 0.46 * np.cos(phase)
    if name == "blackman":
        return 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase)
    if name in ("boxcar", "ones", "rectangular"):
        return np.ones(nperseg)
    raise errors.InvalidArgumentError(f"window {window!r} is not supported; use 'hann', "
                                      f"'hamming', 'blackman', 'boxcar' or an array")


def _segments(x, nperseg: int, step: int):
    """x[..., n] -> x[..., segments, nperseg] (a gather of overlapping windows)."""
    count = (x.shape[-1] - nperseg) // step + 1
    index = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
    return x[..., index]


def _spectra(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, boundary,
             padded, axis, mode):
    """Windowed segment spectra: (freqs, times, result[..., freqs, segments], window)."""
    jnp = _jnp()
    x = jnp.moveaxis(jnp.asarray(x), axis, -1)
    if y is not None:
        y = jnp.moveaxis(jnp.asarray(y), axis, -1)
    n = x.shape[-1]
    if nperseg is None:
        nperseg = min(256, n)
    nperseg = int(nperseg)
    win = _window(window, nperseg)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if not 0 <= noverlap < nperseg or nfft < nperseg:
        raise errors.InvalidArgumentError(f"need 0 <= noverlap < nperseg <= nfft, got noverlap="
                                          f"{noverlap}, nperseg={nperseg}, nfft={nfft}")
    step = nperseg - noverlap
    complex_input = np.issubdtype(x.dtype, np.complexfloating) or (
        y is not None and np.issubdtype(y.dtype, np.complexfloating))
    onesided = return_onesided and not complex_input

    def prepare(v):
        if boundary == "zeros":
            v = jnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(nperseg // 2, nperseg // 2)])
        elif boundary is not None:
            raise errors.InvalidArgumentError(f"boundary must be 'zeros' or None, got "
                                              f"{boundary!r}")
        if padded:
            extra = (-(v.shape[-1] - nperseg) % step) % nperseg
            v = jnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, extra)])
        segs = _segments(v, nperseg, step)
        if detrend in ("constant", "linear"):
            segs = _detrend(segs, axis=-1, type=detrend)
        elif detrend not in (False, None):
            raise errors.InvalidArgumentError(f"detrend must be False, 'constant' or 'linear', "
                                              f"got {detrend!r}")
        segs = segs * jnp.asarray(win, dtype=segs.real.dtype if jnp.iscomplexobj(segs)
                                  else segs.dtype)
        return (jnp.fft.rfft(segs, n=nfft) if onesided else jnp.fft.fft(segs, n=nfft)), \
            v.shape[-1]

    fx, padded_len = prepare(x)
    if mode == "stft":
        result = fx / win.sum()
    else:
        fy = fx if y is None else prepare(y)[0]
        result = jnp.conj(fx) * fy
    freqs = np.fft.rfftfreq(nfft, 1.0 / fs) if onesided else np.fft.fftfreq(nfft, 1.0 / fs)
    times = np.arange(nperseg / 2, padded_len - nperseg / 2 + 1, step) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    return freqs, times, jnp.swapaxes(result, -1, -2), win, nfft, onesided


def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap=None, nfft=None,
         detrend=False, return_onesided: bool = True, boundary="zeros", padded: bool = True,
         axis: int = -1):
    """The short-time Fourier transform (SciPy's scipy.signal.stft, scaling='spectrum').

    Returns:
      (f, t, Zxx): frequencies, segment times and the complex spectra, shaped
      x.shape without `axis` + (len(f), len(t)).
    """
    jnp = _jnp()
    freqs, times, result, _, _, _ = _spectra(x, None, fs, window, nperseg, noverlap, nfft,
                                             detrend, return_onesided, boundary, padded, axis,
                                             "stft")
    return jnp.asarray(freqs), jnp.asarray(times), result


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean"):
    """The cross power spectral density of x and y by Welch's method (SciPy's csd).

    Returns:
      (f, Pxy), complex Pxy (real when y is None: then it is welch's Pxx).
    """
    jnp = _jnp()
    freqs, _, result, win, nfft, onesided = _spectra(x, y, fs, window, nperseg, noverlap, nfft,
                                                     detrend, return_onesided, None, False,
                                                     axis, "psd")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise errors.InvalidArgumentError(f"scaling must be 'density' or 'spectrum', got "
                                          f"{scaling!r}")
    result = result * scale
    if onesided:
        doubled = np.full(result.shape[-2], 2.0)
        doubled[0] = 1.0
        if nfft % 2 == 0:
            doubled[-1] = 1.0
        result = result * jnp.asarray(doubled, dtype=result.real.dtype)[:, None]
    if average == "mean":
        result = jnp.mean(result, axis=-1)
    elif average == "median":
        bias = _median_bias(result.shape[-1])
        result = (jnp.median(result.real, axis=-1) + 1j * jnp.median(result.imag, axis=-1)
                  if jnp.iscomplexobj(result) else jnp.median(result, axis=-1)) / bias
    else:
        raise errors.InvalidArgumentError(f"average must be 'mean' or 'median', got "
                                          f"{average!r}")
    if y is None:
        result = result.real
    return jnp.asarray(freqs), jnp.moveaxis(result, -1, axis)


def _median_bias(n: int) -> float:
    """The bias of the median of n periodogram values relative to their mean (SciPy's)."""
    ii = 2 * np.arange(1.0, (n - 1) // 2 + 1)
    return 1 + np.sum(1.0 / (ii + 1) - 1.0 / ii)


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided: bool = True, scaling: str = "density",
          axis: int = -1, average: str = "mean"):
    """The power spectral density by Welch's method (SciPy's welch). Returns (f, Pxx)."""
    return csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
               scaling, axis, average)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2):
    """The inverse of stft by windowed overlap-add (SciPy's istft). Returns (t, x)."""
    jnp = _jnp()
    z = jnp.moveaxis(jnp.asarray(Zxx), (freq_axis, time_axis), (-2, -1))
    nfreq, nseg = z.shape[-2], z.shape[-1]
    nfft_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = nfft_default if nperseg is None else int(nperseg)
    nfft = nperseg if nfft is None else int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    step = nperseg - noverlap
    win = _window(window, nperseg)
    segs = jnp.swapaxes(z, -1, -2)
    segs = (jnp.fft.irfft(segs, n=nfft) if input_onesided else jnp.fft.ifft(segs, n=nfft))
    segs = segs[..., :nperseg] * win.sum() * jnp.asarray(win, dtype=segs.real.dtype)
    length = nperseg + (nseg - 1) * step
    index = (np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]).ravel()
    x = jnp.zeros(segs.shape[:-2] + (length,), segs.dtype)
    x = x.at[..., index].add(segs.reshape(segs.shape[:-2] + (-1,)))
    norm = np.zeros(length)
    np.add.at(norm, index, np.tile(win ** 2, nseg))
    if boundary:
        x = x[..., nperseg // 2:length - nperseg // 2]
        norm = norm[nperseg // 2:length - nperseg // 2]
    x = x / jnp.asarray(np.where(norm > 1e-10, norm, 1.0), dtype=x.real.dtype)
    # As SciPy and JAX: the times count along the first axis of x, which for batched input is
    # the batch axis, not the samples (a quirk kept so programs print the same thing).
    times = np.arange(x.shape[0]) / fs
    return jnp.asarray(times), x


def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):
    """Remove the mean ("constant") or the least-squares line ("linear") along `axis`.

    Args:
      data: the array.
      axis: the axis to detrend along.
      type: "linear" (the default) or "constant".
      bp: break points of a piecewise-linear trend: only 0 (none) is supported here.
      overwrite_data: ignored (arrays are immutable), as in JAX.
    Returns:
      data minus its trend, in an inexact dtype.
    """
    del overwrite_data
    (data,) = promote_dtypes_inexact(jnp.asarray(data))
    if type in ("constant", "c"):
        return data - data.mean(axis=axis, keepdims=True)
    if type not in ("linear", "l"):
        raise errors.InvalidArgumentError(
            f"detrend: type must be 'linear' or 'constant', got {type!r}")
    if np.ndim(bp) != 0 or bp != 0:
        raise errors.InvalidArgumentError(
            "detrend: break points (bp) are not supported; detrend each segment separately")
    x = jnp.moveaxis(data, axis, -1)
    n = x.shape[-1]
    t = jnp.arange(n, dtype=x.real.dtype) - (n - 1) / 2.0
    centred = x - x.mean(axis=-1, keepdims=True)
    denom = (t * t).sum() if n > 1 else 1.0
    slope = jnp.matmul(centred, t.astype(x.dtype)) / denom
    return jnp.moveaxis(centred - slope[..., None] * t.astype(x.dtype), -1, axis)


_detrend = detrend  # the functions above take a `detrend` argument that hides the name
