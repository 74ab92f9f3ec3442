"""The fft primitive: discrete Fourier transforms over the trailing 1-3 axes (StableHLO `fft`).

    FFT    complex -> complex, same shape:   y[k] = sum_j x[j] exp(-2 pi i j.k / n)
    IFFT   complex -> complex, same shape:   y[j] = (1/N) sum_k x[k] exp(+2 pi i j.k / n)
    RFFT   real -> complex, the last axis n -> n // 2 + 1 (the non-negative frequencies)
    IRFFT  complex -> real, the last axis n // 2 + 1 -> n (the inverse of RFFT; the imaginary
           parts of the zero and Nyquist frequencies are ignored)

`fft_lengths` are the sizes n of the transformed trailing axes (the output's for IRFFT).
All four are linear (real-linear for RFFT and IRFFT), so the JVP is the primitive on the tangent.
Transposes, with yax's pairing <ct, t> = Re(sum ct * t) of complex cotangents:
- FFT and IFFT: the DFT matrix is symmetric, so each is its own transpose.
- RFFT: ct_x = N * irfft(conj(ct) / m), where m is 1 at the zero (and Nyquist) frequency of the
  last axis and 2 elsewhere (those bins stand for two conjugate ones of the full spectrum).
- IRFFT: ct_z = (m / N) * conj(rfft(ct)).
The batch axis moves to the front, where it is one more leading (untransformed) axis.
"""

from __future__ import annotations

import enum

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.primitives._ad_rules import linear_jvp
from yax.primitives._lax import lax
from yax.runtime import values


class FftType(enum.IntEnum):
    """The kind of transform of `lax.fft` (the same names and values as jax.lax.FftType)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def canonical_fft_type(fft_type) -> FftType:
    """FftType from an FftType, its int value, or its name in any case ("fft", "IRFFT")."""
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        name = fft_type.rsplit(".", 1)[-1].upper()
        if name in FftType.__members__:
            return FftType[name]
    elif isinstance(fft_type, (int, np.integer)) and int(fft_type) in range(4):
        return FftType(int(fft_type))
    raise errors.InvalidArgumentError(
        f"fft_type must be one of FFT, IFFT, RFFT, IRFFT (a lax.FftType or its name), "
        f"got {fft_type!r}")


def _check_lengths(x, fft_type, fft_lengths):
    if not 1 <= len(fft_lengths) <= 3 or len(fft_lengths) > x.ndim:
        raise errors.ShapeError(
            f"fft of {x.str_short()}: fft_lengths {fft_lengths} must name 1 to 3 trailing axes "
            f"of the operand; transform more axes in several calls")
    if not all(isinstance(n, int) and n >= 0 for n in fft_lengths):
        raise errors.ShapeError(f"fft: fft_lengths must be non-negative ints, got {fft_lengths}")
    trailing = x.shape[x.ndim - len(fft_lengths):]
    expected = tuple(fft_lengths)
    if fft_type is FftType.IRFFT:
        expected = expected[:-1] + (fft_lengths[-1] // 2 + 1,)
    if trailing != expected:
        raise errors.ShapeError(
            f"{fft_type.name} of {x.str_short()} with fft_lengths {tuple(fft_lengths)} needs "
            f"trailing axes {expected}, got {trailing}; pad or slice the operand first "
            f"(jnp.fft's `n=` does that)")


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    if fft_type is FftType.RFFT:
        if x.dtype not in _COMPLEX_OF:
            raise errors.DTypeError(
                f"RFFT needs a float32 or float64 operand, got {x.str_short()}")
        _check_lengths(x, fft_type, fft_lengths)
        shape = x.shape[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _COMPLEX_OF[x.dtype])
    if x.dtype not in _REAL_OF:
        raise errors.DTypeError(
            f"{fft_type.name} needs a complex64 or complex128 operand, got {x.str_short()}; "
            f"convert real input with .astype(complex) or use RFFT")
    _check_lengths(x, fft_type, fft_lengths)
    if fft_type is FftType.IRFFT:
        return ShapedArray(x.shape[:-1] + (fft_lengths[-1],), _REAL_OF[x.dtype])
    return ShapedArray(x.shape, x.dtype)


def _fft_lower(ctx, x, *, fft_type, fft_lengths):
    aval_out = ctx.avals_out[0]
    if aval_out.size == 0 or 0 in fft_lengths:  # nothing to transform: XLA rejects n == 0
        return [mlir.full_like_aval(0, aval_out)]
    return [hlo.fft(x, hlo.FftTypeAttr.get(fft_type.name), mlir.dense_i64(fft_lengths))]


# --- differentiation and batching rules ---------------------------------------------------------

def _last_axis_weights(like, n: int, scale: float, invert: bool):
    """scale * m (or scale / m) along the last axis, as an array of `like`'s shape and dtype;
    m is that of the module docstring, for the n // 2 + 1 bins of a length-n transform."""
    m = np.full(n // 2 + 1, 2.0)
    m[0] = 1.0
    if n % 2 == 0:
        m[-1] = 1.0
    aval = aval_of_value(like)
    w = values.array_from_numpy(np.asarray(scale / m if invert else scale * m, aval.dtype))
    return lax.broadcast_in_dim(w, aval.shape, (aval.ndim - 1,))


def _fft_transpose(cts, x, *, fft_type, fft_lengths):
    ct, = cts
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    size = float(np.prod(fft_lengths))
    if fft_type is FftType.RFFT:
        weights = _last_axis_weights(ct, fft_lengths[-1], size, invert=True)
        return [fft_p.bind(lax.mul(lax.conj(ct), weights), fft_type=FftType.IRFFT,
                           fft_lengths=fft_lengths)]
    spectrum = lax.conj(fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths))
    return [lax.mul(spectrum, _last_axis_weights(spectrum, fft_lengths[-1], 1.0 / size,
                                                 invert=False))]


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    x = move_batch_axis(args[0], dims[0], 0, axis_size_of(args, dims))
    return [fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)], [0]


fft_p = Primitive("fft", abstract_eval=_fft_abstract_eval, lower=_fft_lower,
                  transpose=_fft_transpose, batch=_fft_batch)
linear_jvp(fft_p)
