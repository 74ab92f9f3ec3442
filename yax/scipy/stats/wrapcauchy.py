"""The wrapped Cauchy distribution (scipy.stats.wrapcauchy, as JAX): density
(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) on [0, 2 pi], 0 < c < 1."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy.stats._dist import promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """log density of the wrapped Cauchy distribution."""
    x, c = promote("wrapcauchy.logpdf", x, c)
    value = (jnp.log1p(-c * c) - float(np.log(2 * np.pi))
             - jnp.log1p(c * c - 2 * c * jnp.cos(x)))
    inside = (x >= 0) & (x <= 2 * np.pi) & (c > 0) & (c < 1)
    return jnp.where(inside, value, jnp.where((c > 0) & (c < 1), -jnp.inf, jnp.nan))


def pdf(x, c):
    """density of the wrapped Cauchy distribution."""
    return jnp.exp(logpdf(x, c))
