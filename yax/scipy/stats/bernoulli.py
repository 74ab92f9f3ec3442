"""The Bernoulli distribution (scipy.stats.bernoulli: logpmf, pmf, cdf, ppf)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy.stats._discrete import discrete
from yax.scipy.stats._dist import promote


def _log_pmf(k, p):
    safe_p = jnp.clip(p, 0.0, 1.0)
    return jnp.where(k == 1, jnp.log(safe_p), jnp.where(k == 0, jnp.log1p(-safe_p), -jnp.inf))


discrete(globals(), "bernoulli", 1, _log_pmf)
__all__ = ["logpmf", "pmf", "cdf", "ppf"]  # noqa: F822  (logpmf, pmf defined by discrete)


def cdf(k, p):
    """P(K <= k): 0 below 0, 1 - p on [0, 1), 1 from 1 on."""
    k, p = promote("bernoulli.cdf", k, p)
    return jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))


def ppf(q, p):
    """The smallest k with cdf(k) >= q: 0 for q <= 1 - p, 1 above; NaN outside [0, 1]."""
    q, p = promote("bernoulli.ppf", q, p)
    value = jnp.where(q <= 1 - p, 0.0, 1.0)
    return jnp.where((q < 0) | (q > 1), jnp.nan, value)
