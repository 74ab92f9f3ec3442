"""The beta-binomial distribution (scipy.stats.betabinom's logpmf and pmf)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._discrete import discrete


def _log_pmf(k, n, a, b):
    log_comb = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    value = log_comb + special.betaln(k + a, n - k + b) - special.betaln(a, b)
    return jnp.where(k <= n, value, -jnp.inf)


discrete(globals(), "betabinom", 3, _log_pmf)
