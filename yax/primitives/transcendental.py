"""Transcendental elementwise primitives, declared as table rows: exponentials and logarithms,
roots, trigonometric and hyperbolic functions and their inverses, logistic, erf and friends,
lgamma, digamma; and the binary atan2 and nextafter.

Each row carries its JVP, written with `lax` (the lazy yax.lax proxy) so that derivatives of any
order work; the conventions at singular points follow JAX (docs/derivative_conventions.md).
"""

from __future__ import annotations

import numpy as np

from yax.interpreters import mlir
from yax.interpreters.mlir import chlo, hlo
from yax.primitives._elementwise_family import (
    binary_family,
    const,
    op_lower,
    unary_family,
)
from yax.primitives._lax import lax


def _exp2_lower(ctx, x):
    log2 = mlir.full_like_aval(np.log(2.0), ctx.avals_in[0])
    return [hlo.exponential(hlo.multiply(x, log2))]


def _sin_cos_lower(real_op, which: str):
    """sin/cos lowerings: the StableHLO op for real operands; for complex ones, the identities
    sin(a + ib) = sin a cosh b + i cos a sinh b and cos(a + ib) = cos a cosh b - i sin a sinh b,
    with sinh and cosh made from expm1 (no cancellation for small |b|) and an exactly zero
    imaginary part (sin) or real part kept finite (cos) when a = 0. This is JAX's complex
    sin/cos, so complex results and derivatives round as JAX's."""
    def rule(ctx, x, **params):
        aval, = ctx.avals_in
        if not np.issubdtype(aval.dtype, np.complexfloating):
            return [real_op(x)]
        part = type(aval)(aval.shape, np.finfo(aval.dtype).dtype)
        zero, two = mlir.full_like_aval(0, part), mlir.full_like_aval(2, part)
        a, b = hlo.real(x), hlo.imag(x)
        sn, cs = hlo.sine(a), hlo.cosine(a)
        e1m, e2m = hlo.exponential_minus_one(b), hlo.exponential_minus_one(hlo.negate(b))
        sinh_b = hlo.divide(hlo.subtract(e1m, e2m), two)
        cosh_b = hlo.divide(hlo.add(hlo.add(e1m, e2m), two), two)
        a_is_zero = hlo.compare(a, zero, hlo.ComparisonDirectionAttr.get("EQ"),
                                compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))
        if which == "sin":
            re, im = hlo.multiply(sn, cosh_b), hlo.multiply(cs, sinh_b)
            special = hlo.complex(zero, im)
        else:
            re, im = hlo.multiply(cs, cosh_b), hlo.multiply(hlo.negate(sn), sinh_b)
            special = hlo.complex(re, zero)
        return [hlo.select(a_is_zero, special, hlo.complex(re, im))]
    return rule


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
    xr = lax.select(reflect, x, const(x, 0.25))
    pi_sin = lax.sin(lax.mul(xr, float(np.pi)))
    reflected = lax.sub(lax.div(float(np.pi) ** 2, lax.integer_pow(pi_sin, 2)), direct)
    return lax.select(reflect, reflected, direct)


_TWO_OVER_SQRT_PI = float(2 / np.sqrt(np.pi))

UNARY_TABLE = [
    # name, dtype kind, lowering, output dtype function, jvp rule(t, out, x)
    ("exp", "inexact", op_lower(hlo.exponential), None, lambda t, out, x: lax.mul(t, out)),
    ("exp2", "inexact", _exp2_lower, None,
     lambda t, out, x: lax.mul(float(np.log(2.0)), lax.mul(t, out))),
    ("log", "inexact", op_lower(hlo.log), None, lambda t, out, x: lax.div(t, x)),
    ("log1p", "inexact", op_lower(hlo.log_plus_one), None,
     lambda t, out, x: lax.div(t, lax.add(x, 1.0))),
    ("expm1", "inexact", op_lower(hlo.exponential_minus_one), None,
     lambda t, out, x: lax.mul(t, lax.add(out, 1.0))),
    # t (0.5 / sqrt(x)): inf at x = 0; the derivative rules below are factored as JAX's, so
    # that derivatives round (and print) as JAX's do
    ("sqrt", "inexact", op_lower(hlo.sqrt), None, lambda t, out, x: lax.mul(t, lax.div(0.5, out))),
    ("rsqrt", "inexact", op_lower(hlo.rsqrt), None,
     lambda t, out, x: lax.mul(t, lax.mul(lax.div(out, x), -0.5))),
    ("cbrt", "float", op_lower(hlo.cbrt), None,
     lambda t, out, x: lax.mul(t, lax.mul(1 / 3, lax.integer_pow(out, -2)))),
    ("sin", "inexact", _sin_cos_lower(hlo.sine, "sin"), None,
     lambda t, out, x: lax.mul(t, lax.cos(x))),
    ("cos", "inexact", _sin_cos_lower(hlo.cosine, "cos"), None,
     lambda t, out, x: lax.mul(t, lax.neg(lax.sin(x)))),
    ("tan", "inexact", op_lower(hlo.tan), None,
     lambda t, out, x: lax.mul(t, lax.add(lax.square(out), 1.0))),
    ("asin", "inexact", op_lower(chlo.asin), None,
     lambda t, out, x: lax.mul(t, lax.rsqrt(lax.sub(1.0, lax.square(x))))),
    ("acos", "inexact", op_lower(chlo.acos), None,
     lambda t, out, x: lax.mul(t, lax.neg(lax.rsqrt(lax.sub(1.0, lax.square(x)))))),
    ("atan", "inexact", op_lower(chlo.atan), None,
     lambda t, out, x: lax.div(t, lax.add(lax.square(x), 1.0))),
    ("sinh", "inexact", op_lower(chlo.sinh), None, lambda t, out, x: lax.mul(t, lax.cosh(x))),
    ("cosh", "inexact", op_lower(chlo.cosh), None, lambda t, out, x: lax.mul(t, lax.sinh(x))),
    # (t + t tanh) (1 - tanh), not t (1 - tanh^2): JAX's factoring, so that gradients round
    # (and print) as JAX's do; it keeps JAX's two residuals (tanh and 1 - tanh)
    ("tanh", "inexact", op_lower(hlo.tanh), None,
     lambda t, out, x: lax.mul(lax.add(t, lax.mul(t, out)), lax.sub(1.0, out))),
    ("asinh", "inexact", op_lower(chlo.asinh), None,
     lambda t, out, x: lax.mul(t, lax.rsqrt(lax.add(lax.square(x), 1.0)))),
    ("acosh", "inexact", op_lower(chlo.acosh), None,
     lambda t, out, x: lax.mul(t, lax.rsqrt(lax.mul(lax.sub(x, 1.0), lax.add(x, 1.0))))),
    ("atanh", "inexact", op_lower(chlo.atanh), None,
     lambda t, out, x: lax.div(t, lax.mul(lax.sub(1.0, x), lax.add(x, 1.0)))),
    ("logistic", "inexact", op_lower(hlo.logistic), None,
     lambda t, out, x: lax.mul(t, lax.mul(out, lax.sub(1.0, out)))),
    ("erf", "float", op_lower(chlo.erf), None,
     lambda t, out, x: lax.mul(t, lax.mul(lax.exp(lax.neg(lax.square(x))), _TWO_OVER_SQRT_PI))),
    ("erfc", "float", op_lower(chlo.erfc), None,
     lambda t, out, x: lax.mul(t, lax.mul(lax.exp(lax.neg(lax.square(x))), -_TWO_OVER_SQRT_PI))),
    ("erf_inv", "float", op_lower(chlo.erf_inv), None,
     lambda t, out, x: lax.mul(t, lax.div(lax.exp(lax.square(out)), _TWO_OVER_SQRT_PI))),
    ("lgamma", "float", op_lower(chlo.lgamma), None, lambda t, out, x: lax.mul(t, lax.digamma(x))),
    ("digamma", "float", op_lower(chlo.digamma), None, lambda t, out, x: lax.mul(t, _trigamma(x))),
]
unary_primitives = unary_family(UNARY_TABLE)


def _atan2_denominator(x, y):
    return lax.add(lax.square(x), lax.square(y))


BINARY_TABLE = [
    # name, dtype kind, lowering, (jvp_x, jvp_y)
    ("atan2", "float", op_lower(hlo.atan2),
     (lambda t, out, x, y: lax.mul(t, lax.div(y, _atan2_denominator(x, y))),
      lambda t, out, x, y: lax.mul(t, lax.neg(lax.div(x, _atan2_denominator(x, y)))))),
    # a step to the adjacent float: piecewise constant on the float grid, zero derivative
    # (JAX defines none)
    ("nextafter", "float", op_lower(chlo.next_after), (None, None)),
]
binary_primitives = binary_family(BINARY_TABLE)
