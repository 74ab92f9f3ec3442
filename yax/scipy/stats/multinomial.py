"""The multinomial distribution (scipy.stats.multinomial's logpmf and pmf): counts `x` along
the last axis, `n` trials, category probabilities `p` (last axis)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._dist import promote_dtypes

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """gammaln(n + 1) - sum gammaln(x + 1) + sum x log p; -inf where the counts do not sum to
    n or are not non-negative integers."""
    x, n, p = promote_dtypes("multinomial.logpmf", x, n, p)
    value = (special.gammaln(n + 1) - jnp.sum(special.gammaln(x + 1), axis=-1)
             + jnp.sum(special.xlogy(x, p), axis=-1))
    valid = (jnp.all((x >= 0) & (x == jnp.floor(x)), axis=-1)
             & (jnp.sum(x, axis=-1) == n))
    return jnp.where(valid, value, -jnp.inf)


def pmf(x, n, p):
    """probability mass of the multinomial distribution."""
    return jnp.exp(logpmf(x, n, p))
