"""yax.scipy.stats: statistical distributions (so far the normal, `yax.scipy.stats.norm`)."""

from yax.scipy.stats import norm  # noqa: F401
