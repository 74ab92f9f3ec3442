"""The normal distribution (scipy.stats.norm's functions): densities, CDFs and quantiles with
location `loc` and scale `scale`, all through the standardised variable (x - loc) / scale."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.numpy._promote import promote_arrays_inexact
from yax.scipy import special

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "ppf"]

_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))  # a Python float: keeps float32 float32


def logpdf(x, loc=0, scale=1):
    """log of the normal density: -z^2/2 - log(scale) - log(2 pi)/2, z = (x - loc) / scale."""
    x, loc, scale = promote_arrays_inexact("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * (z * z) - jnp.log(scale) - _HALF_LOG_2PI


def pdf(x, loc=0, scale=1):
    """The normal density exp(logpdf(x, loc, scale))."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal CDF ndtr((x - loc) / scale)."""
    x, loc, scale = promote_arrays_inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """log of the normal CDF, log_ndtr((x - loc) / scale), accurate far into the lower tail."""
    x, loc, scale = promote_arrays_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """The normal quantile function loc + scale * ndtri(q), the inverse of cdf."""
    q, loc, scale = promote_arrays_inexact("norm.ppf", q, loc, scale)
    return loc + scale * special.ndtri(q)
