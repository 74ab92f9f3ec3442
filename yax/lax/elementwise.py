"""yax.lax elementwise operations: thin wrappers that canonicalise arguments and bind."""

from __future__ import annotations

import numpy as np

from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.trace import bind
from yax.lax import complex_order
from yax.lax._util import scalars_to_arrays
from yax.primitives import elementwise as ew
from yax.primitives.bits import clz_p
from yax.runtime.values import as_operand


def _unary(prim):
    def op(x):
        return bind(prim, as_operand(x))
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}` (the `{prim.name}` primitive)."
    op.primitive = prim  # lets yax.numpy bind directly when its operands need no conversion
    return op


def _nary(prim):
    def op(*args):
        if all(hasattr(a, "aval") for a in args):  # arrays and tracers: nothing to convert
            return bind(prim, *args)
        return bind(prim, *(as_operand(a) for a in scalars_to_arrays(prim.name, args)))
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}` of arrays of one dtype (the `{prim.name}` primitive)."
    op.primitive = prim  # lets yax.numpy bind directly when its operands need no conversion
    return op


neg, sign, floor, ceil = (_unary(ew.unary_primitives[n]) for n in ("neg", "sign", "floor", "ceil"))
abs, exp, exp2, log = (_unary(ew.unary_primitives[n]) for n in ("abs", "exp", "exp2", "log"))
log1p, expm1, sqrt, rsqrt = (_unary(ew.unary_primitives[n])
                             for n in ("log1p", "expm1", "sqrt", "rsqrt"))
cbrt, sin, cos, tan = (_unary(ew.unary_primitives[n]) for n in ("cbrt", "sin", "cos", "tan"))
asin, acos, atan = (_unary(ew.unary_primitives[n]) for n in ("asin", "acos", "atan"))
sinh, cosh, tanh = (_unary(ew.unary_primitives[n]) for n in ("sinh", "cosh", "tanh"))
asinh, acosh, atanh = (_unary(ew.unary_primitives[n]) for n in ("asinh", "acosh", "atanh"))
logistic, erf, erfc = (_unary(ew.unary_primitives[n]) for n in ("logistic", "erf", "erfc"))
erf_inv, lgamma, digamma = (_unary(ew.unary_primitives[n])
                            for n in ("erf_inv", "lgamma", "digamma"))
is_finite, population_count = (_unary(ew.unary_primitives[n])
                               for n in ("is_finite", "population_count"))
real, imag, conj = (_unary(ew.unary_primitives[n]) for n in ("real", "imag", "conj"))
bitwise_not = _unary(ew.unary_primitives["not"])
bitwise_not.__name__ = "bitwise_not"

add, sub, mul, div, rem = (_nary(ew.binary_primitives[n])
                           for n in ("add", "sub", "mul", "div", "rem"))
atan2, nextafter = (_nary(ew.binary_primitives[n]) for n in ("atan2", "nextafter"))


def _extremum(name):
    """`max`/`min`; complex operands are ordered lexicographically (real part first), as jax."""
    prim = ew.binary_primitives[name]

    def op(x, y):
        if not (hasattr(x, "aval") and hasattr(y, "aval")):
            x, y = (as_operand(a) for a in scalars_to_arrays(name, (x, y)))
        if dtypes.is_complex(x.aval.dtype) and x.aval.dtype == y.aval.dtype:
            return complex_order.extremum(name, x, y)
        return bind(prim, x, y)
    op.__name__ = name
    op.__doc__ = (f"Elementwise `{name}` of arrays of one dtype (complex values are compared "
                  f"by real part, then imaginary part).")
    op.primitive = prim
    op.orders_complex = True  # yax.numpy's fast path must come here for complex operands
    return op


max, min = _extremum("max"), _extremum("min")
bitwise_and, bitwise_or, bitwise_xor = (_nary(ew.binary_primitives[n])
                                        for n in ("and", "or", "xor"))
shift_left = _nary(ew.binary_primitives["shift_left"])
shift_right_logical = _nary(ew.binary_primitives["shift_right_logical"])
shift_right_arithmetic = _nary(ew.binary_primitives["shift_right_arithmetic"])
eq, ne, lt, le, gt, ge = (_nary(ew.comparison_primitives[n])
                          for n in ("eq", "ne", "lt", "le", "gt", "ge"))


def round(x, rounding_method=0):
    """Round to integral values: method 0 rounds halves away from zero, 1 to even."""
    method = int(getattr(rounding_method, "value", rounding_method))
    return bind(ew.round_p, as_operand(x), rounding_method=method)


class RoundingMethod:
    """How `lax.round` breaks ties: AWAY_FROM_ZERO (0) or TO_NEAREST_EVEN (1), as in JAX."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def pow(x, y):
    """x ** y; `y` may be an integer array (computed in x's dtype) or of x's dtype."""
    x = as_operand(x) if not isinstance(x, (int, float, complex)) else x
    if isinstance(y, int) and not isinstance(y, bool):
        return integer_pow(x, y)
    x, y = scalars_to_arrays("pow", [x, y])
    return bind(ew.pow_p, as_operand(x), as_operand(y))


def integer_pow(x, y: int):
    """x ** y for a static Python int `y` (square-and-multiply)."""
    return bind(ew.integer_pow_p, as_operand(x), y=int(y))


def square(x):
    """Elementwise `x * x`."""
    return integer_pow(x, 2)


def reciprocal(x):
    """Elementwise `1 / x`."""
    return integer_pow(x, -1)


def select_n(which, *cases):
    """Pick `cases[which]` elementwise; `which` is bool (2 cases) or int32."""
    cases = scalars_to_arrays("select_n", cases)
    return bind(ew.select_n_p, as_operand(which), *(as_operand(c) for c in cases))


def select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false` (elementwise; pred is bool)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    """Elementwise clip of `x` to [min, max]; bounds are scalars or have x's shape."""
    min, x, max = scalars_to_arrays("clamp", [min, x, max])
    return bind(ew.clamp_p, as_operand(min), as_operand(x), as_operand(max))


def convert_element_type(operand, new_dtype):
    """Cast to `new_dtype` (canonicalised under the x64 flag). Float -> int truncates."""
    new_dtype = dtypes.canonicalize(dtypes.dtype(new_dtype))
    operand = as_operand(operand)
    if type(operand) is TypedScalar:  # fold: a constant stays an inline literal
        return TypedScalar(_cast_scalar(operand.value, new_dtype), new_dtype, weak_type=False)
    aval = getattr(operand, "aval", None)
    if aval is not None and aval.dtype == new_dtype and not aval.weak_type:
        return operand
    return bind(ew.convert_element_type_p, operand, new_dtype=new_dtype, weak_type=False)


def _convert_keep_weak(operand, new_dtype, weak_type: bool):
    """Internal: cast, marking the result weak (used by yax.numpy promotion)."""
    operand = as_operand(operand)
    aval = operand.aval
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return operand
    if type(operand) is TypedScalar:
        return TypedScalar(_cast_scalar(operand.value, new_dtype), new_dtype, weak_type)
    return bind(ew.convert_element_type_p, operand, new_dtype=np.dtype(new_dtype),
                weak_type=weak_type)


def _cast_scalar(value, new_dtype):
    """Cast a 0-d constant as the convert primitive would (complex keeps its real part)."""
    if np.iscomplexobj(value) and not dtypes.is_complex(new_dtype):
        value = np.real(value)
    if dtypes.is_bool(new_dtype):
        return np.asarray(value != 0)
    return np.asarray(value).astype(new_dtype)


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits as `new_dtype` (shape gains/loses a last axis if sizes differ)."""
    return bind(ew.bitcast_convert_type_p, as_operand(operand),
                new_dtype=dtypes.canonicalize(dtypes.dtype(new_dtype)))


def clz(x):
    """The number of leading zero bits of each element of an integer array."""
    return bind(clz_p, as_operand(x))
