"""The normal distribution (scipy.stats.norm): densities, CDFs, survival functions and quantiles,
through the standardised variable z = (x - loc) / scale."""

from __future__ import annotations

import numpy as np

from yax.scipy import special
from yax.scipy.stats._dist import location_scale

_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))  # a Python float: keeps float32 float32

location_scale(
    globals(), "norm", 0,
    logpdf=lambda z: -0.5 * (z * z) - _HALF_LOG_2PI,
    cdf=special.ndtr, logcdf=special.log_ndtr,
    sf=lambda z: special.ndtr(-z), logsf=lambda z: special.log_ndtr(-z),
    ppf=special.ndtri, isf=lambda q: -special.ndtri(q))
