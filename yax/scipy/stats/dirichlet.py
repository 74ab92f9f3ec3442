"""The Dirichlet distribution (scipy.stats.dirichlet's logpdf and pdf): `x` holds the K
components (or K - 1, the last being 1 - sum) along its first axis, `alpha` is (K,)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._dist import promote_dtypes

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    """sum_i (alpha_i - 1) log x_i - sum_i gammaln(alpha_i) + gammaln(sum_i alpha_i), -inf off
    the simplex."""
    x, alpha = promote_dtypes("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional, got {alpha.shape}")
    k = alpha.shape[0]
    if x.shape[0] == k - 1:
        x = jnp.concatenate([x, (1 - jnp.sum(x, axis=0))[None]], axis=0)
    elif x.shape[0] != k:
        raise ValueError(f"dirichlet.logpdf: x's first axis must have {k} or {k - 1} entries, "
                         f"got shape {x.shape}")
    a = jnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    log_norm = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    value = jnp.sum(special.xlogy(a - 1, x), axis=0) - log_norm
    on_simplex = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-4)
    return jnp.where(on_simplex, value, -jnp.inf)


def pdf(x, alpha):
    """density of the Dirichlet distribution."""
    return jnp.exp(logpdf(x, alpha))
