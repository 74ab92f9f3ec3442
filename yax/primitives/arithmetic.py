"""Arithmetic elementwise primitives, declared as table rows: neg, sign, floor, ceil, round, abs,
real, imag, conj; add, sub, mul, div, rem, max, min, pow; and integer_pow (a static exponent).

Each row carries its JVP. Rules are written with `lax` (the lazy yax.lax proxy), so every
operation they bind is itself differentiable and batchable: derivatives of any order work.
Tangents only ever meet linear primitives (mul/div by a primal coefficient, neg, select_n,
convert_element_type, real, imag, conj), whose transposes are here and in comparison.py and
conversions.py, so reverse mode follows from linearize + transpose. The conventions at
non-differentiable points follow JAX (docs/derivative_conventions.md); a `None` JVP means "zero
derivative" (the output tangent is a symbolic Zero).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import chlo, hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._ad_rules import LINEAR, broadcast_batcher, unbroadcast
from yax.primitives._checks import broadcast_elementwise_shapes, dtype_kind_check
from yax.primitives._elementwise_family import (
    binary_family,
    broadcast_operands,
    const,
    dtype_of,
    elementwise_primitive,
    nary_abstract_eval,
    op_lower,
    real_dtype,
    unary_family,
)
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import any_true, checked_by, fold

# --- unary ---------------------------------------------------------------------------------------


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


def _abs_jvp(t, out, x):
    if dtypes.is_complex(dtype_of(x)):
        # d|z| = Re(conj(z) dz) / |z|; at z = 0 the denominator is replaced by 1, giving 0 (JAX)
        safe = lax.select(lax.eq(out, 0.0), const(out, 1.0), out)
        coef = lax.div(lax.conj(x), lax.convert_element_type(safe, dtype_of(x)))
        return lax.real(lax.mul(t, coef))
    # real: sign(x), taking +1 at x = 0 as JAX does (jax.grad(jnp.abs)(0.) == 1.)
    return lax.select(lax.ge(x, 0.0), t, lax.neg(t))


UNARY_TABLE = [
    # name, dtype kind, lowering, output dtype function, jvp rule(t, out, x)
    ("neg", "numeric", op_lower(hlo.negate), None, lambda t, out, x: lax.neg(t)),
    # piecewise constant: zero derivative everywhere, also at the jumps (as JAX)
    ("sign", "numeric", _sign_lower, None, None),
    ("floor", "float", op_lower(hlo.floor), None, None),
    ("ceil", "float", op_lower(hlo.ceil), None, None),
    ("round", "float", _round_lower, None, None),
    ("abs", "numeric", _abs_lower, real_dtype, _abs_jvp),
    ("real", "inexact", op_lower(hlo.real), real_dtype, LINEAR),
    ("imag", "inexact", op_lower(hlo.imag), real_dtype, LINEAR),
    ("conj", "inexact", op_lower(chlo.conj), None, LINEAR),
]
unary_primitives = unary_family(UNARY_TABLE)


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


unary_primitives["neg"].define(transpose=lambda cts, x: [lax.neg(cts[0])])
unary_primitives["real"].define(transpose=_real_transpose)
unary_primitives["imag"].define(transpose=_imag_transpose)
unary_primitives["conj"].define(transpose=lambda cts, x: [lax.conj(cts[0])])


# --- integer_pow: x ** y for a static Python int y; d x^y = y x^(y-1) ----------------------------

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


def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow_p.bind(x, y=y)
    if y == 0:  # constant 1: zero derivative, also at x = 0 (as JAX)
        return [out], [Zero(out.aval.strip_weak_type())]
    if y == 1:
        return [out], [t]
    x_pow = x if y == 2 else lax.integer_pow(x, y - 1)
    coef = lax.mul(x_pow, const(x, y))
    return [out], [lax.mul(t, coef)]


integer_pow_p = Primitive("integer_pow", abstract_eval=_integer_pow_abstract_eval,
                          lower=_integer_pow_lower, jvp=_integer_pow_jvp)
broadcast_batcher(integer_pow_p)


# --- binary: jvp rules(t, out, x, y), one per operand --------------------------------------------

def _balanced(x, out, y):
    """d max(x, y) / dx: 1 where x alone is the result, 1/2 on ties (split as JAX), else 0."""
    on_tie = lax.select(lax.eq(y, out), const(x, 0.5), const(x, 1.0))
    return lax.select(lax.eq(x, out), on_tie, const(x, 0.0))


def _trunc(q):
    return lax.mul(lax.sign(q), lax.floor(lax.abs(q)))


BINARY_TABLE = [
    # name, dtype kind, lowering, (jvp_x, jvp_y)
    ("add", "any", op_lower(hlo.add), (lambda t, out, x, y: t, lambda t, out, x, y: t)),
    ("sub", "numeric", op_lower(hlo.subtract),
     (lambda t, out, x, y: t, lambda t, out, x, y: lax.neg(t))),
    ("mul", "any", op_lower(hlo.multiply),
     (lambda t, out, x, y: lax.mul(t, y), lambda t, out, x, y: lax.mul(x, t))),
    ("div", "numeric", op_lower(hlo.divide),
     (lambda t, out, x, y: lax.div(t, y),  # -t x / y^2, factored as JAX's (rounds alike)
      lambda t, out, x, y: lax.mul(lax.mul(lax.neg(t), x), lax.integer_pow(y, -2)))),
    # rem(x, y) = x - y trunc(x / y); the jumps where x / y is an integer get the one-sided value
    ("rem", "numeric", op_lower(hlo.remainder),
     (lambda t, out, x, y: t, lambda t, out, x, y: lax.mul(t, lax.neg(_trunc(lax.div(x, y)))))),
    ("max", "any", op_lower(hlo.maximum),
     (lambda t, out, x, y: lax.mul(t, _balanced(x, out, y)),
      lambda t, out, x, y: lax.mul(t, _balanced(y, out, x)))),
    ("min", "any", op_lower(hlo.minimum),
     (lambda t, out, x, y: lax.mul(t, _balanced(x, out, y)),
      lambda t, out, x, y: lax.mul(t, _balanced(y, out, x)))),
]
binary_primitives = binary_family(BINARY_TABLE)


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


binary_primitives["add"].define(transpose=_add_transpose)
binary_primitives["sub"].define(transpose=_sub_transpose)
binary_primitives["mul"].define(transpose=_mul_transpose)
binary_primitives["div"].define(transpose=_div_transpose)


def _division_by_zero(error, args, outs):
    """checkify's "div" check: an integer divisor that is zero."""
    divisor = error.eqn.inputs[1].aval
    if "div" not in error.enabled or not dtypes.is_int(divisor.dtype):
        return error
    zero = lax.eq(args[1], np.zeros((), divisor.dtype))
    return fold(error, any_true(zero), f"division by zero in {error.eqn.primitive.name}")


binary_primitives["div"].define(checkify=checked_by(_division_by_zero))
binary_primitives["rem"].define(checkify=checked_by(_division_by_zero))


# --- pow(x, y): a float base, a float or integer exponent ----------------------------------------

def _pow_abstract_eval(x, y):
    dtype_kind_check("pow", x, "inexact")
    if dtypes.is_int(y.dtype):
        shape = broadcast_elementwise_shapes("pow", [x, y])
        return ShapedArray(shape, x.dtype, x.weak_type)
    return nary_abstract_eval("pow", "inexact")(x, y)


def _pow_lower(ctx, x, y):
    xa, ya = ctx.avals_in
    if ya.dtype != xa.dtype:  # integer exponent: compute in the base's dtype
        y = hlo.convert(mlir.tensor_type(ya.shape, xa.dtype), y)
        ctx = type(ctx)(ctx.module_ctx, [xa, ShapedArray(ya.shape, xa.dtype)], ctx.avals_out)
    return [hlo.power(*broadcast_operands(ctx, [x, y]))]


def _pow_jvp_x(t, out, x, y):
    if dtypes.is_int(dtype_of(y)):
        # y x^(y-1) in x's dtype; y == 0 gives 0 (not 0 * inf) at x = 0, as JAX
        coef = lax.mul(lax.convert_element_type(y, dtype_of(x)), lax.pow(x, lax.sub(y, 1)))
        return lax.mul(t, lax.select(lax.eq(y, 0), const(x, 0.0), coef))
    # no guard for a float y: 0.0 ** 0.0 gives 0 * inf = nan, as JAX
    return lax.mul(t, lax.mul(y, lax.pow(x, lax.sub(y, 1.0))))


def _pow_jvp_y(t, out, x, y):
    # log(x) x^y, with log(0) read as 0 so that d/dy 0^y = 0 where 0^y is finite (as JAX)
    safe_x = lax.select(lax.eq(x, 0.0), const(x, 1.0), x)
    return lax.mul(t, lax.mul(lax.log(safe_x), out))


pow_p = elementwise_primitive("pow", _pow_abstract_eval, _pow_lower, _pow_jvp_x, _pow_jvp_y)
