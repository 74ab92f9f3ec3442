"""The binomial distribution (scipy.stats.binom's logpmf and pmf)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._discrete import discrete


def _log_pmf(k, n, p):
    log_comb = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    value = log_comb + special.xlogy(k, p) + special.xlog1py(n - k, -p)
    return jnp.where(k <= n, value, -jnp.inf)


discrete(globals(), "binom", 2, _log_pmf)
