"""Elementwise primitives, declared as table rows: unary, binary, comparisons, plus select_n,
clamp, integer_pow, convert_element_type and bitcast_convert_type.

Operands of an n-ary elementwise primitive share one shape; rank-0 operands broadcast implicitly
(so `mul x 2.0` needs no broadcast equation). Differentiation and batching rules are added here,
next to each primitive, by the autodiff and vmap issues.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import chlo, hlo
from yax.primitives._checks import broadcast_elementwise_shapes, dtype_kind_check, same_dtypes


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


# --- differentiation rules (model rules; the rest of the family follows the same pattern) ---
from yax.interpreters.transpose import is_undefined  # noqa: E402
from yax.primitives._ad_rules import defjvp, unbroadcast  # noqa: E402
from yax.primitives._lax import lax  # noqa: E402

defjvp(binary_primitives["add"], lambda t, out, x, y: t, lambda t, out, x, y: t)
defjvp(binary_primitives["sub"], lambda t, out, x, y: t, lambda t, out, x, y: lax.neg(t))
defjvp(binary_primitives["mul"], lambda t, out, x, y: lax.mul(t, y),
       lambda t, out, x, y: lax.mul(x, t))
defjvp(unary_primitives["neg"], lambda t, out, x: lax.neg(t))
defjvp(unary_primitives["sin"], lambda t, out, x: lax.mul(t, lax.cos(x)))
defjvp(unary_primitives["cos"], lambda t, out, x: lax.neg(lax.mul(t, lax.sin(x))))
defjvp(unary_primitives["exp"], lambda t, out, x: lax.mul(t, out))


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


binary_primitives["add"].transpose = _add_transpose
binary_primitives["sub"].transpose = _sub_transpose
binary_primitives["mul"].transpose = _mul_transpose
unary_primitives["neg"].transpose = lambda cts, x: [lax.neg(cts[0])]

from yax.primitives._ad_rules import broadcast_batcher  # noqa: E402

for _prim in [*unary_primitives.values(), *binary_primitives.values(),
              *comparison_primitives.values(), integer_pow_p, pow_p, select_n_p, clamp_p,
              convert_element_type_p]:
    broadcast_batcher(_prim)
