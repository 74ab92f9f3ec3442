"""yax.numpy elementwise functions (NumPy's ufuncs) on top of yax.lax.

Every function promotes its arguments with JAX's lattice (`_promote`), broadcasts them
NumPy-style, and applies lax operations. Transcendental functions send integer and bool inputs
to the default float type; integer division and remainder follow NumPy's floor semantics.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.core.trace import bind
from yax.numpy import _promote
from yax.numpy._promote import broadcast_shapes, check_arraylike, promote_shapes, shape_of
from yax.numpy.creation import asarray, full_like, zeros_like
from yax.transforms.custom_derivatives import custom_jvp

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "divmod",
    "remainder", "mod", "fmod", "power", "pow", "float_power", "negative", "positive", "abs",
    "absolute", "fabs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "asinh",
    "acosh", "atanh", "deg2rad", "rad2deg", "degrees", "radians", "floor", "ceil", "trunc",
    "rint", "round", "around", "fix", "maximum", "minimum", "fmax", "fmin", "clip", "where",
    "isfinite", "isinf", "isnan", "isposinf", "isneginf", "signbit", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_invert", "invert", "left_shift", "right_shift",
    "bitwise_left_shift", "bitwise_right_shift", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "arctan2", "atan2", "hypot", "copysign", "logaddexp",
    "logaddexp2", "real", "imag", "conj", "conjugate", "heaviside", "sinc", "nextafter",
    "isclose", "allclose",
]


def _strong_numpy_scalars(args):
    """np.float64 and np.complex128 subclass Python's float and complex, but NumPy scalars are
    strongly typed (as in JAX): pass them on as 0-d NumPy arrays so promotion sees that."""
    return [np.asarray(a) if isinstance(a, np.generic) else a for a in args]


def to_operand(x):
    return _promote.to_operand(np.asarray(x) if isinstance(x, np.generic) else x)


def promote_args(name, *args):
    return _promote.promote_args(name, *_strong_numpy_scalars(args))


def promote_args_inexact(name, *args):
    return _promote.promote_args_inexact(name, *_strong_numpy_scalars(args))


def promote_args_numeric(name, *args):
    return _promote.promote_args_numeric(name, *_strong_numpy_scalars(args))


def _dtype(x):
    return x.aval.dtype if hasattr(x, "aval") else np.asarray(x).dtype


def _is_int(x) -> bool:
    return dtypes.is_int(_dtype(x))


def _is_int_or_bool(x) -> bool:
    dt = _dtype(x)
    return dtypes.is_int(dt) or dtypes.is_bool(dt)


# Fast paths (eager dispatch overhead, issue 11): when the general promotion would hand the
# operands on unchanged, bind the primitive directly. `_PASS_DTYPES[promote]` is the set of dtypes
# an operand may have for that to hold (None: any dtype); a promotion rule missing from the table
# has no fast path.
_PASS_DTYPES = {promote_args: None, promote_args_inexact: _promote.INEXACT_DTYPES}


def _make_unary(name, lax_fn, promote, doc):
    prim = getattr(lax_fn, "primitive", None)
    fast = prim is not None and promote in _PASS_DTYPES
    passing = _PASS_DTYPES.get(promote)

    def fn(x, /):
        if fast and _promote.is_operand(x) and (passing is None or x.aval.dtype in passing):
            return bind(prim, x)
        (x,) = promote(name, x)
        return lax_fn(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _make_binary(name, lax_fn, promote, doc):
    prim = getattr(lax_fn, "primitive", None)
    fast = prim is not None and promote in _PASS_DTYPES
    inexact_only = _PASS_DTYPES.get(promote) is not None

    def fn(x1, x2, /):
        if fast:
            operands = _promote.fast_binary_operands(x1, x2, inexact_only)
            if operands is not None:
                return bind(prim, *operands)
        x1, x2 = promote(name, x1, x2)
        return lax_fn(x1, x2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# --- simple families: one promotion rule plus one lax operation each ------------------------------

def _inexact(name, lax_fn):
    return _make_unary(name, lax_fn, promote_args_inexact,
                       f"Elementwise `{name}` (ints and bools promote to the default float).")


def _binary(name, lax_fn, promote=promote_args):
    return _make_binary(name, lax_fn, promote,
                        f"Elementwise `{name}` with NumPy broadcasting and JAX dtype promotion.")


exp, exp2, expm1 = _inexact("exp", lax.exp), _inexact("exp2", lax.exp2), _inexact("expm1",
                                                                                  lax.expm1)
log, log1p, sqrt = _inexact("log", lax.log), _inexact("log1p", lax.log1p), _inexact("sqrt",
                                                                                  lax.sqrt)
cbrt, reciprocal = _inexact("cbrt", lax.cbrt), _inexact("reciprocal", lax.reciprocal)
sin, cos, tan = _inexact("sin", lax.sin), _inexact("cos", lax.cos), _inexact("tan", lax.tan)
arcsin, arccos = _inexact("arcsin", lax.asin), _inexact("arccos", lax.acos)
arctan = _inexact("arctan", lax.atan)
sinh, cosh, tanh = _inexact("sinh", lax.sinh), _inexact("cosh", lax.cosh), _inexact("tanh",
                                                                                   lax.tanh)
arcsinh, arccosh = _inexact("arcsinh", lax.asinh), _inexact("arccosh", lax.acosh)
arctanh = _inexact("arctanh", lax.atanh)
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh

add, multiply, subtract = _binary("add", lax.add), _binary("multiply", lax.mul), _binary(
    "subtract", lax.sub)
maximum, minimum = _binary("maximum", lax.max), _binary("minimum", lax.min)
divide = _binary("divide", lax.div, promote_args_inexact)
arctan2 = _binary("arctan2", lax.atan2, promote_args_inexact)
nextafter = _binary("nextafter", lax.nextafter, promote_args_inexact)
fmod = _binary("fmod", lax.rem, promote_args_numeric)
equal, not_equal = _binary("equal", lax.eq), _binary("not_equal", lax.ne)
less, less_equal = _binary("less", lax.lt), _binary("less_equal", lax.le)
greater, greater_equal = _binary("greater", lax.gt), _binary("greater_equal", lax.ge)
bitwise_and, bitwise_or = _binary("bitwise_and", lax.bitwise_and), _binary("bitwise_or",
                                                                            lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
true_divide, atan2 = divide, arctan2


def log2(x, /):
    """Base-2 logarithm (ints and bools promote to float)."""
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), _full_scalar(np.log(2), x))


def log10(x, /):
    """Base-10 logarithm (ints and bools promote to float)."""
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), _full_scalar(np.log(10), x))


def _full_scalar(value, like):
    """A weakly typed Python scalar meeting `like` takes its dtype inside lax wrappers."""
    if dtypes.is_complex(_dtype(like)):
        return complex(value)
    if dtypes.is_inexact(_dtype(like)):
        return float(value)
    return int(value)


# --- arithmetic with NumPy semantics -----------------------------------------------------------

def _zero_like(x):
    return lax.sub(x, x) if not dtypes.is_bool(_dtype(x)) else lax.ne(x, x)


def floor_divide(x1, x2, /):
    """Floor division (rounds toward minus infinity, also for negative integers)."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dt = _dtype(x1)
    if dtypes.is_unsigned_int(dt):
        return lax.div(x1, x2)
    if dtypes.is_int(dt):
        quot = lax.div(x1, x2)  # truncates toward zero
        rem = lax.rem(x1, x2)
        wrong = lax.bitwise_and(lax.ne(lax.lt(x1, 0), lax.lt(x2, 0)), lax.ne(rem, 0))
        return lax.select(wrong, lax.sub(quot, 1), quot)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    """(floor(x1 / x2), x1 mod x2) for floats, as NumPy's divmod: mod has the divisor's sign."""
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    fix = lax.bitwise_and(lax.ne(mod, 0.0), lax.ne(lax.lt(x2, 0.0), lax.lt(mod, 0.0)))
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, lax.sub(div, 1.0), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def remainder(x1, x2, /):
    """x1 mod x2 with the sign of the divisor, as NumPy's `remainder`/`%`."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    dt = _dtype(x1)
    if dtypes.is_unsigned_int(dt):
        return lax.rem(x1, x2)
    if dtypes.is_complex(dt):
        raise TypeError("remainder does not support complex inputs")
    if dtypes.is_float(dt):
        return _float_divmod(x1, x2)[1]
    rem = lax.rem(x1, x2)
    fix = lax.bitwise_and(lax.ne(rem, 0), lax.ne(lax.lt(rem, 0), lax.lt(x2, 0)))
    return lax.select(fix, lax.add(rem, x2), rem)


mod = remainder


def divmod(x1, x2, /):
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    return floor_divide(x1, x2), remainder(x1, x2)


def _is_static_int(y) -> bool:
    return isinstance(y, (int, np.integer)) and not isinstance(y, (bool, np.bool_))


def power(x1, x2, /):
    """x1 ** x2. A static Python int exponent uses square-and-multiply (`integer_pow`);
    integer arrays raised to integer arrays use a bitwise square-and-multiply loop."""
    check_arraylike("power", x1, x2)
    if _is_static_int(x2) and not isinstance(x1, (int, float, complex)):
        x1, _ = promote_args_numeric("power", x1, int(x2))
        if _is_int(x1) and x2 < 0:
            raise TypeError("power: integers cannot be raised to negative integer powers")
        return lax.integer_pow(x1, int(x2))
    x1, x2 = promote_args_numeric("power", x1, x2)
    if not _is_int(x1):
        return lax.pow(x1, x2)
    return _int_pow(x1, x2)


def _int_pow(x, y):
    """Square-and-multiply over the exponent's bits (negative exponents give 0, except for
    bases 1 and -1, as integer powers in JAX)."""
    bits = np.dtype(_dtype(x)).itemsize * 8
    acc = lax.add(_zero_like(x), 1)
    base, exp = x, y
    for _ in range(bits):
        acc = lax.select(lax.ne(lax.bitwise_and(exp, 1), 0), lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        exp = lax.shift_right_logical(exp, 1)
    return acc


pow = power


def float_power(x1, x2, /):
    """x1 ** x2 in floating point (ints promote to float; as in JAX, the float type is the
    promoted one, not float64)."""
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return lax.pow(x1, x2)


def negative(x, /):
    """-x."""
    (x,) = promote_args("negative", x)
    return lax.neg(x)


def positive(x, /):
    """+x (returns x)."""
    (x,) = promote_args("positive", x)
    return x


def absolute(x, /):
    """|x| (complex inputs give their real dtype; bools and unsigned ints are unchanged)."""
    (x,) = promote_args("absolute", x)
    if dtypes.is_bool(_dtype(x)) or dtypes.is_unsigned_int(_dtype(x)):
        return x
    return lax.abs(x)


abs = absolute


def fabs(x, /):
    """|x| of a real input, as a float."""
    (x,) = promote_args_inexact("fabs", x)
    return lax.abs(x)


def sign(x, /):
    """-1, 0 or 1 by the sign of x (NaN stays NaN)."""
    (x,) = promote_args("sign", x)
    return lax.sign(x)


def square(x, /):
    """x * x (bools promote to the default int)."""
    (x,) = promote_args_numeric("square", x)
    return lax.integer_pow(x, 2)


def deg2rad(x, /):
    """Degrees to radians."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, np.pi / 180)


def rad2deg(x, /):
    """Radians to degrees."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, 180 / np.pi)


degrees, radians = rad2deg, deg2rad


# --- rounding ----------------------------------------------------------------------------------

def _round_family(name, lax_fn, doc):
    def fn(x, /):
        check_arraylike(name, x)
        x = to_operand(x)
        if _is_int_or_bool(x):  # already integral (JAX keeps the dtype)
            return _as_array(x)
        if dtypes.is_complex(_dtype(x)):
            raise TypeError(f"{name} does not support complex inputs")
        return lax_fn(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _as_array(x):
    return asarray(x)


def _trunc(x):
    return lax.select(lax.lt(x, 0.0), lax.ceil(x), lax.floor(x))


floor = _round_family("floor", lax.floor, "Largest integer <= x (ints are unchanged).")
ceil = _round_family("ceil", lax.ceil, "Smallest integer >= x (ints are unchanged).")
trunc = _round_family("trunc", _trunc, "Round toward zero (ints are unchanged).")
fix = _round_family("fix", _trunc, "Round toward zero (NumPy's `fix`).")


def rint(x, /):
    """Round to the nearest integer, halves to even (ints promote to float, as in JAX)."""
    (x,) = promote_args_inexact("rint", x)
    if dtypes.is_complex(_dtype(x)):
        raise TypeError("rint does not support complex inputs")
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals: int = 0, out=None):
    """Round to `decimals` decimal places, halves to even (as NumPy).

    Example:
      >>> jnp.round(jnp.array([0.5, 1.5, 2.25]), 1)
      Array([0.5, 1.5, 2.2], dtype=float32)
    """
    if out is not None:
        raise ValueError("round: the `out` argument is not supported (arrays are immutable)")
    check_arraylike("round", a)
    a = to_operand(a)
    decimals = int(decimals)
    if _is_int_or_bool(a):
        if decimals >= 0:
            return _as_array(a)
        factor = 10 ** (-decimals)
        return lax.mul(_round_int_div(a, factor), factor)
    if decimals == 0:
        return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)
    factor = 10.0 ** decimals
    scaled = lax.mul(a, factor)
    return lax.div(lax.round(scaled, lax.RoundingMethod.TO_NEAREST_EVEN), factor)


def _round_int_div(a, factor: int):
    """Integer a / factor rounded half to even (for round with negative decimals)."""
    q = floor_divide(a, factor)
    r = lax.sub(a, lax.mul(q, factor))
    twice = lax.mul(r, 2)
    up = lax.bitwise_or(lax.gt(twice, factor),
                        lax.bitwise_and(lax.eq(twice, factor), lax.ne(lax.rem(q, 2), 0)))
    return lax.select(up, lax.add(q, 1), q)


around = round


# --- comparisons and selection -------------------------------------------------------------------

def fmax(x1, x2, /):
    """Elementwise maximum that ignores NaNs (NaN only if both are NaN)."""
    x1, x2 = promote_args("fmax", x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.max(x1, x2)))


def fmin(x1, x2, /):
    """Elementwise minimum that ignores NaNs (NaN only if both are NaN)."""
    x1, x2 = promote_args("fmin", x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.min(x1, x2)))


def clip(arr, /, min=None, max=None, *, a_min=None, a_max=None):
    """Limit values to [min, max] (either bound may be None; `a_min`/`a_max` are old names).

    Example:
      >>> jnp.clip(jnp.arange(5), 1, 3)
      Array([1, 1, 2, 3, 3], dtype=int32)
    """
    min = a_min if min is None else min
    max = a_max if max is None else max
    check_arraylike("clip", arr)
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


# --- more floating-point functions ---------------------------------------------------------------

def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2), scaled by the larger magnitude so it does not overflow."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = lax.max(a, b), lax.min(a, b)
    safe = lax.select(lax.eq(big, 0.0), 1.0, big)
    ratio = lax.div(small, safe)
    out = lax.mul(big, lax.sqrt(lax.add(lax.mul(ratio, ratio), 1.0)))
    out = lax.select(lax.eq(big, 0.0), big, out)
    return lax.select(lax.bitwise_or(isinf(a), isinf(b)), np.inf, out)


def copysign(x1, x2, /):
    """|x1| with the sign of x2."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if dtypes.is_complex(_dtype(x1)):
        raise TypeError("copysign does not support complex inputs")
    mag = lax.abs(x1)
    return where(signbit(x2), lax.neg(mag), mag)


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    # hi + log1p(exp(lo - hi)) is exact for either ordering, so selecting hi/lo (for stability)
    # keeps every derivative smooth at x1 == x2 (max/abs conventions would break it there)
    first = lax.ge(x1, x2)
    hi, lo = lax.select(first, x1, x2), lax.select(first, x2, x1)
    out = lax.add(hi, lax.log1p(lax.exp(lax.sub(lo, hi))))
    delta = lax.sub(x1, x2)
    # equal infinities make delta NaN; their sum is the right answer there
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), out)


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    ln2 = float(np.log(2))  # a Python float is weakly typed: no float64 truncation warning
    return lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2)


def real(x, /):
    """The real part (real inputs are returned as they are)."""
    (x,) = promote_args("real", x)
    return lax.real(x) if dtypes.is_complex(_dtype(x)) else _as_array(x)


def imag(x, /):
    """The imaginary part (zeros for real inputs)."""
    (x,) = promote_args("imag", x)
    if dtypes.is_complex(_dtype(x)):
        return lax.imag(x)
    return zeros_like(x)


def conjugate(x, /):
    """The complex conjugate (real inputs are returned as they are)."""
    (x,) = promote_args("conjugate", x)
    return lax.conj(x) if dtypes.is_complex(_dtype(x)) else _as_array(x)


conj = conjugate


def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    return where(lax.lt(x1, 0.0), 0.0, where(lax.gt(x1, 0.0), 1.0, x2))


def sinc(x, /):
    """sin(pi x) / (pi x), with sinc(0) = 1 and every derivative at 0 exact (its Maclaurin
    coefficients), not just the first."""
    (x,) = promote_args_inexact("sinc", x)
    is_zero = lax.eq(x, 0.0)
    pix = lax.mul(lax.select(is_zero, 1.0, x), np.pi)
    return lax.select(is_zero, _sinc_derivative_at_zero(0, x), lax.div(lax.sin(pix), pix))


def _sinc_at_zero_value(k: int, x):
    """The k-th derivative of sinc at 0: (-1)^(k/2) pi^k / (k + 1) for even k, 0 for odd k."""
    return full_like(x, 0.0 if k % 2 else (-1.0) ** (k // 2) * np.pi ** k / (k + 1))


def _make_sinc_derivative_at_zero():
    f = custom_jvp(_sinc_at_zero_value, nondiff_argnums=(0,))

    @f.defjvp
    def _(k, primals, tangents):
        (x,), (t,) = primals, tangents
        return f(k, x), lax.mul(f(k + 1, x), t)
    return f


_sinc_derivative_at_zero = _make_sinc_derivative_at_zero()


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """|a - b| <= atol + rtol * |b|, elementwise (infinities equal only themselves)."""
    a, b = promote_args_inexact("isclose", a, b)
    close = less_equal(absolute(subtract(a, b)),
                       add(atol, multiply(rtol, absolute(b))))
    both_inf = logical_and(isinf(a), isinf(b))
    close = where(both_inf, equal(a, b), logical_and(close, isfinite(b)))
    close = logical_or(close, logical_and(isinf(a), equal(a, b)))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """True if `isclose` holds everywhere (a 0-d bool array)."""
    return lax.reduce_and(isclose(a, b, rtol, atol, equal_nan),
                          tuple(range(np.ndim(_dtype_shape(a, b)))))


def _dtype_shape(a, b):
    return np.empty(broadcast_shapes(shape_of(a), shape_of(b)), dtype=np.bool_)
