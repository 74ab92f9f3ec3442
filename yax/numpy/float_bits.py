"""yax.numpy functions of a float's parts: frexp and ldexp (on the bit pattern, bitcast to an
integer of the same width, so exact for every float type including subnormals), modf and
spacing.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.numpy import creation, manipulation, ufuncs
from yax.numpy._arguments import arr
from yax.numpy._promote import promote_dtypes_inexact

__all__ = ["frexp", "ldexp", "modf", "spacing"]


def _float_layout(dt):
    """(integer type of the same width, mantissa bits, exponent bias)."""
    fi = np.finfo(dt) if dt != dtypes.bfloat16 else None
    if dt == dtypes.bfloat16:
        return np.int16, 7, 127
    nmant = fi.nmant
    bias = fi.maxexp - 1
    return {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(dt).itemsize], nmant, bias


def frexp(x, /):
    """Mantissa and exponent: x == m * 2**e with 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf,
    NaN). The exponent is int32.

    XLA treats subnormal inputs as zero on CPU and GPU, so they give (x, 0)."""
    x, = promote_dtypes_inexact(arr("frexp", x))
    x = arr("frexp", x)
    if dtypes.is_complex(x.dtype):
        raise TypeError("jnp.frexp does not accept complex inputs")
    ity, nmant, bias = _float_layout(x.dtype)
    bits = lax.bitcast_convert_type(x, ity)
    exp_mask = (1 << (np.dtype(ity).itemsize * 8 - 1 - nmant)) - 1
    field = lax.bitwise_and(lax.shift_right_logical(bits, creation.full((), nmant, ity)),
                            creation.full((), exp_mask, ity))
    e = manipulation.astype(field, np.int32) - (bias - 1)
    keep = ~np.array(exp_mask << nmant, dtype=np.int64).astype(ity)
    mbits = lax.bitwise_or(lax.bitwise_and(bits, creation.full((), keep, ity)),
                           creation.full((), (bias - 1) << nmant, ity))
    m = lax.bitcast_convert_type(mbits, x.dtype)
    special = ufuncs.logical_or(x == 0, ufuncs.logical_not(ufuncs.isfinite(x)))
    return ufuncs.where(special, x, m), ufuncs.where(special, np.int32(0), e)


def _pow2(k, dt):
    """2**k for integer k in the normal exponent range of `dt`, built from its bits."""
    ity, nmant, bias = _float_layout(dt)
    field = manipulation.astype(k + bias, ity)
    return lax.bitcast_convert_type(lax.shift_left(field, creation.full((), nmant, ity)), dt)


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 integer), exact unless the result under- or overflows."""
    x1 = arr("ldexp", x1)
    x2 = arr("ldexp", x2)
    if not (dtypes.is_int(x2.dtype) or dtypes.is_bool(x2.dtype)):
        raise TypeError(f"jnp.ldexp: x2 must be integers, got {x2.dtype}")
    x1, = promote_dtypes_inexact(x1)
    x1 = arr("ldexp", x1)
    if dtypes.is_complex(x1.dtype):
        raise TypeError("jnp.ldexp does not accept complex inputs")
    _, nmant, bias = _float_layout(x1.dtype)
    # split the exponent into three steps that are each a normal power of two
    lim = 3 * (bias - 1)
    k = manipulation.astype(ufuncs.clip(manipulation.astype(x2, np.int64 if np.dtype(
        x2.dtype).itemsize == 8 else np.int32), -lim, lim), np.int32)
    k1 = ufuncs.floor_divide(k, 3)
    k2 = ufuncs.floor_divide(k - k1, 2)
    k3 = k - k1 - k2
    out = x1 * _pow2(k1, x1.dtype) * _pow2(k2, x1.dtype) * _pow2(k3, x1.dtype)
    return out


def modf(x, /, out=None):
    """Fractional and integral parts, both with the sign of x."""
    x, = promote_dtypes_inexact(arr("modf", x))
    whole = ufuncs.trunc(x)
    return x - whole, whole


def spacing(x, /):
    """The distance from x to the next larger-magnitude float (sign of x)."""
    x, = promote_dtypes_inexact(arr("spacing", x))
    x = arr("spacing", x)
    inf = creation.full((), np.inf, x.dtype)
    return ufuncs.nextafter(x, ufuncs.where(x < 0, -inf, inf)) - x
