"""scipy.stats.pareto (as jax.scipy.stats.pareto): the standard functions of
yax/scipy/stats/_continuous.py in location-scale form."""

from __future__ import annotations

from yax.scipy.stats import _continuous
from yax.scipy.stats._dist import location_scale

location_scale(globals(), "pareto", 1, **_continuous.pareto())
