"""The generalized normal distribution (scipy.stats.gennorm with loc=0, scale=1, as JAX):
density beta / (2 Gamma(1/beta)) exp(-|x|^beta)."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._dist import promote

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, beta):
    """log density of gennorm with shape `beta`."""
    x, beta = promote("gennorm.logpdf", x, beta)
    return jnp.log(beta) - float(np.log(2)) - special.gammaln(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    """density of gennorm with shape `beta`."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """CDF 1/2 + sign(x) P(1/beta, |x|^beta) / 2."""
    x, beta = promote("gennorm.cdf", x, beta)
    return 0.5 + jnp.sign(x) * 0.5 * special.gammainc(1 / beta, jnp.abs(x) ** beta)
