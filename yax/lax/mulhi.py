"""lax.mulhi: the upper N bits of the 2N-bit product of N-bit integers.

Computed in N bits, without a wider type (64-bit inputs have none): each operand is split into
its N/2-bit halves, the four partial products are summed with their carries (the schoolbook
method), giving the unsigned high word; for signed operands the two's-complement correction
subtracts y where x < 0 and x where y < 0.
"""

from __future__ import annotations

import numpy as np

from yax.lax import elementwise as ew
from yax.runtime.values import as_operand

__all__ = ["mulhi"]


def _unsigned_high(x, y, bits: int, udtype):
    half = bits // 2
    mask = np.asarray((1 << half) - 1, udtype)
    shift = np.asarray(half, udtype)
    x_lo, x_hi = ew.bitwise_and(x, mask), ew.shift_right_logical(x, shift)
    y_lo, y_hi = ew.bitwise_and(y, mask), ew.shift_right_logical(y, shift)
    lo_lo, hi_lo = ew.mul(x_lo, y_lo), ew.mul(x_hi, y_lo)
    lo_hi, hi_hi = ew.mul(x_lo, y_hi), ew.mul(x_hi, y_hi)
    # the middle column: the carry out of the low word, plus both cross terms' low halves
    middle = ew.add(ew.add(ew.shift_right_logical(lo_lo, shift), ew.bitwise_and(hi_lo, mask)),
                    lo_hi)
    return ew.add(ew.add(hi_hi, ew.shift_right_logical(hi_lo, shift)),
                  ew.shift_right_logical(middle, shift))


def mulhi(x, y):
    """The most significant N bits of x * y for N-bit integers (as jax.lax.mulhi)."""
    x, y = as_operand(x), as_operand(y)
    dtype = np.dtype(x.dtype)
    if dtype.kind not in "iu" or np.dtype(y.dtype) != dtype:
        raise TypeError(f"mulhi needs two integer operands of one dtype, got {x.dtype} and "
                        f"{y.dtype}")
    bits = dtype.itemsize * 8
    udtype = np.dtype(f"uint{bits}")
    ux, uy = (ew.bitcast_convert_type(v, udtype) if dtype.kind == "i" else v for v in (x, y))
    high = _unsigned_high(ux, uy, bits, udtype)
    if dtype.kind == "u":
        return high
    zero_u = np.asarray(0, udtype)
    # (x mod 2^N)(y mod 2^N) = xy + 2^N (x<0 ? y : 0) + 2^N (y<0 ? x : 0) (mod 2^2N)
    high = ew.sub(high, ew.select(ew.lt(x, np.asarray(0, dtype)), uy, ew.mul(uy, zero_u)))
    high = ew.sub(high, ew.select(ew.lt(y, np.asarray(0, dtype)), ux, ew.mul(ux, zero_u)))
    return ew.bitcast_convert_type(high, dtype)
