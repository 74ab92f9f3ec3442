"""Input matrices shared by the linear-algebra test files."""

from __future__ import annotations

import numpy as np


def rand(seed, shape, dtype=np.float64):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def spd(seed, shape, dtype=np.float64):
    """Well-conditioned symmetric positive definite matrices."""
    a = rand(seed, shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n)).astype(dtype)


def well_conditioned(seed, shape, dtype=np.float64):
    n = shape[-1]
    return (rand(seed, shape) + 3 * np.eye(n)).astype(dtype)
