"""The multivariate normal distribution (scipy.stats.multivariate_normal's logpdf and pdf).

`x` has the event dimension last (shape (..., d)); `mean` is (..., d); `cov` is a (..., d, d)
matrix, a (d,) diagonal or a scalar variance. The density is computed through the Cholesky
factor of `cov`: -1/2 (d log 2 pi + log det cov + |L^-1 (x - mean)|^2).
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy import linalg
from yax.scipy.stats._dist import promote_dtypes

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    """log density of N(mean, cov) at x. `allow_singular` must be None/False (as JAX)."""
    if allow_singular:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not supported")
    x, mean, cov = promote_dtypes("multivariate_normal.logpdf", x, mean, cov)
    d = mean.shape[-1] if mean.ndim else x.shape[-1]
    diff = x - mean
    log_norm = d * float(np.log(2 * np.pi))
    if cov.ndim < 2:  # scalar variance or diagonal
        var = jnp.broadcast_to(cov, diff.shape[-1:]) if cov.ndim else cov * jnp.ones(d, x.dtype)
        maha = jnp.sum(diff * diff / var, axis=-1)
        return -0.5 * (log_norm + jnp.sum(jnp.log(var), axis=-1) + maha)
    chol = jnp.linalg.cholesky(cov)
    batch = jnp.broadcast_shapes(diff.shape[:-1], cov.shape[:-2])
    chol = jnp.broadcast_to(chol, batch + (d, d))
    diff = jnp.broadcast_to(diff, batch + (d,))
    white = linalg.solve_triangular(chol, diff[..., None], lower=True)[..., 0]
    log_det = 2 * jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * (log_norm + log_det + jnp.sum(white * white, axis=-1))


def pdf(x, mean, cov):
    """density of N(mean, cov) at x."""
    return jnp.exp(logpdf(x, mean, cov))
