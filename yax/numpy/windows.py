"""yax.numpy window functions: hamming, hanning, blackman, bartlett and kaiser.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.numpy import creation, ufuncs
from yax.numpy.scalar_functions import i0

__all__ = ["hamming", "hanning", "blackman", "bartlett", "kaiser"]


def _window(name, M, fn):
    M = int(M)
    dt = dtypes.canonicalize(dtypes.default_float())
    if M < 1:
        return creation.zeros((0,), dt)
    if M == 1:
        return creation.ones((1,), dt)
    n = lax.iota(dt, M)
    return fn(n, M)


def hamming(M):
    """The Hamming window of M points."""
    return _window("hamming", M, lambda n, m: 0.54 - 0.46 * ufuncs.cos(2 * np.pi * n / (m - 1)))


def hanning(M):
    """The Hann window of M points."""
    return _window("hanning", M, lambda n, m: 0.5 - 0.5 * ufuncs.cos(2 * np.pi * n / (m - 1)))


def blackman(M):
    """The Blackman window of M points."""
    return _window("blackman", M, lambda n, m: 0.42 - 0.5 * ufuncs.cos(2 * np.pi * n / (m - 1))
                   + 0.08 * ufuncs.cos(4 * np.pi * n / (m - 1)))


def bartlett(M):
    """The Bartlett (triangular) window of M points."""
    return _window("bartlett", M, lambda n, m: 1 - ufuncs.abs(2 * n / (m - 1) - 1))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter `beta`."""
    def fn(n, m):
        alpha = (m - 1) / 2.0
        r = (n - alpha) / alpha
        return i0(beta * ufuncs.sqrt(ufuncs.clip(1 - r * r, 0, None))) / i0(
            creation.full((), beta, n.dtype))
    return _window("kaiser", M, fn)
