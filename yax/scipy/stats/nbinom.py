"""The negative binomial distribution (scipy.stats.nbinom's logpmf and pmf): k failures before
the n-th success of probability p."""

from __future__ import annotations

from yax.scipy import special
from yax.scipy.stats._discrete import discrete


def _log_pmf(k, n, p):
    log_comb = special.gammaln(n + k) - special.gammaln(k + 1) - special.gammaln(n)
    return log_comb + special.xlogy(n, p) + special.xlog1py(k, -p)


discrete(globals(), "nbinom", 2, _log_pmf)
