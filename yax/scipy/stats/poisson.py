"""The Poisson distribution (scipy.stats.poisson: logpmf, pmf, cdf and entropy)."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._discrete import discrete
from yax.scipy.stats._dist import promote


def _log_pmf(k, mu):
    return special.xlogy(k, mu) - mu - special.gammaln(k + 1)


discrete(globals(), "poisson", 1, _log_pmf)
__all__ = ["logpmf", "pmf", "cdf", "entropy"]  # noqa: F822  (logpmf, pmf defined by discrete)


def cdf(k, mu, loc=0):
    """P(K <= k) = Q(floor(k) + 1, mu) (the regularized upper incomplete gamma function)."""
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    k = jnp.floor(k - loc)
    return jnp.where(k < 0, 0.0, special.gammaincc(jnp.maximum(k, 0.0) + 1, mu))


_ENTROPY_TERMS = 400


def entropy(mu, loc=0):
    """-sum_k pmf(k) log pmf(k): summed over k < 400 for mu <= 150, the asymptotic expansion
    1/2 log(2 pi e mu) - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3) above."""
    mu, loc = promote("poisson.entropy", mu, loc)
    small = mu <= 150
    ms = jnp.where(small, mu, 1.0)
    k = jnp.arange(_ENTROPY_TERMS, dtype=mu.dtype)
    log_p = _log_pmf(k, ms[..., None])
    summed = -jnp.sum(special.xlogy(jnp.exp(log_p), jnp.exp(log_p)), axis=-1)
    mb = jnp.where(small, 150.0, mu)
    asymptotic = (0.5 * jnp.log(2 * np.pi * np.e * mb) - 1 / (12 * mb) - 1 / (24 * mb ** 2)
                  - 19 / (360 * mb ** 3))
    return jnp.where(mu > 0, jnp.where(small, summed, asymptotic), jnp.where(mu == 0, 0.0, jnp.nan))
