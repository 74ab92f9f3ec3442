"""The truncated normal distribution (scipy.stats.truncnorm): the normal restricted to
[a, b] in standardised units. Normalisers are differences of normal CDFs taken in log space, in
the upper tail through the survival function, so far tails stay accurate."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._dist import promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))


def _log_diff(log_hi, log_lo):
    """log(exp(log_hi) - exp(log_lo)) for log_hi >= log_lo."""
    return log_hi + jnp.log1p(-jnp.exp(log_lo - log_hi))


def _log_mass(lo, hi):
    """log(Phi(hi) - Phi(lo)); through Phi(-lo) - Phi(-hi) when lo > 0 (the upper tail)."""
    upper = lo > 0
    return jnp.where(upper, _log_diff(special.log_ndtr(-lo), special.log_ndtr(-hi)),
                     _log_diff(special.log_ndtr(hi), special.log_ndtr(lo)))


def _standard(name, x, a, b, loc, scale):
    x, a, b, loc, scale = promote(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, scale


def logpdf(x, a, b, loc=0, scale=1):
    """log density: norm.logpdf(z) - log(Phi(b) - Phi(a)) - log(scale) on [a, b]."""
    z, a, b, scale = _standard("truncnorm.logpdf", x, a, b, loc, scale)
    value = -0.5 * z * z - _HALF_LOG_2PI - _log_mass(a, b) - jnp.log(scale)
    return jnp.where((z >= a) & (z <= b), value, -jnp.inf)


def pdf(x, a, b, loc=0, scale=1):
    """density of the truncated normal."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """log CDF: log(Phi(z) - Phi(a)) - log(Phi(b) - Phi(a))."""
    z, a, b, _ = _standard("truncnorm.logcdf", x, a, b, loc, scale)
    zc = jnp.clip(z, a, b)
    value = _log_mass(a, zc) - _log_mass(a, b)
    return jnp.where(z <= a, -jnp.inf, jnp.where(z >= b, 0.0, value))


def cdf(x, a, b, loc=0, scale=1):
    """CDF of the truncated normal."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """log survival function: log(Phi(b) - Phi(z)) - log(Phi(b) - Phi(a))."""
    z, a, b, _ = _standard("truncnorm.logsf", x, a, b, loc, scale)
    zc = jnp.clip(z, a, b)
    value = _log_mass(zc, b) - _log_mass(a, b)
    return jnp.where(z <= a, 0.0, jnp.where(z >= b, -jnp.inf, value))


def sf(x, a, b, loc=0, scale=1):
    """survival function of the truncated normal."""
    return jnp.exp(logsf(x, a, b, loc, scale))
