"""The additional yax.random distributions (rademacher, pareto, t, chisquare, rayleigh,
weibull_min, geometric, poisson) against jax.random, bit for bit."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax.random as yr

jr = jax.random
SEEDS = (0, 1, 42, 2 ** 31 - 1)

CASES = {
    "rademacher": lambda r, k, s: r.rademacher(k, s),
    "rademacher_float": lambda r, k, s: r.rademacher(k, s, np.float32),
    "pareto": lambda r, k, s: r.pareto(k, 2.0, s),
    "t": lambda r, k, s: r.t(k, 3.0, s),
    "chisquare": lambda r, k, s: r.chisquare(k, 2.5, s),
    "rayleigh": lambda r, k, s: r.rayleigh(k, 1.5, s),
    "weibull_min": lambda r, k, s: r.weibull_min(k, 1.5, 0.7, s),
    "geometric": lambda r, k, s: r.geometric(k, 0.3, s),
    "poisson": lambda r, k, s: r.poisson(k, 3.0, s),
    "poisson_large": lambda r, k, s: r.poisson(k, 25.0, s),
}


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", ((), (2, 3)), ids=str)
@pytest.mark.parametrize("name", CASES)
def test_matches_jax(name, shape):
    for seed in SEEDS:
        assert_same(CASES[name](yr, yr.PRNGKey(seed), shape),
                    CASES[name](jr, jr.PRNGKey(seed), shape))


@pytest.mark.parametrize("name", ["rademacher", "pareto", "rayleigh", "weibull_min",
                                  "geometric", "poisson"])
def test_matches_jax_x64(x64, name):
    for seed in SEEDS[1:3]:
        y = CASES[name](yr, yr.PRNGKey(seed), (4,))
        assert_same(y, CASES[name](jr, jr.PRNGKey(seed), (4,)))
        assert y.dtype in (np.float64, np.int64)


def test_array_parameters():
    b = np.array([1.0, 2.0, 3.0], np.float32)
    p = np.array([0.1, 0.5, 0.9], np.float32)
    for seed in SEEDS[:2]:
        k, kj = yr.PRNGKey(seed), jr.PRNGKey(seed)
        assert_same(yr.pareto(k, b), jr.pareto(kj, b))
        assert_same(yr.geometric(k, p, (2, 3)), jr.geometric(kj, p, (2, 3)))
        lam = np.array([0.0, 0.5, 4.0, 9.9, 10.0, 40.0, 1000.0], np.float32)  # both algorithms
        assert_same(yr.poisson(k, lam), jr.poisson(kj, lam))
