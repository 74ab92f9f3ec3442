"""yax.numpy arithmetic ufuncs: the one-lax-operation families (trigonometric, hyperbolic,
exponential...), arithmetic with NumPy semantics (floor division, remainder, power) and
rounding.
"""

from __future__ import annotations

import functools

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.core.trace import Tracer, bind
from yax.interpreters.eager import one_operand_op
from yax.lax import complex_order
from yax.numpy._promote import INEXACT_DTYPES, check_arraylike
from yax.numpy._ufunc_builders import (
    _binary,
    _dtype,
    _inexact,
    _is_int,
    _is_int_or_bool,
    one_program_when_eager,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    to_operand,
)
from yax.numpy.creation import asarray
from yax.primitives.arithmetic import integer_pow_p
from yax.runtime.array import Array

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "divmod",
           "remainder", "mod", "fmod", "power", "pow", "float_power", "negative", "positive",
           "abs", "absolute", "fabs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10",
           "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin",
           "arccos", "arctan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "arcsinh",
           "arccosh", "arctanh", "asinh", "acosh", "atanh", "deg2rad", "rad2deg", "degrees",
           "radians", "floor", "ceil", "trunc", "rint", "round", "around", "fix", "maximum",
           "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "not_equal", "less",
           "less_equal", "greater", "greater_equal", "arctan2", "atan2", "nextafter"]


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
equal, not_equal = _binary("equal", lax.eq), _binary("not_equal", lax.ne)


def _ordered(lax_fn):
    """A lax comparison that also orders complex values, lexicographically (real part first),
    as jnp's comparisons do (lax's own reject complex operands)."""
    name = lax_fn.__name__

    def op(x, y):
        if dtypes.is_complex(x.aval.dtype):
            return complex_order.compare(name, x, y)
        return lax_fn(x, y)
    op.__name__ = name
    op.primitive = lax_fn.primitive
    op.orders_complex = True
    return op


less, less_equal = _binary("less", _ordered(lax.lt)), _binary("less_equal", _ordered(lax.le))
greater = _binary("greater", _ordered(lax.gt))
greater_equal = _binary("greater_equal", _ordered(lax.ge))
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


@one_program_when_eager
def floor_divide(x1, x2, /):
    """Floor division (rounds toward minus infinity, also for negative integers)."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dt = _dtype(x1)
    if dtypes.is_unsigned_int(dt):
        return lax.div(x1, x2)
    if dtypes.is_int(dt):
        quot = lax.div(x1, x2)  # truncates toward zero
        rem = lax.rem(x1, x2)
        # Signs compared with `sign`, not `< 0`: a zero divisor (XLA's x / 0 is -1, x % 0 is x)
        # then gives what jax gives (7 // 0 == -2), which programs ported from jax may print.
        wrong = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(rem, 0))
        return lax.select(wrong, lax.sub(quot, 1), quot)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    """(floor(x1 / x2), x1 mod x2) for floats, as NumPy's divmod: mod has the divisor's sign."""
    mod = lax.rem(x1, x2)
    # x1 - mod is nan for a zero divisor (mod is nan); dividing x1 itself gives the signed
    # infinity NumPy and jax give for 2.25 // 0.
    div = lax.div(lax.select(lax.eq(x2, 0.0), x1, lax.sub(x1, mod)), x2)
    # `sign` rather than `< 0`, so that a nan mod also takes the fix (it stays nan) and the
    # quotient of a zero divisor is then rounded as it is in jax
    fix = lax.bitwise_and(lax.ne(mod, 0.0), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, lax.sub(div, 1.0), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def _int_divisor_without_zeros(x2):
    """An integer divisor with its zeros replaced by ones: jax defines x % 0 == 0 for integers
    (XLA alone gives x), and programs ported from jax print it."""
    return lax.select(lax.eq(x2, 0), lax.add(_zero_like(x2), 1), x2)


@one_program_when_eager
def fmod(x1, x2, /):
    """x1 mod x2 with the sign of the dividend (C's fmod); 0 for an integer x2 of 0."""
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    if dtypes.is_int(_dtype(x1)):
        x2 = _int_divisor_without_zeros(x2)
    return lax.rem(x1, x2)


@one_program_when_eager
def remainder(x1, x2, /):
    """x1 mod x2 with the sign of the divisor, as NumPy's `remainder`/`%`."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    dt = _dtype(x1)
    if dtypes.is_unsigned_int(dt):
        return lax.rem(x1, _int_divisor_without_zeros(x2))
    if dtypes.is_complex(dt):
        raise TypeError("remainder does not support complex inputs")
    if dtypes.is_float(dt):
        return _float_divmod(x1, x2)[1]
    x2 = _int_divisor_without_zeros(x2)
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
    fast = _float_to_int_power(x1, x2)
    if fast is not None:
        return fast
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


def _float_to_int_power(x1, x2):
    """`x ** 2` of a strongly typed float Array/tracer: the int takes the array's dtype, so
    promotion has nothing to do and the integer_pow is bound directly (on every eager grad of
    a squared loss); None for everything else."""
    if type(x2) is int and (type(x1) is Array or isinstance(x1, Tracer)) and (
            x1.aval.dtype in INEXACT_DTYPES and not x1.aval.weak_type):
        return bind(integer_pow_p, x1, y=x2)
    return None


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


# `-x` of a non-bool Array binds `neg` on it as it is: an eager repeat runs its last
# executable from one frame (eager.one_operand_op)
negative = functools.update_wrapper(one_operand_op(
    lax.neg.primitive, negative, lambda aval: not dtypes.is_bool(aval.dtype)), negative)


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


# likewise |x|, where it is the `abs` primitive (not for bools and unsigned ints: unchanged)
absolute = functools.update_wrapper(one_operand_op(
    lax.abs.primitive, absolute, lambda aval: not dtypes.is_bool(aval.dtype)
    and not dtypes.is_unsigned_int(aval.dtype)), absolute)
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
