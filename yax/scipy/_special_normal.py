"""The standard normal distribution's special functions: ndtr (the CDF), ndtri (its inverse)
and log_ndtr (its logarithm, accurate in both tails).
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.numpy._promote import promote_arrays_inexact
from yax.numpy._ufunc_builders import one_program_when_eager

__all__ = ["ndtr", "ndtri", "log_ndtr"]

# Python floats (weakly typed) so that float32 inputs stay float32 under x64.
_SQRT2 = float(np.sqrt(2))
_INV_SQRT2 = float(1 / np.sqrt(2))
_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))


@one_program_when_eager
def ndtr(x, /):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2)): erfc keeps the lower tail accurate
    relative to its (tiny) value."""
    (x,) = promote_arrays_inexact("ndtr", x)
    return 0.5 * lax.erfc(x * -_INV_SQRT2)


def ndtri(p, /):
    """The inverse of ndtr (the standard normal quantile function), sqrt(2) * erfinv(2p - 1)."""
    (p,) = promote_arrays_inexact("ndtri", p)
    return _SQRT2 * lax.erf_inv(2 * p - 1)


def _log_ndtr_asymptotic(x, terms: int = 6):
    """log ndtr(x) for very negative x by the asymptotic (Mills ratio) series
    ndtr(x) ~ exp(-x^2/2) / (-x sqrt(2 pi)) * (1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    x_sq = x * x
    inv_x_sq = 1 / x_sq
    term = jnp.ones_like(x)
    total = jnp.ones_like(x)
    for n in range(1, terms + 1):
        term = term * (-(2 * n - 1)) * inv_x_sq
        total = total + term
    return -0.5 * x_sq - jnp.log(-x) - _HALF_LOG_2PI + jnp.log(total)


@one_program_when_eager
def log_ndtr(x, /):
    """log(ndtr(x)), accurate in both tails.

    Three regimes: for x > 0, log1p(-ndtr(-x)) (ndtr(x) is close to 1); for moderately
    negative x, log(ndtr(x)); below a dtype-dependent threshold, where ndtr underflows, the
    asymptotic series. Each branch sees a safe input so that no branch makes NaN gradients.
    """
    (x,) = promote_arrays_inexact("log_ndtr", x)
    lower = -20.0 if x.dtype == np.float64 else -10.0
    zero = jnp.zeros_like(x)
    upper_x = jnp.where(x > 0, x, zero)
    middle_x = jnp.where((x <= 0) & (x >= lower), x, zero)
    lower_x = jnp.where(x < lower, x, zero + lower)
    return jnp.where(
        x > 0, jnp.log1p(-ndtr(-upper_x)),
        jnp.where(x >= lower, jnp.log(ndtr(middle_x)), _log_ndtr_asymptotic(lower_x)))
