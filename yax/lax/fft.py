"""yax.lax.fft: the discrete Fourier transform primitive (see yax/primitives/fft.py)."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.trace import bind
from yax.lax.elementwise import convert_element_type
from yax.primitives.fft import FftType, canonical_fft_type, fft_p
from yax.runtime.values import as_operand, aval_of

__all__ = ["FftType", "fft"]


def _operand_for(x, fft_type: FftType):
    """Real input to FFT/IFFT becomes complex, integers become the default float (complex);
    16-bit floats widen to float32 (complex64), which XLA's FFT needs."""
    aval = aval_of(x)
    dt = aval.dtype
    if fft_type is FftType.RFFT and dtypes.is_complex(dt):
        raise errors.DTypeError(f"RFFT needs a real operand, got {aval.str_short()}; use FFT "
                                  f"for complex input")
    if dtypes.is_complex(dt):
        return x
    if dtypes.is_float(dt):
        real = dt if dt.itemsize >= 4 else np.dtype(np.float32)
    else:
        real = dtypes.canonicalize(np.float64)
    target = real if fft_type is FftType.RFFT else np.result_type(real, np.complex64)
    return x if target == dt else convert_element_type(x, target)


def fft(x, fft_type, fft_lengths):
    """The FFT, IFFT, RFFT or IRFFT of `x` over its trailing len(fft_lengths) axes (1 to 3).

    Args:
      x: the operand; real input to FFT/IFFT becomes complex, integer input to RFFT float.
      fft_type: a `lax.FftType` or its name ("fft", "ifft", "rfft", "irfft").
      fft_lengths: the sizes of the transformed trailing axes (the output's, for IRFFT).
    Returns:
      the transform; IFFT and IRFFT include the 1/N factor, as in NumPy's inverse transforms.

    Example: `lax.fft(x, "rfft", x.shape[-1:])` is `jnp.fft.rfft(x)`.
    """
    fft_type = canonical_fft_type(fft_type)
    lengths = tuple(int(n) for n in (fft_lengths if hasattr(fft_lengths, "__len__")
                                     else (fft_lengths,)))
    x = _operand_for(as_operand(x), fft_type)
    return bind(fft_p, x, fft_type=fft_type, fft_lengths=lengths)
