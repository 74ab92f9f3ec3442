"""yax.numpy comparison, selection and logical ufuncs: fmax/fmin, clip, where, the finiteness
predicates, signbit, logical and bitwise operations and shifts.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.numpy._promote import check_arraylike, promote_shapes
from yax.numpy._ufunc_builders import (
    _dtype,
    one_program_when_eager,
    promote_args,
    promote_args_numeric,
    to_operand,
)
from yax.numpy.creation import full_like
from yax.numpy.ufunc_arithmetic import (
    _as_array,
    _full_scalar,
    maximum,
    minimum,
)

__all__ = ["fmax", "fmin", "clip", "where", "isfinite", "isinf", "isnan", "isposinf", "isneginf",
           "signbit", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not",
           "bitwise_invert", "invert", "left_shift", "right_shift", "bitwise_left_shift",
           "bitwise_right_shift"]


# --- comparisons and selection -------------------------------------------------------------------

@one_program_when_eager
def fmax(x1, x2, /):
    """Elementwise maximum that ignores NaNs (NaN only if both are NaN)."""
    x1, x2 = promote_args("fmax", x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.max(x1, x2)))


@one_program_when_eager
def fmin(x1, x2, /):
    """Elementwise minimum that ignores NaNs (NaN only if both are NaN)."""
    x1, x2 = promote_args("fmin", x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.min(x1, x2)))


def _is_complex(v) -> bool:
    if v is None:
        return False
    return dtypes.is_complex(v.aval.dtype) if hasattr(v, "aval") else np.iscomplexobj(v)


def clip(arr, /, min=None, max=None, *, a_min=None, a_max=None):
    """Limit values to [min, max] (either bound may be None; `a_min`/`a_max` are old names).

    Example:
      >>> jnp.clip(jnp.arange(5), 1, 3)
      Array([1, 1, 2, 3, 3], dtype=int32)
    """
    min = a_min if min is None else min
    max = a_max if max is None else max
    check_arraylike("clip", arr)
    if _is_complex(arr) or _is_complex(min) or _is_complex(max):
        raise ValueError("jnp.clip: complex values have no order a clip could use (as in jax); "
                         "clip the real and imaginary parts, or the magnitude, instead")
    if min is None and max is None:
        return _as_array(arr)
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return arr


def _to_bool(x):
    x = to_operand(x)
    if dtypes.is_bool(_dtype(x)):
        return x
    return lax.ne(x, _full_scalar(0, x))


def where(condition, x=None, y=None, /):
    """`x` where `condition` is true, else `y` (all three broadcast together).

    Example:
      >>> jnp.where(jnp.arange(3) > 0, 1.0, -1.0)
      Array([-1.,  1.,  1.], dtype=float32)
    """
    if x is None and y is None:
        raise NotImplementedError("where(condition) with one argument (nonzero) needs a "
                                  "data-dependent shape; use jnp.nonzero(condition, size=...)")
    if x is None or y is None:
        raise ValueError("where needs both x and y, or neither")
    check_arraylike("where", condition, x, y)
    cond = _to_bool(condition)
    x, y = promote_args("where", x, y)
    cond, x, y = promote_shapes("where", cond, x, y)
    return lax.select(cond, x, y)


def isfinite(x, /):
    """True where x is neither infinite nor NaN (always true for ints and bools)."""
    (x,) = promote_args("isfinite", x)
    dt = _dtype(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if dtypes.is_float(dt):
        return lax.is_finite(x)
    return _const_bool_like(x, True)


def _const_bool_like(x, value: bool):
    return full_like(x, value, dtype=dtypes.bool_)


def isinf(x, /):
    """True where x is +inf or -inf."""
    (x,) = promote_args("isinf", x)
    dt = _dtype(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if dtypes.is_float(dt):
        return lax.eq(lax.abs(x), np.inf)
    return _const_bool_like(x, False)


def isposinf(x, /):
    """True where x is +inf."""
    (x,) = promote_args("isposinf", x)
    return lax.eq(x, np.inf) if dtypes.is_float(_dtype(x)) else _const_bool_like(x, False)


def isneginf(x, /):
    """True where x is -inf."""
    (x,) = promote_args("isneginf", x)
    return lax.eq(x, -np.inf) if dtypes.is_float(_dtype(x)) else _const_bool_like(x, False)


def isnan(x, /):
    """True where x is NaN."""
    (x,) = promote_args("isnan", x)
    if dtypes.is_inexact(_dtype(x)):
        return lax.ne(x, x)
    return _const_bool_like(x, False)


_SIGNED_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}


def signbit(x, /):
    """True where the sign bit is set (also for -0.0 and negative NaNs)."""
    (x,) = promote_args("signbit", x)
    dt = _dtype(x)
    if dtypes.is_signed_int(dt):
        return lax.lt(x, 0)
    if not dtypes.is_float(dt):
        return _const_bool_like(x, False)
    bits = lax.bitcast_convert_type(x, _SIGNED_OF_WIDTH[np.dtype(dt).itemsize])
    return lax.lt(bits, 0)


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        a, b = promote_shapes(name, _to_bool(x1), _to_bool(x2))
        return lax_fn(a, b)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` of the truth values of x1 and x2."
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    """Elementwise `not` of the truth value of x."""
    check_arraylike("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


def invert(x, /):
    """Bitwise NOT (`~x`); logical not for bools."""
    (x,) = promote_args("invert", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


def left_shift(x1, x2, /):
    """x1 << x2 (bools promote to the default int)."""
    x1, x2 = promote_args_numeric("left_shift", x1, x2)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    """x1 >> x2: arithmetic for signed ints, logical for unsigned."""
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    if dtypes.is_unsigned_int(_dtype(x1)):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
