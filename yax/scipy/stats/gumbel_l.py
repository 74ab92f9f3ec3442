"""scipy.stats.gumbel_l (as jax.scipy.stats.gumbel_l): the standard functions of
yax/scipy/stats/_continuous.py in location-scale form."""

from __future__ import annotations

from yax.scipy.stats import _continuous
from yax.scipy.stats._dist import location_scale

location_scale(globals(), "gumbel_l", 0, **_continuous.gumbel_l())
