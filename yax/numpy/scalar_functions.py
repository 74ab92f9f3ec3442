"""yax.numpy elementwise functions composed of ufuncs: nan_to_num, angle and the modified Bessel
function i0.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr
from yax.numpy._promote import promote_dtypes_inexact

__all__ = ["nan_to_num", "angle", "i0"]


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default: the largest float), -inf -> `neginf`."""
    x = arr("nan_to_num", x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        re = nan_to_num(ufuncs.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(ufuncs.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return lax.convert_element_type(re, x.dtype) + 1j * lax.convert_element_type(
            im, x.dtype)
    info = np.finfo(np.float32) if x.dtype == dtypes.bfloat16 else np.finfo(x.dtype)
    big = float(dtypes.finfo(x.dtype).max) if x.dtype == dtypes.bfloat16 else float(info.max)
    pos = big if posinf is None else posinf
    neg = -big if neginf is None else neginf
    full = lambda v: manipulation.astype(arr("nan_to_num", v), x.dtype)  # noqa: E731
    out = ufuncs.where(ufuncs.isnan(x), full(nan), x)
    out = ufuncs.where(ufuncs.isposinf(x), full(pos), out)
    return ufuncs.where(ufuncs.isneginf(x), full(neg), out)


def angle(z, deg: bool = False):
    """The argument of complex `z` (radians, or degrees); 0 or pi for real inputs."""
    z = arr("angle", z)
    if dtypes.is_complex(z.dtype):
        re, im = ufuncs.real(z), ufuncs.imag(z)
    else:
        z, = promote_dtypes_inexact(z)
        re, im = z, creation.zeros((), arr("angle", z).dtype)
    out = ufuncs.arctan2(im, re)
    return ufuncs.rad2deg(out) if deg else out


_I0_SWITCH = 30.0


_I0_TERMS = 90  # at x = 30 the ratio of successive terms is 225 / k^2: tiny by k = 90


def i0(x):
    """The modified Bessel function of the first kind, order 0 (real inputs).

    The power series sum_k (x^2/4)^k / (k!)^2 for |x| <= 30 (its terms as one running product,
    all positive, so no cancellation) and the asymptotic expansion beyond; differentiable."""
    x, = promote_dtypes_inexact(arr("i0", x))
    x = arr("i0", x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("jnp.i0 of complex inputs is not supported")
    comp = np.float64 if x.dtype == np.float64 else np.float32
    ax = ufuncs.abs(manipulation.astype(x, comp))
    small = ax <= _I0_SWITCH
    xs = ufuncs.where(small, ax, creation.zeros((), comp))
    q = manipulation.expand_dims(xs * xs * 0.25, -1)
    k = np.arange(1, _I0_TERMS + 1, dtype=comp)
    terms = reductions.cumprod(q / creation.asarray(k * k, comp), axis=-1)
    total = 1.0 + reductions.sum(terms, axis=-1)
    xl = ufuncs.where(small, creation.full((), 2.0 * _I0_SWITCH, comp), ax)
    inv = 1.0 / (8.0 * xl)
    series = creation.ones((), comp) + xl * 0
    coef = 1.0
    for n in range(1, 12):  # coefficients ((2n-1)!!)^2 / n! of (8x)^-n
        coef = coef * (2 * n - 1) ** 2 / n
        series = series + coef * ufuncs.power(inv, n)
    large = ufuncs.exp(xl) / ufuncs.sqrt(2.0 * np.pi * xl) * series
    return manipulation.astype(ufuncs.where(small, total, large), x.dtype)
