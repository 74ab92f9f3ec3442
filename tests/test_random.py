"""yax.random against jax.random: every draw must be bit-identical (assert_array_equal on the raw
values, and equal dtypes), for several keys and shapes: one compiled program of all draws per
shape and side, so each distribution compiles once.

More dtypes and options are in tests/test_random_dtypes.py; transformations (jit, vmap, scan,
fori_loop), keys and errors in tests/test_random_transforms.py.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
import yax.random as yr
from tests.default_codegen import (
    default_codegen_only,
    needs_unoptimised_parent,
    run_with_default_codegen,
)

jr = jax.random
SEEDS = (0, 1, 42, 2 ** 31 - 1)


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


def _mvn(r, k, s, dt, method):
    a = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, -0.4], [0.0, -0.4, 0.7]], dt)
    return r.multivariate_normal(k, np.arange(3, dtype=dt), a, s, dt, method=method)


_LOGITS = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25],
                           [0.7, 0.1, 0.1, 0.1]]))

# name -> f(random_module, key, shape, float_dtype, params): the same call for yax and jax.
# Array parameters come from `params`, an argument of the compiled bundle: jax's jit would
# constant-fold arrays captured as constants (XLA's host evaluation of pow/log can differ from
# the compiled kernel's by an ulp), while yax passes captured arrays as parameters.
FLOAT_CASES = {
    "uniform_range": lambda r, k, s, dt, P: r.uniform(k, s, dt, minval=-2.0, maxval=3.5),
    "normal": lambda r, k, s, dt, P: r.normal(k, s, dt),
    "truncated_normal": lambda r, k, s, dt, P: r.truncated_normal(k, -1.0, 2.0, s, dt),
    "exponential": lambda r, k, s, dt, P: r.exponential(k, s, dt),
    "gumbel": lambda r, k, s, dt, P: r.gumbel(k, s, dt),
    "gumbel_high": lambda r, k, s, dt, P: r.gumbel(k, s, dt, mode="high"),
    "gumbel_highest": lambda r, k, s, dt, P: r.gumbel(k, s, dt, mode="highest"),
    "cauchy": lambda r, k, s, dt, P: r.cauchy(k, s, dt),
    "laplace": lambda r, k, s, dt, P: r.laplace(k, s, dt),
    "logistic": lambda r, k, s, dt, P: r.logistic(k, s, dt),
    "lognormal": lambda r, k, s, dt, P: r.lognormal(k, 0.7, s, dt),
    "multivariate_normal": lambda r, k, s, dt, P: r.multivariate_normal(
        k, P["mean"], P["cov"], s, dt),
    "bernoulli": lambda r, k, s, dt, P: r.bernoulli(k, P["half"] * 0.6, s),
    "bernoulli_high": lambda r, k, s, dt, P: r.bernoulli(k, P["half"] * 0.6, s, mode="high"),
}

# name -> f(random_module, key, shape, float_dtype, params): integer draws, default dtypes.
INT_CASES = {
    "bits": lambda r, k, s, dt, P: r.bits(k, s),
    "randint": lambda r, k, s, dt, P: r.randint(k, s, 0, 10),
    "randint_wide": lambda r, k, s, dt, P: r.randint(k, s, -(2 ** 31) + 5, 2 ** 31 - 1),
    "randint_empty_range": lambda r, k, s, dt, P: r.randint(k, s, 3, 3),
    "choice": lambda r, k, s, dt, P: r.choice(k, 10, s),
    "choice_noreplace": lambda r, k, s, dt, P: r.choice(k, 10, s, replace=False),
    "choice_p": lambda r, k, s, dt, P: r.choice(k, 4, s, p=P["p4"]),
    "choice_p_noreplace": lambda r, k, s, dt, P: r.choice(k, 12, s, replace=False,
                                                        p=P["p12"]),
    "categorical": lambda r, k, s, dt, P: r.categorical(k, P["logits"], shape=s),
    "categorical_noreplace": lambda r, k, s, dt, P: r.categorical(
        k, P["logits"], shape=s[:1] if s and s[0] <= 4 else (2,), replace=False),
    "permutation": lambda r, k, s, dt, P: r.permutation(k, 9),
}

# The gamma family compiles nested rejection loops (about a second each, for yax and for jax
# alike), so it is checked on fewer shape/dtype combinations. Its parameters are traced arrays:
# with literal parameters XLA folds loop-invariant constants (log(a - 1/3), ...) on the host,
# which can move jax's own jit result an ulp away from its eager one; whether it folds depends
# on the program around the draw (test_literal_parameters_under_jit covers the literal case).
GAMMA_CASES = {
    "gamma": lambda r, k, s, dt, P: r.gamma(k, P["scalars"][0], s, dt),
    "gamma_array_a": lambda r, k, s, dt, P: r.gamma(
        k, P["alphas"][:s[-1]] if s else P["scalars"][1], s, dt),
    "loggamma": lambda r, k, s, dt, P: r.loggamma(k, P["scalars"][2], s, dt),
    "beta": lambda r, k, s, dt, P: r.beta(k, P["scalars"][3], P["scalars"][4], s, dt),
    "dirichlet": lambda r, k, s, dt, P: r.dirichlet(k, P["alpha3"], s, dt),
}
ALL_CASES = {**FLOAT_CASES, **INT_CASES, **GAMMA_CASES}


def _params(dt):
    cov = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, -0.4], [0.0, -0.4, 0.7]], dt)
    return {"mean": np.arange(3, dtype=dt), "cov": cov, "half": np.asarray(0.5, dt),
            "p4": np.array([0.125, 0.25, 0.5, 0.125], dt),
            "p12": np.linspace(0.01, 0.2, 12).astype(dt), "logits": _LOGITS[0].astype(dt),
            "alphas": np.linspace(0.05, 0.9, 10).astype(dt),
            "alpha3": np.array([0.3, 1.0, 4.0], dt),
            "scalars": np.array([2.5, 0.3, 0.2, 0.5, 3.0], dt)}


def _check_bundle(names, shape, float_dtype, seeds):
    """The draws `names` of one shape, as one compiled program per side, for each seed."""
    def bundle(r):
        return lambda key, P: {n: ALL_CASES[n](r, key, shape, float_dtype, P) for n in names}

    ours, theirs = yax.jit(bundle(yr)), jax.jit(bundle(jr))
    params = _params(float_dtype)
    for seed in seeds:
        y, j = ours(yr.PRNGKey(seed), params), theirs(jr.PRNGKey(seed), params)
        for name in names:
            try:
                assert_same(y[name], j[name])
            except AssertionError as e:
                raise AssertionError(f"{name}, shape {shape}, seed {seed}: {e}") from None


# Shapes only change how counters are laid out, so the smaller shapes use a subset.
SMALL_SHAPE_CASES = ["uniform_range", "normal", "randint", "choice_noreplace", "categorical",
                     "gamma_array_a"]
X64_CASES = ["uniform_range", "normal", "multivariate_normal", "bits", "randint_wide",
             "gamma_array_a"]


# Floating-point draws are compared with jax's bit for bit, and the last bit depends on XLA's
# codegen: these tests run in a child process with default flags (tests/default_codegen.py).
@needs_unoptimised_parent
def test_bit_exact_draws_with_default_codegen():
    run_with_default_codegen(f"{__file__}::test_draws_match_jax",
                             f"{__file__}::test_draws_match_jax_small_shapes")


@default_codegen_only
def test_draws_match_jax():
    _check_bundle(list(ALL_CASES), (2, 5), np.float32, SEEDS)


@default_codegen_only
@pytest.mark.parametrize("shape", ((), (3,)), ids=str)
def test_draws_match_jax_small_shapes(shape):
    _check_bundle(SMALL_SHAPE_CASES, shape, np.float32, SEEDS)
