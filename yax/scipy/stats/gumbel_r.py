"""scipy.stats.gumbel_r (as jax.scipy.stats.gumbel_r): the standard functions of
yax/scipy/stats/_continuous.py in location-scale form."""

from __future__ import annotations

from yax.scipy.stats import _continuous
from yax.scipy.stats._dist import location_scale

location_scale(globals(), "gumbel_r", 0, **_continuous.gumbel_r())
