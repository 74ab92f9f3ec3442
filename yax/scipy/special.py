"""Special functions (scipy.special's API). This module holds the error functions, log-gamma,
logistic, the normal distribution function and its logarithm and the safe x*log(y) forms; the
gamma/beta family (_special_gamma.py), the exponential and oscillatory integrals
(_special_integrals.py) and Bessel, information-theory, hypergeometric and spherical-harmonic
functions (_special_misc.py) are re-exported from their modules.

Every function promotes its arguments to an inexact dtype and is a composition of yax.lax
operations, so it is differentiable and batchable. Where one branch of a `where` would be
inf or NaN, the branch is fed a safe input first (the "double where"), so gradients stay finite.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.nn.functions import logsumexp
from yax.numpy._promote import promote_arrays_inexact
from yax.scipy import _special_gamma as _gamma
from yax.scipy import _special_integrals as _integrals
from yax.scipy import _special_misc as _misc
from yax.scipy._special_gamma import *  # noqa: F401,F403
from yax.scipy._special_integrals import *  # noqa: F401,F403
from yax.scipy._special_misc import *  # noqa: F401,F403

__all__ = [
    "logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "xlogy", "xlog1py", "expit",
    "logit", "betaln", "ndtr", "ndtri", "log_ndtr",
    *_gamma.__all__, *_integrals.__all__, *_misc.__all__,
]


# Python floats (weakly typed) so that float32 inputs stay float32 under x64.
_SQRT2 = float(np.sqrt(2))
_INV_SQRT2 = float(1 / np.sqrt(2))
_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))


def _unary(name, lax_fn, doc):
    def fn(x, /):
        (x,) = promote_arrays_inexact(name, x)
        return lax_fn(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _unary("erf", lax.erf, "The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt.")
erfc = _unary("erfc", lax.erfc, "The complementary error function 1 - erf(x).")
erfinv = _unary("erfinv", lax.erf_inv, "The inverse of erf on (-1, 1).")
gammaln = _unary("gammaln", lax.lgamma, "log|Gamma(x)|.")
digamma = _unary("digamma", lax.digamma, "The logarithmic derivative of Gamma, psi(x).")
expit = _unary("expit", lax.logistic, "The logistic function 1 / (1 + exp(-x)).")


def logit(x, /):
    """log(x / (1 - x)), the inverse of expit."""
    (x,) = promote_arrays_inexact("logit", x)
    return jnp.log(x / (1 - x))


def _x_times(name, log_fn, domain_low, x, y):
    """x * log_fn(y), defined as 0 where x == 0 (even if log_fn(y) is inf), with finite
    gradients there: where x == 0 and y is outside the domain (y <= domain_low), y is
    replaced by 1 before the logarithm is taken."""
    x, y = promote_arrays_inexact(name, x, y)
    y_ok = jnp.greater(y, domain_low)
    safe_y = jnp.where(jnp.not_equal(x, 0) | y_ok, y, 1.0)
    # No outer `where`: at x == 0 the product is already 0, and d/dx stays log_fn(y).
    return x * log_fn(safe_y)


def xlogy(x, y, /):
    """x * log(y), with 0 where x == 0 (scipy.special.xlogy)."""
    return _x_times("xlogy", jnp.log, 0.0, x, y)


def xlog1py(x, y, /):
    """x * log1p(y), with 0 where x == 0 (scipy.special.xlog1py)."""
    return _x_times("xlog1py", jnp.log1p, -1.0, x, y)


def betaln(a, b, /):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = promote_arrays_inexact("betaln", a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


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

from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__, "jax.scipy.special")  # JAX names yax lacks
