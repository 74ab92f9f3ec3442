"""yax.numpy floating-point ufuncs beyond the families: hypot, copysign, logaddexp(2), real/imag/
conjugate, heaviside, sinc, isclose and allclose.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.numpy._promote import broadcast_shapes, shape_of
from yax.numpy._ufunc_builders import (
    _dtype,
    one_program_when_eager,
    promote_args,
    promote_args_inexact,
)
from yax.numpy.creation import full_like, zeros_like
from yax.numpy.ufunc_arithmetic import (
    _as_array,
    absolute,
    add,
    equal,
    less_equal,
    multiply,
    subtract,
)
from yax.numpy.ufunc_comparisons import (
    isfinite,
    isinf,
    isnan,
    logical_and,
    logical_or,
    signbit,
    where,
)
from yax.transforms.custom_derivatives import custom_jvp

__all__ = ["hypot", "copysign", "logaddexp", "logaddexp2", "real", "imag", "conj", "conjugate",
           "heaviside", "sinc", "isclose", "allclose"]


# --- more floating-point functions ---------------------------------------------------------------

@one_program_when_eager
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


@one_program_when_eager
def copysign(x1, x2, /):
    """|x1| with the sign of x2."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if dtypes.is_complex(_dtype(x1)):
        raise TypeError("copysign does not support complex inputs")
    mag = lax.abs(x1)
    return where(signbit(x2), lax.neg(mag), mag)


@one_program_when_eager
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


@one_program_when_eager
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


@one_program_when_eager
def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, and nan where x1 is nan."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    at_zero_or_nan = where(lax.ne(x1, x1), x1, x2)
    return where(lax.lt(x1, 0.0), 0.0, where(lax.gt(x1, 0.0), 1.0, at_zero_or_nan))


@one_program_when_eager
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
