"""yax.random against jax.random, continued: 64-bit mode, other dtypes, parameter arrays,
the options of multivariate_normal/categorical/permutation/choice, and the eager path.

Helpers and the case tables are shared with tests/test_random.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax.numpy as jnp
import yax.random as yr
from tests.test_random import (
    _LOGITS,
    ALL_CASES,
    SEEDS,
    X64_CASES,
    _check_bundle,
    _mvn,
    _params,
    assert_same,
)

jr = jax.random


def test_draws_match_jax_x64(x64):
    _check_bundle(X64_CASES, (2, 3), np.float64, SEEDS[1:3])


def test_eager_draws_match_jax():
    """The eager path (each call its own cached kernel) gives the same bits (more eager draws
    are compared in test_random_transforms.py)."""
    params = _params(np.float32)
    for name in ("gumbel_highest", "choice_p"):
        for seed in SEEDS:
            y = ALL_CASES[name](yr, yr.PRNGKey(seed), (3,), np.float32, params)
            assert_same(y, ALL_CASES[name](jr, jr.PRNGKey(seed), (3,), np.float32, params))
    for seed in SEEDS[:2]:
        a = np.array([[0.2], [1.0], [7.0]], np.float32)  # also: parameters broadcast to shape
        assert_same(yr.gamma(yr.PRNGKey(seed), a, (3, 2)), jr.gamma(jr.PRNGKey(seed), a, (3, 2)))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_bits_dtypes(dtype):
    for seed in SEEDS:
        assert_same(yr.bits(yr.PRNGKey(seed), (2, 5), dtype), jr.bits(jr.PRNGKey(seed), (2, 5),
                                                                       dtype))


def test_bits_uint64(x64):
    y = yr.bits(yr.PRNGKey(7), (4,), np.uint64)
    assert y.dtype == np.uint64
    assert_same(y, jr.bits(jr.PRNGKey(7), (4,), np.uint64))


@pytest.mark.parametrize("dtype,lo,hi", [(np.uint32, 0, 10), (np.int8, -200, 300),
                                         (np.uint8, 0, 256)])
def test_randint_dtypes(dtype, lo, hi):
    for seed in SEEDS:
        assert_same(yr.randint(yr.PRNGKey(seed), (3, 4), lo, hi, dtype),
                    jr.randint(jr.PRNGKey(seed), (3, 4), lo, hi, dtype))


def test_randint_array_bounds_and_int64(x64):
    lo, hi = np.array([0, 5, -(2 ** 40)]), np.array([[3], [2 ** 50]])
    for seed in SEEDS:
        assert_same(yr.randint(yr.PRNGKey(seed), (2, 3), lo, hi),
                    jr.randint(jr.PRNGKey(seed), (2, 3), lo, hi))


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16, np.complex64])
def test_other_float_dtypes(dtype):
    for seed in SEEDS:
        assert_same(yr.normal(yr.PRNGKey(seed), (7,), dtype),
                    jr.normal(jr.PRNGKey(seed), (7,), dtype))
    if np.dtype(dtype) != np.complex64:
        assert_same(yr.uniform(yr.PRNGKey(3), (7,), dtype, -1.0, 2.0),
                    jr.uniform(jr.PRNGKey(3), (7,), dtype, -1.0, 2.0))


def test_complex128_normal(x64):
    assert_same(yr.normal(yr.PRNGKey(5), (2, 3), np.complex128),
                jr.normal(jr.PRNGKey(5), (2, 3), np.complex128))


def test_parameter_arrays_broadcast():
    lo, hi = np.array([-1.0, 0.0, 0.5], np.float32), np.float32(2.0)
    for seed in SEEDS:
        k, kj = yr.PRNGKey(seed), jr.PRNGKey(seed)
        assert_same(yr.uniform(k, (2, 3), minval=lo, maxval=hi),
                    jr.uniform(kj, (2, 3), minval=lo, maxval=hi))
        assert_same(yr.truncated_normal(k, lo, hi), jr.truncated_normal(kj, lo, hi))
        p = np.array([0.1, 0.5, 0.9], np.float32)
        assert_same(yr.bernoulli(k, p), jr.bernoulli(kj, p))
        assert_same(yr.bernoulli(k, p, (4, 3)), jr.bernoulli(kj, p, (4, 3)))


def test_multivariate_normal_methods_and_batches():
    for method in ("svd", "eigh"):  # cholesky is in the bundles above
        for seed in SEEDS[:2]:
            k, kj = yr.PRNGKey(seed), jr.PRNGKey(seed)
            assert_same(_mvn(yr, k, (2,), np.float32, method),
                        _mvn(jr, kj, (2,), np.float32, method))
    cov = np.stack([np.eye(2, dtype=np.float32), np.array([[2, 1], [1, 3]], np.float32)])
    mean = np.zeros(2, np.float32)
    assert_same(yr.multivariate_normal(yr.PRNGKey(1), mean, cov, (3, 2)),
                jr.multivariate_normal(jr.PRNGKey(1), mean, cov, (3, 2)))


def test_categorical_axes_and_shapes():
    cases = [dict(axis=0), dict(shape=(5, 3)), dict(axis=0, shape=(2, 4), replace=False)]
    for kw in cases:
        for seed in SEEDS[:2]:
            y = yr.categorical(yr.PRNGKey(seed), _LOGITS.astype(np.float32), **kw)
            assert_same(y, jr.categorical(jr.PRNGKey(seed), _LOGITS.astype(np.float32), **kw))


def _jax_shuffle(key, x, axis):
    from jax._src.random.core import _shuffle  # jax.random.shuffle was removed
    return _shuffle(jr.wrap_key_data(key), jjnp.asarray(x), axis)


def test_permutation_and_shuffle():
    x = np.arange(12).reshape(3, 4).astype(np.int32)
    k, kj = yr.PRNGKey(42), jr.PRNGKey(42)
    assert_same(yr.permutation(k, 1), jr.permutation(kj, 1))
    assert_same(yr.permutation(k, x, axis=1), jr.permutation(kj, x, axis=1))
    independent = yr.permutation(k, x.astype(np.float32), 1, independent=True)
    assert_same(independent, jr.permutation(kj, x.astype(np.float32), 1, independent=True))
    assert_same(yr.shuffle(k, x, 1), _jax_shuffle(kj, x, 1))
    # each row is a permutation of itself
    assert (np.sort(np.asarray(independent), axis=1) == x).all()


def test_choice_of_arrays():
    x = np.arange(12).reshape(3, 4).astype(np.int32)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    cases = [((2,), dict(replace=False, axis=1)), ((2, 2), dict(axis=0)),
             ((3,), dict(p=p, axis=1)), ((0,), dict())]
    for shape, kw in cases:
        for seed in SEEDS[:2]:
            assert_same(yr.choice(yr.PRNGKey(seed), x, shape, **kw),
                        jr.choice(jr.PRNGKey(seed), x, shape, **kw))
