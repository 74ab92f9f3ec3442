"""jnp statistics (statistics.py, plus var/std/average) against jax.numpy and NumPy: quantile
methods, NaN-ignoring forms, cov/corrcoef with weights, histograms; derivatives in float64 and
vmap against a Python loop."""

from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import assert_close, check_against_jax_numpy
from tests.suiteb_util import batched_checks
from yax.test_util import check_grads

RNG = np.random.default_rng(1)
X = RNG.normal(size=(4, 5)).astype(np.float32)
XN = X.copy()
XN[1, 2] = np.nan
XN[3, :] = np.nan
W = RNG.random(5).astype(np.float32)


check = check_against_jax_numpy
# Tests of several checks run them under `batched_checks` (tests/suiteb_util.py): jax's values
# for all of a test's checks come from one jitted program rather than eager jax's compile per
# primitive per check; yax's side of each check is unchanged.


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint",
                                    "inverted_cdf"])
def test_quantile_methods_match_jax(method):
    with batched_checks() as check:
        q = np.array([0.0, 0.3, 0.5, 0.77, 1.0], np.float32)
        eager = method in ("linear", "nearest")
        check(lambda m, x, q: m.quantile(x, q, axis=1, method=method), X, q, eager=eager)
        check(lambda m, x: m.nanquantile(x, 0.37, axis=1, method=method, keepdims=True), XN,
              eager=eager)


@pytest.mark.parametrize("method", ["hazen", "weibull", "median_unbiased", "normal_unbiased",
                                    "interpolated_inverted_cdf"])
def test_more_quantile_methods_match_numpy(method):
    q = np.array([0.0, 0.3, 0.5, 1.0])
    got = jnp.quantile(X, q, axis=0, method=method)
    assert_close(got, np.quantile(X, q, axis=0, method=method).astype(np.float32))
    got = jnp.nanquantile(XN, 0.4, axis=1, method=method)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = np.nanquantile(XN, 0.4, axis=1, method=method)
    assert_close(got, want.astype(np.float32))


def test_quantile_family_matches_jax():
    with batched_checks() as check:
        check(lambda m, x: m.quantile(x, 0.2), XN)  # a NaN anywhere gives NaN
        check(lambda m, x: m.quantile(x, 0.25), np.arange(10, dtype=np.int32))
        check(lambda m, x: m.percentile(x, 30, axis=(0, 1), keepdims=True), X)
        check(lambda m, x: m.nanpercentile(x, np.array([30.0, 60.0]), axis=0), XN)
        check(lambda m, x: m.median(x, axis=0), X)
        check(lambda m, x: m.median(x[:, :4], axis=1), X)
        check(lambda m, x: m.nanmedian(x, axis=1), XN)
        check(lambda m, x: m.nanmedian(x), XN)


def test_nan_reductions_match_jax():
    with batched_checks() as check:
        check(lambda m, x: m.nanvar(x, axis=1, ddof=1), XN)
        check(lambda m, x: m.nanvar(x), XN)
        check(lambda m, x: m.nanstd(x, axis=0, keepdims=True), XN)
        check(lambda m, x: m.nanargmax(x, axis=1), XN)
        check(lambda m, x: m.nanargmin(x), XN)
        check(lambda m, x: m.nanargmin(x, axis=0, keepdims=True), XN)
        check(lambda m, x: m.nancumsum(x, axis=1), XN)
        check(lambda m, x: m.nancumprod(x), XN)
        check(lambda m, x: m.nanargmax(x, axis=1), np.arange(6, dtype=np.int32).reshape(2, 3))


def test_var_std_average_match_jax():
    with batched_checks() as check:
        check(lambda m, x: m.var(x, axis=0, ddof=2), X)
        check(lambda m, x: m.std(x, axis=1, ddof=1, keepdims=True), X)
        check(lambda m, x: m.var(x, correction=1), X)
        check(lambda m, x, w: m.average(x, axis=1, weights=w), X, W)
        check(lambda m, x, w: m.average(x, axis=1, weights=w, returned=True), X, W)
        check(lambda m, x, w: m.average(x, weights=m.broadcast_to(w, x.shape), returned=True),
              X, W)
        check(lambda m, x: m.average(x, axis=0, returned=True), X)
        check(lambda m, x: m.average(x, returned=True), X)


def test_cov_corrcoef_match_jax():
    with batched_checks() as check:
        fw = np.array([1, 2, 1, 3, 1], np.int32)
        check(lambda m, x: m.cov(x), X, rtol=1e-4, atol=1e-5)
        check(lambda m, x: m.cov(x[0], x[1]), X, rtol=1e-4, atol=1e-5)
        check(lambda m, x: m.cov(x, rowvar=False, bias=True), X, rtol=1e-4, atol=1e-5)
        check(lambda m, x, f, w: m.cov(x, fweights=f, aweights=w), X, fw, W, rtol=1e-4, atol=1e-5)
        check(lambda m, x, w: m.cov(x, aweights=w, ddof=0), X, W, rtol=1e-4, atol=1e-5)
        check(lambda m, x: m.cov(x[0]), X, rtol=1e-4)
        check(lambda m, x: m.cov(x), np.arange(6, dtype=np.int32).reshape(2, 3))
        check(lambda m, x: m.corrcoef(x), X, rtol=1e-4, atol=1e-5)
        check(lambda m, x: m.corrcoef(x[0], x[1]), X, rtol=1e-4, atol=1e-5)


def test_histograms_match_jax():
    with batched_checks() as check:
        check(lambda m, x: m.histogram(x, 5), X)
        check(lambda m, x: m.histogram(x, 5, range=(-1, 1), weights=x * 0 + 2, density=True), X)
        check(lambda m, x: m.histogram(x, np.array([-2.0, 0.0, 0.5, 3.0], np.float32)), X)
        check(lambda m, x: m.histogram2d(x[0], x[1], 3), X, eager=False)
        check(lambda m, x: m.histogramdd(x[:, :2], (2, 3), density=True), X, eager=False)


def test_grads(x64):
    x = RNG.normal(size=(4, 5))
    for f in [lambda a: jnp.median(a, axis=1),
              lambda a: jnp.quantile(a, np.array([0.1, 0.6]), axis=0),
              lambda a: jnp.percentile(a, 42.0, method="midpoint"),
              lambda a: jnp.nanquantile(jnp.where(a > 1.5, jnp.nan, a), 0.3, axis=1),
              lambda a: jnp.nanvar(jnp.where(a > 1.5, jnp.nan, a), axis=0, ddof=1),
              lambda a: jnp.cov(a),
              lambda a: jnp.corrcoef(a),
              lambda a: jnp.nancumsum(a, axis=1)]:
        check_grads(yax.jit(f), (x,), order=1, modes=("fwd", "rev"))
    # the derivative in q of linear interpolation is the local slope of the sorted data
    check_grads(lambda q: jnp.quantile(x[0], q), (np.array([0.13, 0.61]),), order=1)


def test_vmap_and_jit_match_loop():
    f = yax.vmap(lambda r, q: jnp.nanquantile(r, q))
    qs = np.array([0.1, 0.5, 0.9, 0.3], np.float32)
    want = np.stack([np.asarray(jnp.nanquantile(XN[i], qs[i])) for i in range(4)])
    assert_close(f(XN, qs), want)
    g = yax.vmap(lambda r: jnp.histogram(r, 3, range=(-2.0, 2.0))[0])
    want = np.stack([np.asarray(jnp.histogram(X[i], 3, range=(-2.0, 2.0))[0])
                     for i in range(4)])
    assert_close(g(X), want)
    assert_close(yax.vmap(jnp.cov)(X[:, None, :]), np.stack([np.var(X[i], ddof=1)
                                                            for i in range(4)]), rtol=1e-4)


def test_quantile_errors():
    with pytest.raises(ValueError, match="not supported"):
        jnp.quantile(X, 0.5, method="bogus")
    with pytest.raises(TypeError, match="renamed to `method`"):
        jnp.quantile(X, 0.5, interpolation="linear")


def test_x64_result_dtypes_match_jax(x64):
    x = RNG.normal(size=(4, 5))
    xi = np.arange(12).reshape(3, 4)
    x32 = x.astype(np.float32)
    cases = [lambda m: m.quantile(xi, 0.3), lambda m: m.quantile(x32, np.array([0.3, 0.5])),
             lambda m: m.percentile(x32, 30), lambda m: m.nanargmax(x),
             lambda m: m.cov(xi), lambda m: m.histogram(xi, 3),
             lambda m: m.histogramdd(x[:, :2], 2), lambda m: m.nanvar(xi),
             lambda m: m.median(xi), lambda m: m.corrcoef(x32)]
    for f in cases:
        # jitted: one compile per case instead of one per primitive in a new dtype; jax's
        # result dtypes are those of its trace, which eval_shape gives without compiling
        got = jax.tree_util.tree_leaves(yax.jit(lambda f=f: f(jnp))())
        want = jax.tree_util.tree_leaves(jax.eval_shape(lambda f=f: f(jnp_ref)))
        assert [np.asarray(g).dtype for g in got] == [np.dtype(w.dtype) for w in want]


def test_edge_cases_match_jax():
    with batched_checks() as check:
        c = np.array([[1 + 1j, 2, 3j], [0, 1j, 1]], np.complex64)
        check(lambda m, c: m.cov(c), c, rtol=1e-5, atol=1e-6)
        check(lambda m, c: m.corrcoef(c), c, rtol=1e-5, atol=1e-6)
        check(lambda m: m.median(np.ones((3, 0), np.float32), axis=0))
        check(lambda m: m.quantile(np.array([True, False, True]), 0.5))
        check(lambda m, x: m.histogram(x, 4, weights=np.arange(5, dtype=np.int32)), X[0])
