"""The geometric distribution on k = 1, 2, ... (scipy.stats.geom's logpmf and pmf)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy import special
from yax.scipy.stats._discrete import discrete


def _log_pmf(k, p):
    return jnp.where(k >= 1, special.xlog1py(k - 1, -p) + jnp.log(p), -jnp.inf)


discrete(globals(), "geom", 1, _log_pmf)
