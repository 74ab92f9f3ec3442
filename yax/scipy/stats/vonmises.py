"""The von Mises distribution on the circle (scipy.stats.vonmises, as JAX): density
exp(kappa cos x) / (2 pi I0(kappa)) (periodic, not restricted to [-pi, pi], as scipy)."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._dist import promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """log density; log I0(kappa) = log i0e(kappa) + kappa keeps large kappa finite."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    return kappa * (jnp.cos(x) - 1) - float(np.log(2 * np.pi)) - jnp.log(special.i0e(kappa))


def pdf(x, kappa):
    """density of the von Mises distribution."""
    return jnp.exp(logpdf(x, kappa))
