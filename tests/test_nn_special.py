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
from tests.suiteb_util import JaxTable, jax_values


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


# The jax oracle of each table below is computed for all its cases in one jitted jax program
# per dtype (tests/suiteb_util.py): eager jax compiled a dozen small programs per case, most of
# this file's jax time. yax's side of every test is unchanged, eager and jitted.


def _weights(x):
    """Fixed weights w of d/dx sum(w * f(x)), so every output counts."""
    return np.linspace(0.5, 1.5, x.size).reshape(x.shape).astype(x.dtype)


def _jax_grad(jfn, x):
    w = _weights(x)
    return jax.grad(lambda v: jjnp.sum(jfn(v) * w))(x)


def _yax_grad(yfn, x):
    w = _weights(x)
    return np.asarray(yax.grad(lambda v: jnp.sum(yfn(v) * w))(jnp.asarray(x)))


def _activation_input(dtype):
    return random_values(0, (3, 5), dtype) * 0.3


def _activation_cases(dtype):
    cases = {}
    for name, (_, jfn) in ACTIVATIONS.items():
        cases[name, "value"] = (jfn, [_activation_input(dtype)])
        cases[name, "grad"] = (lambda x, jfn=jfn: _jax_grad(jfn, x), [_activation_input(dtype)])
        if name != "standardize":
            cases[name, "grad_extreme"] = (lambda x, jfn=jfn: _jax_grad(jfn, x),
                                           [EXTREME.astype(dtype)])
    return cases


_ACTIVATION_ORACLE = JaxTable(_activation_cases)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_values_and_grads(name, dtype):
    yfn, _ = ACTIVATIONS[name]
    want = _ACTIVATION_ORACLE(np.dtype(dtype).name)
    x = _activation_input(dtype)
    check_eager_and_jit(yfn, [x], want[name, "value"], **_tol(dtype))
    assert_close(_yax_grad(yfn, x), want[name, "grad"], **_tol(dtype))


@pytest.mark.parametrize("name", [n for n in ACTIVATIONS if n != "standardize"])
def test_activation_grads_extreme(name, dtype):
    yfn, _ = ACTIVATIONS[name]
    x = EXTREME.astype(dtype)
    got = _yax_grad(yfn, x)
    assert np.isfinite(got).all(), got
    assert_close(got, _ACTIVATION_ORACLE(np.dtype(dtype).name)[name, "grad_extreme"],
                 **_tol(dtype))
    assert np.isfinite(np.asarray(yfn(jnp.asarray(x)))).all()


def test_relu_derivative_at_zero_and_softplus_half():
    assert float(yax.grad(nn.relu)(0.0)) == 0.0
    assert float(yax.grad(nn.softplus)(0.0)) == 0.5
    assert float(yax.grad(nn.log_sigmoid)(0.0)) == 0.5


_LARGE_LOGITS = ["softmax", "log_softmax", "logsumexp"]


def _large_logits(dtype):
    return np.array([[1e4, 1e4, 0.0], [-1e4, 3.0, 1e4]], dtype)


def _large_logits_cases(dtype):
    cases = {}
    for name in _LARGE_LOGITS:
        jfn = ACTIVATIONS[name][1]
        cases[name, "value"] = (jfn, [_large_logits(dtype)])
        cases[name, "grad"] = (lambda x, jfn=jfn: _jax_grad(jfn, x), [_large_logits(dtype)])
    return cases


_LARGE_LOGITS_ORACLE = JaxTable(_large_logits_cases)


@pytest.mark.parametrize("fn", _LARGE_LOGITS)
def test_large_logits(fn, dtype):
    yfn, _ = ACTIVATIONS[fn]
    want = _LARGE_LOGITS_ORACLE(np.dtype(dtype).name)
    x = _large_logits(dtype)
    check_eager_and_jit(yfn, [x], want[fn, "value"], **_tol(dtype))
    got = _yax_grad(yfn, x)
    assert np.isfinite(got).all()
    assert_close(got, want[fn, "grad"], **_tol(dtype))


_SOFTMAX_AXES = [0, 1, -1, (0, 2), None]
_SOFTMAX_AXES_ORACLE = JaxTable(lambda: {
    (name, axis): (lambda v, jfn=ACTIVATIONS[name][1], axis=axis: jfn(v, axis=axis),
                   [random_values(2, (2, 3, 4), np.float32)])
    for name in ("softmax", "log_softmax") for axis in _SOFTMAX_AXES})


@pytest.mark.parametrize("axis", _SOFTMAX_AXES)
def test_softmax_axes(axis):
    dtype = np.float32
    x = random_values(2, (2, 3, 4), dtype)
    for name in ("softmax", "log_softmax"):
        yfn = ACTIVATIONS[name][0]
        want = _SOFTMAX_AXES_ORACLE()[name, axis]
        check_eager_and_jit(lambda v: yfn(v, axis=axis), [x], want, **_tol(dtype))


def test_vmap_softmax():
    x = random_values(3, (5, 7), np.float32)
    got = yax.vmap(nn.softmax)(jnp.asarray(x))
    want = np.stack([np.asarray(nn.softmax(jnp.asarray(row))) for row in x])
    assert_close(got, want)
    theirs = jax_values({
        "axis0": (lambda v: jax.nn.softmax(v, axis=0), [x]),
        "jac": (jax.vmap(jax.jacrev(jax.nn.log_softmax)), [x[:, :3]])})
    got_ax0 = yax.vmap(lambda v: nn.softmax(v), in_axes=1, out_axes=1)(jnp.asarray(x))
    assert_close(got_ax0, theirs["axis0"], rtol=2e-5)
    jac = yax.vmap(yax.jacrev(nn.log_softmax))(jnp.asarray(x[:, :3]))
    assert_close(jac, theirs["jac"], rtol=2e-5, atol=2e-5)


_LOGSUMEXP_OPTIONS = [
    dict(axis=None), dict(axis=1), dict(axis=(0, 2), keepdims=True), dict(axis=-1, b="b"),
    dict(axis=0, b="b", return_sign=True), dict(axis=None, b="b", keepdims=True,
                                                 return_sign=True)]


def _logsumexp_kw(i, dtype):
    kw = dict(_LOGSUMEXP_OPTIONS[i])
    if kw.get("b") == "b":
        kw["b"] = random_values(5, (3, 4), dtype) / 10
    return kw


def _logsumexp_cases(dtype):
    cases = {}
    for i in range(len(_LOGSUMEXP_OPTIONS)):
        kw = _logsumexp_kw(i, dtype)
        b = kw.pop("b", None)
        if b is None:
            cases[i] = (lambda a, kw=kw: jax.nn.logsumexp(a, **kw),
                        [random_values(4, (2, 3, 4), dtype)])
        else:
            cases[i] = (lambda a, b, kw=kw: jax.nn.logsumexp(a, b=b, **kw),
                        [random_values(4, (2, 3, 4), dtype), b])
    return cases


_LOGSUMEXP_ORACLE = JaxTable(_logsumexp_cases)


@pytest.mark.parametrize("i", range(len(_LOGSUMEXP_OPTIONS)),
                         ids=[f"kw{i}" for i in range(len(_LOGSUMEXP_OPTIONS))])
def test_logsumexp_options(i, dtype):
    a = random_values(4, (2, 3, 4), dtype)
    kw = _logsumexp_kw(i, dtype)
    want = _LOGSUMEXP_ORACLE(np.dtype(dtype).name)[i]
    want = tuple(want) if isinstance(want, tuple) else want
    check_eager_and_jit(lambda v: nn.logsumexp(v, **kw), [a], want, **_tol(dtype))
    for fn in (special.logsumexp, nn.logsumexp):
        assert fn is nn.logsumexp


def test_logsumexp_zero_weights_and_neg_inf():
    a = np.array([np.inf, 1.0, 2.0], np.float32)
    b = np.array([0.0, 1.0, 1.0], np.float32)
    assert_close(nn.logsumexp(jnp.asarray(a), b=jnp.asarray(b)), np.float32(np.logaddexp(1, 2)))
    assert float(nn.logsumexp(jnp.full((3,), -np.inf))) == -np.inf
    assert np.isnan(float(nn.logsumexp(jnp.asarray([0.0, 1.0]), b=jnp.asarray([1.0, -2.0]))))


_ONE_HOT_AXES = [-1, 0, 1]
_ONE_HOT_ORACLE = JaxTable(lambda dtype_name: {
    axis: (lambda v, axis=axis: jax.nn.one_hot(v, 4, axis=axis),
           [np.array([[0, 2, 5], [1, -1, 3]], np.int32)]) for axis in _ONE_HOT_AXES})


@pytest.mark.parametrize("axis", _ONE_HOT_AXES)
def test_one_hot(axis, dtype):
    x = np.array([[0, 2, 5], [1, -1, 3]], np.int32)
    want = _ONE_HOT_ORACLE(np.dtype(dtype).name)[axis]
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


def _special_cases(dtype):
    cases = {}
    for name, (_, jfn, make) in SPECIAL.items():
        cases[name, "value"] = (jfn, [make(7, (4, 5), dtype)])
        cases[name, "grad"] = (lambda x, jfn=jfn: _jax_grad(jfn, x), [make(7, (4, 5), dtype)])
    for name in _SPECIAL_BINARY:
        jfn = getattr(jax.scipy.special, name)
        cases[name, "value"] = (jfn, _special_binary_inputs(name, dtype))
        cases[name, "grad"] = (
            lambda x, y, jfn=jfn: jax.grad(lambda a, b: jjnp.sum(jfn(a, b)), argnums=(0, 1))(x, y),
            _special_binary_inputs(name, dtype))
    return cases


_SPECIAL_BINARY = ["xlogy", "xlog1py", "betaln"]
_SPECIAL_ORACLE = JaxTable(_special_cases)


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_unary(name, dtype):
    yfn, _, make = SPECIAL[name]
    want = _SPECIAL_ORACLE(np.dtype(dtype).name)
    x = make(7, (4, 5), dtype)
    loose = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)
    check_eager_and_jit(yfn, [x], want[name, "value"], **loose)
    assert_close(_yax_grad(yfn, x), want[name, "grad"], **loose)


def _special_binary_inputs(name, dtype):
    x, y = _positive(8, (3, 4), dtype), _positive(9, (3, 4), dtype)
    x[0, :2] = 0
    if name == "betaln":
        x[0, :2] = 0.5
    return [x, y]


@pytest.mark.parametrize("name", _SPECIAL_BINARY)
def test_special_binary(name, dtype):
    yfn = getattr(special, name)
    want = _SPECIAL_ORACLE(np.dtype(dtype).name)
    x, y = _special_binary_inputs(name, dtype)
    loose = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)
    check_eager_and_jit(yfn, [x, y], want[name, "value"], **loose)
    got = yax.grad(lambda a, b: jnp.sum(yfn(a, b)), argnums=(0, 1))(jnp.asarray(x), jnp.asarray(y))
    for g, w in zip(got, want[name, "grad"], strict=True):
        assert_close(g, w, **loose)


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


_NORM = ["logpdf", "pdf", "cdf", "logcdf", "ppf"]


def _norm_input(name, dtype):
    return _unit(10, (3, 4), dtype) if name == "ppf" else random_values(10, (3, 4), dtype) / 3


def _norm_grad_cases(dtype):
    loc, scale = dtype(0.5), dtype(2.0)

    def jax_grad(name):
        jfn = getattr(jax.scipy.stats.norm, name)
        return jax.grad(lambda v: jjnp.sum(jfn(v, loc, scale)))
    return {name: (jax_grad(name), [_norm_input(name, dtype)]) for name in _NORM}


_NORM_GRAD_ORACLE = JaxTable(lambda dtype_name: _norm_grad_cases(np.dtype(dtype_name).type))


@pytest.mark.parametrize("name", _NORM)
def test_norm(name, dtype):
    loc, scale = dtype(0.5), dtype(2.0)
    x = _norm_input(name, dtype)
    want = getattr(scipy.stats.norm, name)(x.astype(np.float64), loc, scale).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    fn = getattr(norm, name)
    check_eager_and_jit(lambda v: fn(v, loc, scale), [x], want, **tol)
    got = yax.grad(lambda v: jnp.sum(fn(v, loc, scale)))(jnp.asarray(x))
    assert_close(got, _NORM_GRAD_ORACLE(np.dtype(dtype).name)[name], **tol)


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
