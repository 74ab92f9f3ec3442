"""yax.nn, yax.scipy.special and yax.scipy.stats.norm against jax (and scipy) as oracles:
values eagerly and under jit in float32 and float64, gradients (finite at extreme inputs), vmap."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.special
import scipy.stats

import yax
import yax.nn as nn
import yax.numpy as jnp
import yax.scipy.special as special
import yax.scipy.stats.norm as norm
from tests.harness import assert_close, check_eager_and_jit, random_values


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request):
    """The float dtype of the test; float64 turns x64 mode on (yax and jax) for the test."""
    if request.param == np.float64:
        request.getfixturevalue("x64")
    return request.param


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)


ACTIVATIONS = {
    "relu": (nn.relu, jax.nn.relu), "relu6": (nn.relu6, jax.nn.relu6),
    "gelu": (nn.gelu, jax.nn.gelu),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False),
                   lambda x: jax.nn.gelu(x, approximate=False)),
    "silu": (nn.silu, jax.nn.silu), "swish": (nn.swish, jax.nn.swish),
    "sigmoid": (nn.sigmoid, jax.nn.sigmoid), "log_sigmoid": (nn.log_sigmoid, jax.nn.log_sigmoid),
    "softplus": (nn.softplus, jax.nn.softplus), "elu": (nn.elu, jax.nn.elu),
    "leaky_relu": (nn.leaky_relu, jax.nn.leaky_relu),
    "softmax": (nn.softmax, jax.nn.softmax), "log_softmax": (nn.log_softmax, jax.nn.log_softmax),
    "logsumexp": (nn.logsumexp, jax.nn.logsumexp),
    "standardize": (nn.standardize, jax.nn.standardize),
}
EXTREME = np.array([-1e4, -50.0, -1.0, 0.0, 0.0, 1.0, 6.0, 50.0, 1e4])


def _grad_pair(yfn, jfn, x, dtype):
    """d/dx sum(w * f(x)) by yax and by jax, with fixed weights w so every output counts."""
    w = np.linspace(0.5, 1.5, x.size).reshape(x.shape).astype(dtype)
    got = yax.grad(lambda v: jnp.sum(yfn(v) * w))(jnp.asarray(x))
    want = jax.grad(lambda v: jjnp.sum(jfn(v) * w))(jjnp.asarray(x))
    return np.asarray(got), np.asarray(want)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_values_and_grads(name, dtype):
    yfn, jfn = ACTIVATIONS[name]
    x = random_values(0, (3, 5), dtype) * 0.3
    check_eager_and_jit(yfn, [x], np.asarray(jfn(jjnp.asarray(x))), **_tol(dtype))
    got, want = _grad_pair(yfn, jfn, x, dtype)
    assert_close(got, want, **_tol(dtype))


@pytest.mark.parametrize("name", [n for n in ACTIVATIONS if n != "standardize"])
def test_activation_grads_extreme(name, dtype):
    yfn, jfn = ACTIVATIONS[name]
    x = EXTREME.astype(dtype)
    got, want = _grad_pair(yfn, jfn, x, dtype)
    assert np.isfinite(got).all(), got
    assert_close(got, want, **_tol(dtype))
    assert np.isfinite(np.asarray(yfn(jnp.asarray(x)))).all()


def test_relu_derivative_at_zero_and_softplus_half():
    assert float(yax.grad(nn.relu)(0.0)) == 0.0
    assert float(yax.grad(nn.softplus)(0.0)) == 0.5
    assert float(yax.grad(nn.log_sigmoid)(0.0)) == 0.5


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "logsumexp"])
def test_large_logits(fn, dtype):
    yfn, jfn = ACTIVATIONS[fn]
    x = np.array([[1e4, 1e4, 0.0], [-1e4, 3.0, 1e4]], dtype)
    check_eager_and_jit(yfn, [x], np.asarray(jfn(jjnp.asarray(x))), **_tol(dtype))
    got, want = _grad_pair(yfn, jfn, x, dtype)
    assert np.isfinite(got).all()
    assert_close(got, want, **_tol(dtype))


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), None])
def test_softmax_axes(axis):
    dtype = np.float32
    x = random_values(2, (2, 3, 4), dtype)
    for yfn, jfn in (ACTIVATIONS["softmax"], ACTIVATIONS["log_softmax"]):
        want = np.asarray(jfn(jjnp.asarray(x), axis=axis))
        check_eager_and_jit(lambda v: yfn(v, axis=axis), [x], want, **_tol(dtype))


def test_vmap_softmax():
    x = random_values(3, (5, 7), np.float32)
    got = yax.vmap(nn.softmax)(jnp.asarray(x))
    want = np.stack([np.asarray(nn.softmax(jnp.asarray(row))) for row in x])
    assert_close(got, want)
    got_ax0 = yax.vmap(lambda v: nn.softmax(v), in_axes=1, out_axes=1)(jnp.asarray(x))
    assert_close(got_ax0, np.asarray(jax.nn.softmax(jjnp.asarray(x), axis=0)), rtol=2e-5)
    jac = yax.vmap(yax.jacrev(nn.log_softmax))(jnp.asarray(x[:, :3]))
    want_jac = jax.vmap(jax.jacrev(jax.nn.log_softmax))(jjnp.asarray(x[:, :3]))
    assert_close(jac, np.asarray(want_jac), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("kw", [
    dict(axis=None), dict(axis=1), dict(axis=(0, 2), keepdims=True), dict(axis=-1, b="b"),
    dict(axis=0, b="b", return_sign=True), dict(axis=None, b="b", keepdims=True,
                                                 return_sign=True)])
def test_logsumexp_options(kw, dtype):
    a = random_values(4, (2, 3, 4), dtype)
    kw = dict(kw)
    if kw.get("b") == "b":
        kw["b"] = random_values(5, (3, 4), dtype) / 10
    want = jax.nn.logsumexp(jjnp.asarray(a), **kw)
    want = tuple(np.asarray(w) for w in want) if isinstance(want, tuple) else np.asarray(want)
    check_eager_and_jit(lambda v: nn.logsumexp(v, **kw), [a], want, **_tol(dtype))
    for fn in (special.logsumexp, nn.logsumexp):
        assert fn is nn.logsumexp


def test_logsumexp_zero_weights_and_neg_inf():
    a = np.array([np.inf, 1.0, 2.0], np.float32)
    b = np.array([0.0, 1.0, 1.0], np.float32)
    assert_close(nn.logsumexp(jnp.asarray(a), b=jnp.asarray(b)), np.float32(np.logaddexp(1, 2)))
    assert float(nn.logsumexp(jnp.full((3,), -np.inf))) == -np.inf
    assert np.isnan(float(nn.logsumexp(jnp.asarray([0.0, 1.0]), b=jnp.asarray([1.0, -2.0]))))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis, dtype):
    x = np.array([[0, 2, 5], [1, -1, 3]], np.int32)
    want = np.asarray(jax.nn.one_hot(jjnp.asarray(x), 4, axis=axis))
    check_eager_and_jit(lambda v: nn.one_hot(v, 4, axis=axis), [x], want)
    got = nn.one_hot(jnp.asarray(x), 4, dtype=np.int32, axis=axis)
    assert_close(got, want.astype(np.int32))


def test_standardize_given_stats_and_alias(dtype):
    x = random_values(6, (3, 4), dtype)
    mean, var = x.mean(0, keepdims=True), x.var(0, keepdims=True)
    want = np.asarray(jax.nn.standardize(jjnp.asarray(x), axis=0, mean=mean, variance=var))
    got = nn.normalize(jnp.asarray(x), axis=0, mean=jnp.asarray(mean), variance=jnp.asarray(var))
    assert_close(got, want, **_tol(dtype))
    assert nn.normalize is nn.standardize


def _positive(seed, shape, dtype, lo=0.1, hi=8.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def _unit(seed, shape, dtype, lo=0.02, hi=0.98):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


SPECIAL = {  # name: (yax, jax, input maker)
    "erf": (special.erf, jax.scipy.special.erf, random_values),
    "erfc": (special.erfc, jax.scipy.special.erfc, lambda s, sh, d: random_values(s, sh, d) / 4),
    "erfinv": (special.erfinv, jax.scipy.special.erfinv,
               lambda s, sh, d: _unit(s, sh, d, -0.95, 0.95)),
    "gammaln": (special.gammaln, jax.scipy.special.gammaln, _positive),
    "digamma": (special.digamma, jax.scipy.special.digamma, _positive),
    "expit": (special.expit, jax.scipy.special.expit, random_values),
    "logit": (special.logit, jax.scipy.special.logit, _unit),
    "ndtr": (special.ndtr, jax.scipy.special.ndtr, lambda s, sh, d: random_values(s, sh, d) / 3),
    "ndtri": (special.ndtri, jax.scipy.special.ndtri, _unit),
    "log_ndtr": (special.log_ndtr, jax.scipy.special.log_ndtr, random_values),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_unary(name, dtype):
    yfn, jfn, make = SPECIAL[name]
    x = make(7, (4, 5), dtype)
    loose = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)
    check_eager_and_jit(yfn, [x], np.asarray(jfn(jjnp.asarray(x))), **loose)
    got, want = _grad_pair(yfn, jfn, x, dtype)
    assert_close(got, want, **loose)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "betaln"])
def test_special_binary(name, dtype):
    yfn, jfn = getattr(special, name), getattr(jax.scipy.special, name)
    x, y = _positive(8, (3, 4), dtype), _positive(9, (3, 4), dtype)
    x[0, :2] = 0
    if name == "betaln":
        x[0, :2] = 0.5
    loose = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)
    check_eager_and_jit(yfn, [x, y], np.asarray(jfn(jjnp.asarray(x), jjnp.asarray(y))), **loose)
    got = yax.grad(lambda a, b: jnp.sum(yfn(a, b)), argnums=(0, 1))(jnp.asarray(x), jnp.asarray(y))
    want = jax.grad(lambda a, b: jjnp.sum(jfn(a, b)), argnums=(0, 1))(x, y)
    for g, w in zip(got, want, strict=True):
        assert_close(g, np.asarray(w), **loose)


def test_xlogy_at_zero_is_safe():
    for fn, y in ((special.xlogy, 0.0), (special.xlog1py, -1.0)):
        assert float(fn(0.0, y)) == 0.0
        gx, gy = yax.grad(fn, argnums=(0, 1))(0.0, y)
        assert np.isfinite(float(gy)) and float(gy) == 0.0
    assert_close(special.xlogy(jnp.asarray([2.0]), jnp.asarray([3.0])),
                 np.float32([2 * np.log(3.0)]))


def test_log_ndtr_vs_scipy_tails(x64):
    x = np.linspace(-30, 5, 1401)
    got = np.asarray(special.log_ndtr(jnp.asarray(x)))
    np.testing.assert_allclose(got, scipy.special.log_ndtr(x), rtol=1e-6)
    grad = np.asarray(yax.vmap(yax.grad(special.log_ndtr))(jnp.asarray(x)))
    want = np.exp(scipy.stats.norm.logpdf(x) - scipy.special.log_ndtr(x))
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_log_ndtr_float32_tails():
    x = np.linspace(-30, 5, 701).astype(np.float32)
    got = np.asarray(special.log_ndtr(jnp.asarray(x)))
    np.testing.assert_allclose(got, scipy.special.log_ndtr(x.astype(np.float64)), rtol=1e-5)
    grad = np.asarray(yax.vmap(yax.grad(special.log_ndtr))(jnp.asarray(x)))
    assert np.isfinite(grad).all()


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "ppf"])
def test_norm(name, dtype):
    loc, scale = dtype(0.5), dtype(2.0)
    x = _unit(10, (3, 4), dtype) if name == "ppf" else random_values(10, (3, 4), dtype) / 3
    want = getattr(scipy.stats.norm, name)(x.astype(np.float64), loc, scale).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    fn = getattr(norm, name)
    check_eager_and_jit(lambda v: fn(v, loc, scale), [x], want, **tol)
    got = yax.grad(lambda v: jnp.sum(fn(v, loc, scale)))(jnp.asarray(x))
    jfn = getattr(jax.scipy.stats.norm, name)
    want_g = jax.grad(lambda v: jjnp.sum(jfn(v, loc, scale)))(jjnp.asarray(x))
    assert_close(got, np.asarray(want_g), **tol)


def test_import_paths():
    import yax.scipy
    assert yax.scipy.special.ndtr is special.ndtr
    assert yax.scipy.stats.norm.cdf is norm.cdf


def test_python_scalar_inputs_work_everywhere():
    import scipy.special as sps

    import yax
    for fn, ref in [(yax.scipy.special.ndtr, sps.ndtr), (yax.scipy.special.expit, sps.expit),
                    (yax.nn.softplus, lambda x: np.log1p(np.exp(x))),
                    (yax.scipy.stats.norm.cdf, sps.ndtr)]:
        np.testing.assert_allclose(fn(0.3), ref(0.3), rtol=1e-5)
