"""yax.scipy.stats: every distribution's functions against scipy.stats in one jitted batch per
dtype; multivariate ones, gaussian_kde, mode/rankdata/sem; derivatives and vmap on a few."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sst

import yax
import yax.numpy as jnp
import yax.scipy.stats as ys
from yax.test_util import check_grads

_X = np.array([-2.5, -0.7, 0.1, 0.6, 1.3, 2.2, 4.0])
_POS = np.array([0.05, 0.4, 0.9, 1.5, 2.2, 3.7, 6.0])
_Q = np.array([0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
_UNIT = np.array([0.02, 0.15, 0.3, 0.5, 0.65, 0.8, 0.97])
_K = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 2.5])

_LOC_SCALE = dict(norm=("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"),
                  expon=("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
                  laplace=("logpdf", "cdf"),
                  logistic=("logpdf", "cdf", "sf", "ppf", "isf"),
                  cauchy=("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"),
                  uniform=("logpdf", "cdf", "ppf"),
                  gumbel_r=("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
                  gumbel_l=("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"))
_SHAPED = dict(pareto=((1.5,), ("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf")),
               t=((3.5,), ("logpdf",)),
               # (logcdf/logsf of these are log(cdf)/log(sf); each cdf/sf is a compiled loop)
               gamma=((2.5,), ("logpdf", "cdf", "logsf")),
               chi2=((3.0,), ("logpdf", "sf")),
               beta=((2.0, 3.5), ("logpdf", "cdf", "logsf")),
               truncnorm=((-1.0, 1.5), ("logpdf", "cdf", "logcdf", "sf", "logsf")))
_DISCRETE = dict(poisson=(3.2,), binom=(7.0, 0.3), geom=(0.4,), nbinom=(4.0, 0.35),
                 betabinom=(7.0, 2.0, 3.0), bernoulli=(0.3,))


def _inputs(dist, fn):
    if fn in ("ppf", "isf"):
        return _Q
    return {"beta": _UNIT, "pareto": _POS + 1, "gamma": _POS, "chi2": _POS}.get(dist, _X)


def _cases():
    cases = {}
    for dist, fns in _LOC_SCALE.items():
        for fn in fns:
            cases[f"{dist}.{fn}"] = (getattr(getattr(ys, dist), fn),
                                     getattr(getattr(sst, dist), fn),
                                     (_inputs(dist, fn), 0.3, 1.7))
    for dist, (shape, fns) in _SHAPED.items():
        for fn in fns:
            cases[f"{dist}.{fn}"] = (getattr(getattr(ys, dist), fn),
                                     getattr(getattr(sst, dist), fn),
                                     (_inputs(dist, fn) if dist != "truncnorm" else _X / 2,
                                      *shape, 0.1, 1.2))
    for dist, params in _DISCRETE.items():
        k = _K if dist != "bernoulli" else np.array([0.0, 1.0, 2.0, -1.0, 0.5, 1.0, 0.0])
        cases[f"{dist}.logpmf"] = (getattr(ys, dist).logpmf, getattr(sst, dist).logpmf,
                                   (k, *params))
    cases["poisson.cdf"] = (ys.poisson.cdf, sst.poisson.cdf, (_K, 3.2))
    cases["bernoulli.cdf"] = (ys.bernoulli.cdf, sst.bernoulli.cdf, (_X, 0.3))
    cases["bernoulli.ppf"] = (ys.bernoulli.ppf, sst.bernoulli.ppf, (_Q, 0.3))
    cases["gennorm.logpdf"] = (ys.gennorm.logpdf, sst.gennorm.logpdf, (_X, 1.5))
    cases["gennorm.cdf"] = (ys.gennorm.cdf, sst.gennorm.cdf, (_X, 1.5))
    cases["vonmises.logpdf"] = (ys.vonmises.logpdf, sst.vonmises.logpdf, (_X, 2.0))
    cases["wrapcauchy.logpdf"] = (ys.wrapcauchy.logpdf, sst.wrapcauchy.logpdf, (_POS, 0.4))
    return cases


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_distributions_against_scipy(dt):
    old = yax.config.enable_x64
    yax.config.update("enable_x64", dt == np.float64)
    try:
        cases = _cases()
        if dt == np.float32:  # a representative subset (float64 runs every case)
            keep = ("norm.", "cauchy.", "logistic.", "t.", "truncnorm.", "binom.", "pareto.")
            cases = {k: v for k, v in cases.items() if k.startswith(keep)}
        inputs = {name: tuple(np.asarray(a, dt) for a in args)
                  for name, (_, _, args) in cases.items()}
        got = yax.jit(lambda ins: {n: f(*ins[n]) for n, (f, _, _) in cases.items()})(inputs)
        rtol = 2e-4 if dt == np.float32 else 1e-9
        for name, (_, ref, args) in cases.items():
            want = ref(*args)
            assert got[name].dtype == dt, name
            np.testing.assert_allclose(np.asarray(got[name], np.float64), want, rtol=rtol,
                                       atol=rtol * 1e-2, err_msg=name)
    finally:
        yax.config.update("enable_x64", old)


def test_multivariate_and_summaries(x64):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    mean, x = rng.normal(size=3), rng.normal(size=(4, 3))
    alpha = np.array([1.5, 2.0, 3.0])
    simplex = np.array([[0.2, 0.5], [0.3, 0.25], [0.5, 0.25]])
    counts, p = np.array([[1.0, 2.0, 3.0], [0.0, 6.0, 0.0]]), np.array([0.2, 0.3, 0.5])
    data = np.array([[3.0, 1.0, 2.0, 3.0, 1.0, 3.0], [2.0, 2.0, 5.0, 5.0, 1.0, 0.0]])
    methods = ("average", "min", "max", "dense", "ordinal")

    @yax.jit
    def everything():
        return dict(
            mvn=ys.multivariate_normal.logpdf(x, mean, cov),
            mvn_diag=ys.multivariate_normal.pdf(x, mean, np.diag(cov)),
            dirichlet=ys.dirichlet.logpdf(simplex, alpha),
            multinomial=ys.multinomial.logpmf(counts, 6.0, p),
            entropy=ys.poisson.entropy(np.array([0.5, 4.0, 300.0])),
            mode=ys.mode(data, axis=1), sem=ys.sem(data, axis=1),
            ranks=[ys.rankdata(data, m, axis=1) for m in methods])
    got = everything()
    np.testing.assert_allclose(got["mvn"], sst.multivariate_normal.logpdf(x, mean, cov),
                               rtol=1e-10)
    np.testing.assert_allclose(got["mvn_diag"],
                               sst.multivariate_normal.pdf(x, mean, np.diag(np.diag(cov))),
                               rtol=1e-10)
    np.testing.assert_allclose(got["dirichlet"], sst.dirichlet.logpdf(simplex, alpha),
                               rtol=1e-10)
    np.testing.assert_allclose(got["multinomial"], sst.multinomial.logpmf(counts, 6, p),
                               rtol=1e-10)
    np.testing.assert_allclose(got["entropy"], sst.poisson.entropy([0.5, 4.0, 300.0]),
                               rtol=1e-8)
    want = sst.mode(data, axis=1)
    np.testing.assert_array_equal(got["mode"].mode, want.mode)
    np.testing.assert_array_equal(got["mode"].count, want.count)
    for method, ranks in zip(methods, got["ranks"], strict=True):
        np.testing.assert_allclose(ranks, sst.rankdata(data, method, axis=1), err_msg=method)
    np.testing.assert_allclose(got["sem"], sst.sem(data, axis=1), rtol=1e-12)


def test_gaussian_kde(x64):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(2, 30))
    points = rng.normal(size=(2, 5))
    weights = rng.uniform(0.5, 1.5, size=30)
    for bw in (None, "silverman", 0.4):
        ref = sst.gaussian_kde(data, bw, weights)
        kde = ys.gaussian_kde(data, bw, weights)
        np.testing.assert_allclose(kde.factor, ref.factor, rtol=1e-12)
    # a pytree: evaluated through jit
    dens, log_dens = yax.jit(lambda k, p: (k(p), k.logpdf(p)))(kde, points)
    np.testing.assert_allclose(dens, ref(points), rtol=1e-10)
    np.testing.assert_allclose(log_dens, ref.logpdf(points), rtol=1e-10)
    one = ys.gaussian_kde(data[0])
    mass, samples = yax.jit(lambda k, key: (k.integrate_box_1d(-0.5, 1.0),
                                            k.resample(key, (7,))))(one, yax.random.key(0))
    np.testing.assert_allclose(mass, sst.gaussian_kde(data[0]).integrate_box_1d(-0.5, 1.0),
                               rtol=1e-10)
    assert samples.shape == (1, 7)


def test_derivatives_and_vmap(x64):
    check_grads(lambda x: ys.truncnorm.logpdf(x, -1.0, 2.0, 0.2, 1.3), (np.array([0.1, 1.1]),),
                order=1)
    check_grads(lambda a: ys.t.logpdf(0.7, a), (np.array([1.5, 4.0]),), order=1)
    check_grads(lambda x, s: ys.norm.logsf(x, 0.0, s), (np.array([-1.0, 3.0]),
                                                        np.array([0.7, 2.0])), order=1)
    locs = np.array([-1.0, 0.0, 2.0])
    batched = yax.vmap(lambda m: ys.laplace.logpdf(_X, m))(locs)
    np.testing.assert_allclose(batched, np.stack([sst.laplace.logpdf(_X, m) for m in locs]),
                               rtol=1e-12)
    assert jnp.asarray(ys.norm.cdf(1)).dtype == np.float64
