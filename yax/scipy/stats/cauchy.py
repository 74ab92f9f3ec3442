"""scipy.stats.cauchy (as jax.scipy.stats.cauchy): the standard functions of
yax/scipy/stats/_continuous.py in location-scale form."""

from __future__ import annotations

from yax.scipy.stats import _continuous
from yax.scipy.stats._dist import location_scale

location_scale(globals(), "cauchy", 0, **_continuous.cauchy())
