"""Elementwise primitives, declared as table rows: unary, binary, comparisons, plus select_n,
clamp, integer_pow, convert_element_type and bitcast_convert_type.

Operands of an n-ary elementwise primitive share one shape; rank-0 operands broadcast implicitly
(so `mul x 2.0` needs no broadcast equation). The differentiation and batching rules of every
primitive of the family are in the rules section at the end of this module (the conventions at
non-differentiable points: docs/derivative_conventions.md).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero, instantiate
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import chlo, hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._ad_rules import broadcast_batcher, defjvp, linear_jvp, unbroadcast
from yax.primitives._checks import broadcast_elementwise_shapes, dtype_kind_check, same_dtypes
from yax.primitives._lax import lax


def broadcast_operands(ctx, operands) -> list:
    """Broadcast rank-0 operands to the output shape inside a lowering rule."""
    shape = ctx.avals_out[0].shape
    return [mlir.broadcast_to(x, a, shape) if a.shape != shape else x
            for x, a in zip(operands, ctx.avals_in, strict=True)]


def _weak(avals) -> bool:
    return all(a.weak_type for a in avals)


# --- unary ---------------------------------------------------------------------------------------

def _unary_abstract_eval(name, kind, out_dtype=None):
    def rule(x, **params):
        dtype_kind_check(name, x, kind)
        dt = out_dtype(x.dtype) if out_dtype else x.dtype
        return ShapedArray(x.shape, dt, x.weak_type if dt == x.dtype else False)
    return rule


def _real_dtype(dt):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dt, dt)


def _op_lower(op):
    def rule(ctx, *xs, **params):
        return [op(*broadcast_operands(ctx, xs))]
    return rule


def _exp2_lower(ctx, x):
    log2 = mlir.full_like_aval(np.log(2.0), ctx.avals_in[0])
    return [hlo.exponential(hlo.multiply(x, log2))]


def _sign_lower(ctx, x):
    aval = ctx.avals_in[0]
    if dtypes.is_unsigned_int(aval.dtype):  # stablehlo.sign has no unsigned form
        zero = mlir.full_like_aval(0, aval)
        one = mlir.full_like_aval(1, aval)
        is_zero = hlo.compare(x, zero, hlo.ComparisonDirectionAttr.get("EQ"),
                              compare_type=hlo.ComparisonTypeAttr.get("UNSIGNED"))
        return [hlo.select(is_zero, zero, one)]
    return [hlo.sign(x)]


def _abs_lower(ctx, x):
    if dtypes.is_unsigned_int(ctx.avals_in[0].dtype):
        return [x]
    return [hlo.abs(x)]  # complex abs yields the real element type


def _round_lower(ctx, x, *, rounding_method=0):
    return [hlo.round_nearest_even(x) if rounding_method else hlo.round_nearest_afz(x)]


UNARY_TABLE = [
    # name, dtype kind, lowering (StableHLO/CHLO op or rule), output dtype function
    ("neg", "numeric", _op_lower(hlo.negate), None),
    ("sign", "numeric", _sign_lower, None),
    ("floor", "float", _op_lower(hlo.floor), None),
    ("ceil", "float", _op_lower(hlo.ceil), None),
    ("round", "float", _round_lower, None),
    ("abs", "numeric", _abs_lower, _real_dtype),
    ("exp", "inexact", _op_lower(hlo.exponential), None),
    ("exp2", "inexact", _exp2_lower, None),
    ("log", "inexact", _op_lower(hlo.log), None),
    ("log1p", "inexact", _op_lower(hlo.log_plus_one), None),
    ("expm1", "inexact", _op_lower(hlo.exponential_minus_one), None),
    ("sqrt", "inexact", _op_lower(hlo.sqrt), None),
    ("rsqrt", "inexact", _op_lower(hlo.rsqrt), None),
    ("cbrt", "float", _op_lower(hlo.cbrt), None),
    ("sin", "inexact", _op_lower(hlo.sine), None),
    ("cos", "inexact", _op_lower(hlo.cosine), None),
    ("tan", "inexact", _op_lower(hlo.tan), None),
    ("asin", "inexact", _op_lower(chlo.asin), None),
    ("acos", "inexact", _op_lower(chlo.acos), None),
    ("atan", "inexact", _op_lower(chlo.atan), None),
    ("sinh", "inexact", _op_lower(chlo.sinh), None),
    ("cosh", "inexact", _op_lower(chlo.cosh), None),
    ("tanh", "inexact", _op_lower(hlo.tanh), None),
    ("asinh", "inexact", _op_lower(chlo.asinh), None),
    ("acosh", "inexact", _op_lower(chlo.acosh), None),
    ("atanh", "inexact", _op_lower(chlo.atanh), None),
    ("logistic", "inexact", _op_lower(hlo.logistic), None),
    ("erf", "float", _op_lower(chlo.erf), None),
    ("erfc", "float", _op_lower(chlo.erfc), None),
    ("erf_inv", "float", _op_lower(chlo.erf_inv), None),
    ("lgamma", "float", _op_lower(chlo.lgamma), None),
    ("digamma", "float", _op_lower(chlo.digamma), None),
    ("is_finite", "float", _op_lower(hlo.is_finite), lambda dt: dtypes.bool_),
    ("not", "int_or_bool", _op_lower(hlo.not_), None),
    ("population_count", "int", _op_lower(hlo.popcnt), None),
    ("real", "inexact", _op_lower(hlo.real), _real_dtype),
    ("imag", "inexact", _op_lower(hlo.imag), _real_dtype),
    ("conj", "inexact", _op_lower(chlo.conj), None),
]

def _make_elementwise(name, abstract_eval, lower) -> Primitive:
    prim = Primitive(name)
    prim.abstract_eval = abstract_eval
    prim.lower = lower
    return prim


unary_primitives = {
    name: _make_elementwise(name, _unary_abstract_eval(name, kind, out), lower)
    for name, kind, lower, out in UNARY_TABLE
}
globals().update({f"{name}_p": prim for name, prim in unary_primitives.items()})


# --- integer_pow: x ** y for a static Python int y -----------------------------------------------

def _integer_pow_abstract_eval(x, *, y):
    dtype_kind_check("integer_pow", x, "numeric")
    if not isinstance(y, int):
        raise errors.DTypeError(f"integer_pow needs a Python int exponent, got {y!r}")
    if y < 0 and dtypes.is_int(x.dtype):
        raise errors.DTypeError(f"integer_pow of an integer array {x.str_short()} needs a "
                                f"non-negative exponent, got {y}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _integer_pow_lower(ctx, x, *, y):
    """Square-and-multiply, then invert for negative exponents."""
    aval = ctx.avals_in[0]
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else hlo.multiply(result, base)
        n >>= 1
        if n:
            base = hlo.multiply(base, base)
    if result is None:
        result = mlir.full_like_aval(1, aval)
    if y < 0:
        result = hlo.divide(mlir.full_like_aval(1, aval), result)
    return [result]


integer_pow_p = Primitive("integer_pow")
integer_pow_p.abstract_eval = _integer_pow_abstract_eval
integer_pow_p.lower = _integer_pow_lower


# --- binary --------------------------------------------------------------------------------------

def _nary_abstract_eval(name, kind, out_dtype=None):
    def rule(*avals, **params):
        for a in avals:
            dtype_kind_check(name, a, kind)
        same_dtypes(name, avals)
        shape = broadcast_elementwise_shapes(name, avals)
        dt = out_dtype(avals[0].dtype) if out_dtype else avals[0].dtype
        return ShapedArray(shape, dt, _weak(avals) and dt == avals[0].dtype)
    return rule


def _pow_abstract_eval(x, y):
    dtype_kind_check("pow", x, "inexact")
    if dtypes.is_int(y.dtype):
        shape = broadcast_elementwise_shapes("pow", [x, y])
        return ShapedArray(shape, x.dtype, x.weak_type)
    return _nary_abstract_eval("pow", "inexact")(x, y)


def _pow_lower(ctx, x, y):
    xa, ya = ctx.avals_in
    if ya.dtype != xa.dtype:  # integer exponent: compute in the base's dtype
        y = hlo.convert(mlir.tensor_type(ya.shape, xa.dtype), y)
        ctx = type(ctx)(ctx.module_ctx, [xa, ShapedArray(ya.shape, xa.dtype)], ctx.avals_out)
    return [hlo.power(*broadcast_operands(ctx, [x, y]))]


BINARY_TABLE = [
    ("add", "any", _op_lower(hlo.add)),
    ("sub", "numeric", _op_lower(hlo.subtract)),
    ("mul", "any", _op_lower(hlo.multiply)),
    ("div", "numeric", _op_lower(hlo.divide)),
    ("rem", "numeric", _op_lower(hlo.remainder)),
    ("max", "any", _op_lower(hlo.maximum)),
    ("min", "any", _op_lower(hlo.minimum)),
    ("atan2", "float", _op_lower(hlo.atan2)),
    ("nextafter", "float", _op_lower(chlo.next_after)),
    ("and", "int_or_bool", _op_lower(hlo.and_)),
    ("or", "int_or_bool", _op_lower(hlo.or_)),
    ("xor", "int_or_bool", _op_lower(hlo.xor)),
    ("shift_left", "int", _op_lower(hlo.shift_left)),
    ("shift_right_logical", "int", _op_lower(hlo.shift_right_logical)),
    ("shift_right_arithmetic", "int", _op_lower(hlo.shift_right_arithmetic)),
]

binary_primitives = {
    name: _make_elementwise(name, _nary_abstract_eval(name, kind), lower)
    for name, kind, lower in BINARY_TABLE
}
globals().update({f"{name}_p": prim for name, prim in binary_primitives.items()})

pow_p = Primitive("pow")
pow_p.abstract_eval = _pow_abstract_eval
pow_p.lower = _pow_lower


# --- comparisons ---------------------------------------------------------------------------------

def _compare_type(dt) -> str:
    if dtypes.is_inexact(dt):
        return "FLOAT"
    if dtypes.is_signed_int(dt):
        return "SIGNED"
    return "UNSIGNED"


def _compare_lower(direction: str):
    def rule(ctx, x, y):
        x, y = broadcast_operands(ctx, [x, y])
        ctype = _compare_type(ctx.avals_in[0].dtype)
        return [hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                            compare_type=hlo.ComparisonTypeAttr.get(ctype))]
    return rule


COMPARISON_TABLE = [("eq", "EQ"), ("ne", "NE"), ("lt", "LT"), ("le", "LE"), ("gt", "GT"),
                    ("ge", "GE")]
comparison_primitives = {}
for _name, _direction in COMPARISON_TABLE:
    _prim = Primitive(_name)
    _prim.abstract_eval = _nary_abstract_eval(
        _name, "any" if _name in ("eq", "ne") else "real_or_bool", lambda dt: dtypes.bool_)
    _prim.lower = _compare_lower(_direction)
    comparison_primitives[_name] = _prim
globals().update({f"{name}_p": prim for name, prim in comparison_primitives.items()})


# --- select_n(which, *cases) ---------------------------------------------------------------------

def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise errors.ShapeError("select_n needs at least one case")
    same_dtypes("select_n cases", cases)
    shape = broadcast_elementwise_shapes("select_n", [which, *cases])
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise errors.DTypeError(f"select_n needs a bool or int32 selector, got {which.str_short()}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise errors.DTypeError(f"select_n with a bool selector takes at most 2 cases, got "
                                f"{len(cases)}")
    return ShapedArray(shape, cases[0].dtype, _weak(cases))


def _select_n_lower(ctx, which, *cases):
    which, *cases = broadcast_operands(ctx, [which, *cases])
    if len(cases) == 1:
        return [cases[0]]
    waval = ctx.avals_in[0]
    if waval.dtype == dtypes.bool_:
        return [hlo.select(which, cases[1], cases[0])]
    # int32 selector: a balanced tree of selects on `which < mid`
    shape = ctx.avals_out[0].shape

    def pick(lo, hi):
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        bound = mlir.constant(np.full(shape, mid, np.int32))
        lt = hlo.compare(which, bound, hlo.ComparisonDirectionAttr.get("LT"),
                         compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
        return hlo.select(lt, pick(lo, mid), pick(mid, hi))
    return [pick(0, len(cases))]


select_n_p = Primitive("select_n")
select_n_p.abstract_eval = _select_n_abstract_eval
select_n_p.lower = _select_n_lower


# --- clamp(min, x, max) --------------------------------------------------------------------------

def _clamp_abstract_eval(lo, x, hi):
    dtype_kind_check("clamp", x, "real")
    same_dtypes("clamp", [lo, x, hi])
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise errors.ShapeError(f"clamp bounds must be scalars or have the operand's shape "
                                    f"{x.str_short()}, got {bound.str_short()}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _clamp_lower(ctx, lo, x, hi):
    return [hlo.clamp(*broadcast_operands(ctx, [lo, x, hi]))]


clamp_p = Primitive("clamp")
clamp_p.abstract_eval = _clamp_abstract_eval
clamp_p.lower = _clamp_lower


# --- convert_element_type and bitcast_convert_type -----------------------------------------------

def _convert_abstract_eval(x, *, new_dtype, weak_type=False):
    if np.dtype(new_dtype) not in dtypes.SUPPORTED:
        raise errors.DTypeError(f"convert_element_type: unsupported dtype {new_dtype}")
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_lower(ctx, x, *, new_dtype, weak_type=False):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if aval_in.dtype == aval_out.dtype:
        return [x]
    if dtypes.is_complex(aval_in.dtype) and not dtypes.is_complex(new_dtype):
        x = hlo.real(x)  # complex -> real keeps the real part (as NumPy, JAX)
        aval_in = ShapedArray(aval_in.shape, _real_dtype(aval_in.dtype))
    if np.dtype(new_dtype) == dtypes.bool_:
        zero = mlir.full_like_aval(0, aval_in)
        return [hlo.compare(x, zero, hlo.ComparisonDirectionAttr.get("NE"),
                            compare_type=hlo.ComparisonTypeAttr.get(_compare_type(aval_in.dtype)))]
    return [mlir.convert(x, aval_in, aval_out)]


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.abstract_eval = _convert_abstract_eval
convert_element_type_p.lower = _convert_lower


def _bitcast_abstract_eval(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    old_size, new_size = x.dtype.itemsize, new_dtype.itemsize
    if dtypes.is_bool(x.dtype) or dtypes.is_bool(new_dtype):
        raise errors.DTypeError("bitcast_convert_type does not support bool")
    if old_size == new_size:
        shape = x.shape
    elif old_size > new_size:
        shape = x.shape + (old_size // new_size,)
    else:
        ratio = new_size // old_size
        if not x.shape or x.shape[-1] != ratio:
            raise errors.ShapeError(
                f"bitcast_convert_type from {x.dtype} to {new_dtype} needs a last axis of size "
                f"{ratio}, got {x.str_short()}")
        shape = x.shape[:-1]
    return ShapedArray(shape, new_dtype)


def _bitcast_lower(ctx, x, *, new_dtype):
    return [hlo.bitcast_convert(mlir.aval_type(ctx.avals_out[0]), x)]


bitcast_convert_type_p = Primitive("bitcast_convert_type")
bitcast_convert_type_p.abstract_eval = _bitcast_abstract_eval
bitcast_convert_type_p.lower = _bitcast_lower


# =================================================================================================
# Differentiation and batching rules of the whole family.
#
# Rules are written with `lax` (the lazy yax.lax proxy), so every operation they bind is itself
# differentiable and batchable: derivatives of any order work. Tangents only ever meet linear
# primitives (mul/div by a primal coefficient, neg, select_n, convert_element_type, real, imag,
# conj), whose transposes are below, so reverse mode follows from linearize + transpose.
# The conventions at non-differentiable points follow JAX; docs/derivative_conventions.md lists
# them. A `None` rule means "zero derivative" (the output tangent is a symbolic Zero).
# =================================================================================================


def _dtype(x):
    return aval_of_value(x).dtype


def _const(like, value):
    """A strongly typed 0-d constant of `like`'s dtype: an inline literal when staged."""
    return TypedScalar(value, _dtype(like), weak_type=False)


def _trigamma(x):
    """psi'(x), the derivative of digamma, built from primitives (so it differentiates again).

    Reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x) for x < 1/2; otherwise the recurrence
    psi'(z) = psi'(z + 1) + 1/z^2 lifts z by 6, where the asymptotic series is accurate to
    ~1e-11 relative.
    """
    reflect = lax.lt(x, 0.5)
    z = lax.select(reflect, lax.sub(1.0, x), x)
    total = lax.integer_pow(z, -2)
    for k in range(1, 6):
        total = lax.add(total, lax.integer_pow(lax.add(z, float(k)), -2))
    w = lax.add(z, 6.0)
    series = lax.reciprocal(w)
    for power, coef in ((2, 1 / 2), (3, 1 / 6), (5, -1 / 30), (7, 1 / 42), (9, -1 / 30),
                        (11, 5 / 66)):
        series = lax.add(series, lax.mul(lax.integer_pow(w, -power), coef))
    direct = lax.add(total, series)
    # the reflected branch is evaluated at a harmless point where unused, so that its (discarded)
    # derivative cannot turn a zero cotangent into 0 * inf = nan
    xr = lax.select(reflect, x, _const(x, 0.25))
    pi_sin = lax.sin(lax.mul(xr, float(np.pi)))
    reflected = lax.sub(lax.div(float(np.pi) ** 2, lax.integer_pow(pi_sin, 2)), direct)
    return lax.select(reflect, reflected, direct)


def _abs_jvp_rule(t, out, x):
    if dtypes.is_complex(_dtype(x)):
        # d|z| = Re(conj(z) dz) / |z|; at z = 0 the denominator is replaced by 1, giving 0 (JAX)
        safe = lax.select(lax.eq(out, 0.0), _const(out, 1.0), out)
        coef = lax.div(lax.conj(x), lax.convert_element_type(safe, _dtype(x)))
        return lax.real(lax.mul(t, coef))
    # real: sign(x), taking +1 at x = 0 as JAX does (jax.grad(jnp.abs)(0.) == 1.)
    return lax.select(lax.ge(x, 0.0), t, lax.neg(t))


_TWO_OVER_SQRT_PI = float(2 / np.sqrt(np.pi))

# --- unary: rule(t, out, x) is the output tangent for input tangent t ---
UNARY_JVP_TABLE = {
    "neg": lambda t, out, x: lax.neg(t),
    # piecewise constant: zero derivative everywhere, also at the jumps (as JAX)
    "sign": None, "floor": None, "ceil": None, "round": None,
    # integer or bool outputs carry no tangent
    "is_finite": None, "not": None, "population_count": None,
    "abs": _abs_jvp_rule,
    "exp": lambda t, out, x: lax.mul(t, out),
    "exp2": lambda t, out, x: lax.mul(t, lax.mul(out, float(np.log(2.0)))),
    "log": lambda t, out, x: lax.div(t, x),
    "log1p": lambda t, out, x: lax.div(t, lax.add(x, 1.0)),
    "expm1": lambda t, out, x: lax.mul(t, lax.add(out, 1.0)),
    # 1 / (2 sqrt(x)): inf at x = 0 (as JAX)
    "sqrt": lambda t, out, x: lax.div(t, lax.mul(out, 2.0)),
    "rsqrt": lambda t, out, x: lax.mul(t, lax.mul(lax.div(out, x), -0.5)),
    "cbrt": lambda t, out, x: lax.mul(t, lax.div(lax.integer_pow(out, -2), 3.0)),
    "sin": lambda t, out, x: lax.mul(t, lax.cos(x)),
    "cos": lambda t, out, x: lax.mul(t, lax.neg(lax.sin(x))),
    "tan": lambda t, out, x: lax.mul(t, lax.add(lax.square(out), 1.0)),
    "asin": lambda t, out, x: lax.mul(t, lax.rsqrt(lax.sub(1.0, lax.square(x)))),
    "acos": lambda t, out, x: lax.mul(t, lax.neg(lax.rsqrt(lax.sub(1.0, lax.square(x))))),
    "atan": lambda t, out, x: lax.div(t, lax.add(lax.square(x), 1.0)),
    "sinh": lambda t, out, x: lax.mul(t, lax.cosh(x)),
    "cosh": lambda t, out, x: lax.mul(t, lax.sinh(x)),
    "tanh": lambda t, out, x: lax.mul(t, lax.sub(1.0, lax.square(out))),
    "asinh": lambda t, out, x: lax.mul(t, lax.rsqrt(lax.add(lax.square(x), 1.0))),
    "acosh": lambda t, out, x: lax.mul(t, lax.rsqrt(lax.mul(lax.sub(x, 1.0), lax.add(x, 1.0)))),
    "atanh": lambda t, out, x: lax.div(t, lax.mul(lax.sub(1.0, x), lax.add(x, 1.0))),
    "logistic": lambda t, out, x: lax.mul(t, lax.mul(out, lax.sub(1.0, out))),
    "erf": lambda t, out, x: lax.mul(t, lax.mul(lax.exp(lax.neg(lax.square(x))),
                                                _TWO_OVER_SQRT_PI)),
    "erfc": lambda t, out, x: lax.mul(t, lax.mul(lax.exp(lax.neg(lax.square(x))),
                                                 -_TWO_OVER_SQRT_PI)),
    "erf_inv": lambda t, out, x: lax.mul(t, lax.div(lax.exp(lax.square(out)),
                                                    _TWO_OVER_SQRT_PI)),
    "lgamma": lambda t, out, x: lax.mul(t, lax.digamma(x)),
    "digamma": lambda t, out, x: lax.mul(t, _trigamma(x)),
}
for _name, _rule in UNARY_JVP_TABLE.items():
    defjvp(unary_primitives[_name], _rule)
for _name in ("real", "imag", "conj"):
    linear_jvp(unary_primitives[_name])


def _real_transpose(cts, x):
    ct, = cts
    if dtypes.is_complex(x.aval.dtype):  # Re is transposed by embedding: ct + 0i
        return [lax.convert_element_type(ct, x.aval.dtype)]
    return [ct]


def _imag_transpose(cts, x):
    ct, = cts
    if dtypes.is_complex(x.aval.dtype):  # Im(z) = Re(-i z), transposed: -i ct
        return [lax.mul(lax.convert_element_type(ct, x.aval.dtype), -1j)]
    return [Zero(x.aval)]  # imag of a real array is the constant 0


unary_primitives["neg"].transpose = lambda cts, x: [lax.neg(cts[0])]
unary_primitives["real"].transpose = _real_transpose
unary_primitives["imag"].transpose = _imag_transpose
unary_primitives["conj"].transpose = lambda cts, x: [lax.conj(cts[0])]


# --- integer_pow: d x^y = y x^(y-1) ---

def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow_p.bind(x, y=y)
    if y == 0:  # constant 1: zero derivative, also at x = 0 (as JAX)
        return [out], [Zero(out.aval.strip_weak_type())]
    if y == 1:
        return [out], [t]
    x_pow = x if y == 2 else lax.integer_pow(x, y - 1)
    coef = lax.mul(x_pow, _const(x, y))
    return [out], [lax.mul(t, coef)]


integer_pow_p.jvp = _integer_pow_jvp


# --- binary: rules(t, out, x, y), one per operand ---

def _balanced(x, out, y):
    """d max(x, y) / dx: 1 where x alone is the result, 1/2 on ties (split as JAX), else 0."""
    on_tie = lax.select(lax.eq(y, out), _const(x, 0.5), _const(x, 1.0))
    return lax.select(lax.eq(x, out), on_tie, _const(x, 0.0))


def _trunc(q):
    return lax.mul(lax.sign(q), lax.floor(lax.abs(q)))


def _pow_jvp_x(t, out, x, y):
    if dtypes.is_int(_dtype(y)):
        # y x^(y-1) in x's dtype; y == 0 gives 0 (not 0 * inf) at x = 0, as JAX
        coef = lax.mul(lax.convert_element_type(y, _dtype(x)), lax.pow(x, lax.sub(y, 1)))
        return lax.mul(t, lax.select(lax.eq(y, 0), _const(x, 0.0), coef))
    # no guard for a float y: 0.0 ** 0.0 gives 0 * inf = nan, as JAX
    return lax.mul(t, lax.mul(y, lax.pow(x, lax.sub(y, 1.0))))


def _pow_jvp_y(t, out, x, y):
    # log(x) x^y, with log(0) read as 0 so that d/dy 0^y = 0 where 0^y is finite (as JAX)
    safe_x = lax.select(lax.eq(x, 0.0), _const(x, 1.0), x)
    return lax.mul(t, lax.mul(lax.log(safe_x), out))


def _atan2_denominator(x, y):
    return lax.add(lax.square(x), lax.square(y))


BINARY_JVP_TABLE = {
    "add": (lambda t, out, x, y: t, lambda t, out, x, y: t),
    "sub": (lambda t, out, x, y: t, lambda t, out, x, y: lax.neg(t)),
    "mul": (lambda t, out, x, y: lax.mul(t, y), lambda t, out, x, y: lax.mul(x, t)),
    "div": (lambda t, out, x, y: lax.div(t, y),
            lambda t, out, x, y: lax.mul(t, lax.neg(lax.div(out, y)))),
    # rem(x, y) = x - y trunc(x / y); the jumps where x / y is an integer get the one-sided value
    "rem": (lambda t, out, x, y: t,
            lambda t, out, x, y: lax.mul(t, lax.neg(_trunc(lax.div(x, y))))),
    "max": (lambda t, out, x, y: lax.mul(t, _balanced(x, out, y)),
            lambda t, out, x, y: lax.mul(t, _balanced(y, out, x))),
    "min": (lambda t, out, x, y: lax.mul(t, _balanced(x, out, y)),
            lambda t, out, x, y: lax.mul(t, _balanced(y, out, x))),
    "atan2": (lambda t, out, x, y: lax.mul(t, lax.div(y, _atan2_denominator(x, y))),
              lambda t, out, x, y: lax.mul(t, lax.neg(lax.div(x, _atan2_denominator(x, y))))),
    # a step to the adjacent float: piecewise constant on the float grid, zero derivative
    # (JAX defines none)
    "nextafter": (None, None),
    # integer/bool only
    "and": (None, None), "or": (None, None), "xor": (None, None),
    "shift_left": (None, None), "shift_right_logical": (None, None),
    "shift_right_arithmetic": (None, None),
}
for _name, _rules in BINARY_JVP_TABLE.items():
    defjvp(binary_primitives[_name], *_rules)
defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)
for _prim in comparison_primitives.values():  # bool outputs
    defjvp(_prim, None, None)


def _add_transpose(cts, x, y):
    ct, = cts
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(ct, y.aval) if is_undefined(y) else None]


def _sub_transpose(cts, x, y):
    ct, = cts
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(lax.neg(ct), y.aval) if is_undefined(y) else None]


def _mul_transpose(cts, x, y):
    ct, = cts
    if is_undefined(x) and is_undefined(y):
        raise ValueError("mul is linear in one operand at a time; both are undefined")
    if is_undefined(x):
        return [unbroadcast(lax.mul(ct, y), x.aval), None]
    return [None, unbroadcast(lax.mul(x, ct), y.aval)]


def _div_transpose(cts, x, y):
    ct, = cts
    if is_undefined(y):
        raise ValueError("div is linear in its numerator only; the divisor is undefined")
    return [unbroadcast(lax.div(ct, y), x.aval), None]


binary_primitives["add"].transpose = _add_transpose
binary_primitives["sub"].transpose = _sub_transpose
binary_primitives["mul"].transpose = _mul_transpose
binary_primitives["div"].transpose = _div_transpose


# --- select_n: linear in the cases, not in the selector ---

def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [select_n_p.bind(which, *(instantiate(t) for t in case_tangents))]


def _select_n_transpose(cts, which, *cases):
    ct, = cts
    if is_undefined(which):
        raise ValueError("select_n is not linear in its selector `which`")
    zero = _const(ct, 0)
    result = [None]
    for i, case in enumerate(cases):
        if not is_undefined(case):
            result.append(None)
            continue
        picked = select_n_p.bind(which, *(ct if j == i else zero for j in range(len(cases))))
        result.append(unbroadcast(picked, case.aval))
    return result


select_n_p.jvp = _select_n_jvp
select_n_p.transpose = _select_n_transpose


# --- clamp(lo, x, hi): at the boundaries nothing gets the tangent (as JAX) ---

def _where(pred, t):
    return lax.select(pred, t, 0.0)


defjvp(clamp_p,
       lambda t, out, lo, x, hi: _where(lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi)), t),
       lambda t, out, lo, x, hi: _where(lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi)), t),
       lambda t, out, lo, x, hi: _where(lax.lt(hi, x), t))


def _clamp_batch(args, dims):
    """Only the bounds may be rank 0 (x fixes the shape), so x always gets the batch axis."""
    size = axis_size_of(args, dims)
    (lo, x, hi), (lo_dim, x_dim, hi_dim) = args, dims
    x = move_batch_axis(x, x_dim, 0, size)

    def bound(b, bdim):
        if bdim is None and not np.shape(b):
            return b  # an unbatched scalar bound broadcasts by itself
        b = move_batch_axis(b, bdim, 0, size)
        return b if tuple(b.shape) == tuple(x.shape) else lax.broadcast_in_dim(b, x.shape, (0,))
    return [clamp_p.bind(bound(lo, lo_dim), x, bound(hi, hi_dim))], [0]


clamp_p.batch = _clamp_batch


# --- convert_element_type: linear between inexact dtypes; int/bool on either side: Zero ---

def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not (dtypes.is_inexact(_dtype(x)) and dtypes.is_inexact(new_dtype)):
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=False)]


def _convert_transpose(cts, x, *, new_dtype, weak_type=False):
    # back to the operand's dtype; complex -> real keeps the real part, the transpose of the
    # real -> complex embedding
    return [convert_element_type_p.bind(cts[0], new_dtype=x.aval.dtype, weak_type=False)]


convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.transpose = _convert_transpose


# --- bitcast_convert_type: a reinterpretation of bits, not differentiable ---

def _bitcast_jvp(primals, tangents, *, new_dtype):
    out = bitcast_convert_type_p.bind(primals[0], new_dtype=new_dtype)
    return [out], [Zero(out.aval.strip_weak_type())]


def _bitcast_batch(args, dims, *, new_dtype):
    # the last axis may appear or vanish, so the batch axis goes first, out of its way
    from yax.interpreters.batching import move_batch_axis
    x = move_batch_axis(args[0], dims[0], 0, args[0].shape[dims[0]])
    return [bitcast_convert_type_p.bind(x, new_dtype=new_dtype)], [0]


bitcast_convert_type_p.jvp = _bitcast_jvp
bitcast_convert_type_p.batch = _bitcast_batch


# --- batching: every other primitive of the family is elementwise ---

for _prim in [*unary_primitives.values(), *binary_primitives.values(),
              *comparison_primitives.values(), integer_pow_p, pow_p, select_n_p,
              convert_element_type_p]:
    broadcast_batcher(_prim)
