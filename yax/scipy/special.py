"""Special functions (scipy.special's API). This module holds the error functions, log-gamma,
logistic and the safe x*log(y) forms; the gamma/beta family (_special_gamma.py), the exponential
and oscillatory integrals (_special_integrals.py), the normal distribution (_special_normal.py),
Bessel functions (_special_bessel.py), information theory (_special_entropy.py), Box-Cox and
softmax (_special_transforms.py), hypergeometric functions (_special_hypergeometric.py),
spherical harmonics (_special_harmonics.py) and wofz (_special_faddeeva.py) are re-exported from
their modules.

Every function promotes its arguments to an inexact dtype and is a composition of yax.lax
operations, so it is differentiable and batchable. Where one branch of a `where` would be
inf or NaN, the branch is fed a safe input first (the "double where"), so gradients stay finite.
"""

from __future__ import annotations

import yax.numpy as jnp
from yax import lax
from yax.nn.functions import logsumexp
from yax.numpy._promote import promote_arrays_inexact
from yax.numpy._ufunc_builders import one_program_when_eager
from yax.scipy import (
    _special_bessel,
    _special_entropy,
    _special_faddeeva,
    _special_gamma,
    _special_harmonics,
    _special_hypergeometric,
    _special_integrals,
    _special_normal,
    _special_transforms,
)
from yax.scipy._special_bessel import *  # noqa: F401,F403
from yax.scipy._special_entropy import *  # noqa: F401,F403
from yax.scipy._special_faddeeva import *  # noqa: F401,F403
from yax.scipy._special_gamma import *  # noqa: F401,F403
from yax.scipy._special_harmonics import *  # noqa: F401,F403
from yax.scipy._special_hypergeometric import *  # noqa: F401,F403
from yax.scipy._special_integrals import *  # noqa: F401,F403
from yax.scipy._special_normal import *  # noqa: F401,F403
from yax.scipy._special_transforms import *  # noqa: F401,F403

__all__ = [
    "logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "xlogy", "xlog1py", "expit",
    "logit", "betaln",
    *(name for module in (_special_gamma, _special_integrals, _special_normal, _special_bessel,
                          _special_entropy, _special_transforms, _special_hypergeometric,
                          _special_harmonics, _special_faddeeva)
      for name in module.__all__),
]


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


@one_program_when_eager
def xlogy(x, y, /):
    """x * log(y), with 0 where x == 0 (scipy.special.xlogy)."""
    return _x_times("xlogy", jnp.log, 0.0, x, y)


@one_program_when_eager
def xlog1py(x, y, /):
    """x * log1p(y), with 0 where x == 0 (scipy.special.xlog1py)."""
    return _x_times("xlog1py", jnp.log1p, -1.0, x, y)


def betaln(a, b, /):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = promote_arrays_inexact("betaln", a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__, "jax.scipy.special")  # JAX names yax lacks
