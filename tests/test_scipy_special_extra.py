"""yax.scipy.special (the functions beyond the error/log-gamma basics) and the special-function
lax primitives: values against SciPy in float32 and float64, all in one jitted batch per dtype;
derivatives by check_grads; vmap and eager agreement on a few."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import yax
import yax.numpy as jnp
import yax.scipy.special as ys
from yax import lax
from yax.test_util import check_grads

_X = np.array([0.05, 0.3, 0.9, 1.5, 2.7, 4.2, 7.5, 12.0])
_A = np.array([0.1, 0.6, 1.0, 2.5, 3.0, 5.0, 9.0, 40.0])
_U = np.linspace(0.05, 0.95, 8)
_S = np.array([-3.7, -1.2, -0.4, 0.0, 0.3, 1.1, 2.5, 25.0])
_N = np.array([0.0, 1.0, 2.0, 3.0, 1.0, 2.0, 5.0, 4.0])


def _cases():
    """name -> (yax function of the inputs, scipy reference, inputs, rtol f32, rtol f64)."""
    return {
        "gamma": (ys.gamma, ss.gamma, (_S + 0.5,), 2e-5, 1e-12),
        "gammasgn": (ys.gammasgn, ss.gammasgn, (_S + 0.5,), 0, 0),
        "gammainc": (ys.gammainc, ss.gammainc, (_A, _X), 5e-5, 1e-12),
        "gammaincc": (ys.gammaincc, ss.gammaincc, (_A, _X), 5e-4, 1e-11),
        "betainc": (ys.betainc, ss.betainc, (_A, _A[::-1], _U), 5e-5, 1e-11),
        "beta": (ys.beta, ss.beta, (_A, _X), 5e-5, 1e-12),
        "polygamma": (ys.polygamma, ss.polygamma, (_N, _X + 0.2), 5e-5, 1e-11),
        "zeta": (ys.zeta, ss.zeta, (_X + 1.5, _A), 5e-5, 1e-11),
        "factorial": (ys.factorial, lambda n: ss.factorial(n, exact=False), (_X,), 2e-5, 1e-12),
        "comb": (ys.comb, ss.comb, (_A + 3, _N), 5e-5, 1e-11),
        "poch": (ys.poch, ss.poch, (_A, _X), 5e-5, 1e-11),
        "multigammaln": (lambda a: ys.multigammaln(a, 3), lambda a: ss.multigammaln(a, 3),
                         (_A + 2,), 2e-5, 1e-12),
        "i0": (ys.i0, ss.i0, (_S,), 2e-5, 1e-12),
        "i0e": (ys.i0e, ss.i0e, (_S * 3,), 2e-5, 1e-12),
        "i1": (ys.i1, ss.i1, (_S,), 2e-5, 1e-12),
        "i1e": (ys.i1e, ss.i1e, (_S * 3,), 2e-5, 1e-12),
        "entr": (ys.entr, ss.entr, (_S,), 2e-5, 1e-12),
        "rel_entr": (ys.rel_entr, ss.rel_entr, (_S, _X), 2e-5, 1e-12),
        "kl_div": (ys.kl_div, ss.kl_div, (_S, _X), 2e-5, 1e-12),
        "erfcx": (ys.erfcx, ss.erfcx, (_S,), 2e-5, 1e-12),
        "expi": (ys.expi, ss.expi, (_S * 2 + 0.01,), 5e-5, 1e-12),
        "exp1": (ys.exp1, ss.exp1, (_X * 3,), 5e-5, 1e-12),
        "expn": (ys.expn, ss.expn, (_N + 1, _X), 5e-5, 1e-12),
        "dawsn": (ys.dawsn, ss.dawsn, (_S * 3,), 5e-5, 1e-11),
        "sici": (lambda x: jnp.stack(ys.sici(x)), lambda x: np.stack(ss.sici(x)), (_X * 2,),
                 5e-5, 1e-11),
        "fresnel": (lambda x: jnp.stack(ys.fresnel(x)), lambda x: np.stack(ss.fresnel(x)), (_S,),
                    5e-5, 1e-11),
        "spence": (ys.spence, ss.spence, (np.concatenate([[0.0], _X[1:]]),), 5e-5, 1e-12),
        "owens_t": (ys.owens_t, ss.owens_t, (_S, _X - 1.0), 5e-5, 1e-11),
        "hyp1f1": (ys.hyp1f1, ss.hyp1f1, (_U, _A + 1, _S), 5e-5, 1e-11),
        "hyp2f1": (ys.hyp2f1, ss.hyp2f1, (_U, _A, _A + 1, _U - 0.3), 5e-5, 1e-10),
        "boxcox": (ys.boxcox, ss.boxcox, (_X, _S / 3), 5e-5, 1e-12),
        "boxcox1p": (ys.boxcox1p, ss.boxcox1p, (_X, _S / 3), 5e-5, 1e-12),
        "loggamma": (ys.loggamma, lambda x: ss.loggamma(x).real, (_X,), 2e-5, 1e-12),
    }


# float32 runs the functions without loops and a few with (each `while_loop` costs XLA ~1-3 s
# to compile here); float64 runs them all
_F32_LOOPS = ("gammainc",)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_values_against_scipy(dt):
    old = yax.config.enable_x64
    yax.config.update("enable_x64", dt == np.float64)
    try:
        cases = _cases()
        if dt == np.float32:
            loops = {"gammaincc", "betainc", "i0", "i0e", "expi", "exp1", "expn", "dawsn", "sici",
                     "fresnel", "hyp1f1", "hyp2f1", "erfcx"}
            cases = {k: v for k, v in cases.items() if k not in loops or k in _F32_LOOPS}

        @yax.jit
        def everything(inputs):
            return {name: fn(*inputs[name]) for name, (fn, *_) in cases.items()}
        inputs = {name: tuple(np.asarray(a, dt) for a in args)
                  for name, (_, _, args, *_) in cases.items()}
        got = everything(inputs)
        for name, (_, ref, args, rtol32, rtol64) in cases.items():
            want = ref(*(np.asarray(a, np.float64) for a in args))
            rtol = rtol32 if dt == np.float32 else rtol64
            assert got[name].dtype == dt, name
            np.testing.assert_allclose(np.asarray(got[name], np.float64), want, rtol=rtol,
                                       atol=rtol * 1e-3, equal_nan=True, err_msg=name)
    finally:
        yax.config.update("enable_x64", old)


def test_bessel_jn_bernoulli_softmax_sph_harm(x64):
    z = np.array([0.0, 0.5, 3.0, 9.0])
    np.testing.assert_allclose(ys.bessel_jn(z, v=3), np.stack([ss.jv(k, z) for k in range(4)]),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ys.bernoulli(6), ss.bernoulli(6), rtol=1e-10)
    x = np.array([[0.3, -1.0, 2.0], [1.0, 0.0, 0.5]])
    np.testing.assert_allclose(ys.softmax(x), ss.softmax(x), rtol=1e-12)
    np.testing.assert_allclose(ys.log_softmax(x, axis=1), ss.log_softmax(x, axis=1), rtol=1e-12)
    n, m = np.array([0, 1, 2, 3, 3]), np.array([0, -1, 2, 1, -3])
    theta, phi = np.array([0.3, 1.0, 2.0, 0.7, 2.9]), np.array([0.1, 2.0, -1.0, 0.5, 4.0])
    np.testing.assert_allclose(ys.sph_harm_y(n, m, theta, phi), ss.sph_harm_y(n, m, theta, phi),
                               rtol=1e-10, atol=1e-12)
    z = np.array([0.3 + 0.2j, -2 + 1j, 5 - 0.5j, 0.1 - 3j, 10 + 10j, 1e-3 + 0j, -4.5 - 0.3j])
    np.testing.assert_allclose(yax.jit(ys.wofz)(z), ss.wofz(z), rtol=1e-13)
    np.testing.assert_allclose(ys.wofz(z.astype(np.complex64)), ss.wofz(z), rtol=1e-6)


def _central_difference(f, v, h=1e-5):
    return (f(v + h) - f(v - h)) / (2 * h)


def test_lax_primitives_edges_and_vmap(x64):
    @yax.jit
    def batch(a, x, edge_a, edge_x):
        return (lax.igamma_grad_a(a, x), lax.random_gamma_grad(a, x),
                lax.igamma(edge_a, edge_x), lax.igammac(edge_a, edge_x),
                yax.vmap(lambda ai: lax.igamma(ai, x))(a))
    edge_a, edge_x = np.array([1.0, 2.0, -1.0, 2.0]), np.array([0.0, np.inf, 1.0, -1.0])
    grad_a, sample_grad, low, up, table = batch(_A, _X, edge_a, edge_x)
    dp_da = _central_difference(lambda a: ss.gammainc(a, _X), _A)
    np.testing.assert_allclose(grad_a, dp_da, rtol=1e-6, atol=1e-12)
    density = np.exp((_A - 1) * np.log(_X) - _X - ss.gammaln(_A))
    np.testing.assert_allclose(sample_grad, -dp_da / density, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(low, ss.gammainc(edge_a, edge_x))
    np.testing.assert_allclose(up, ss.gammaincc(edge_a, edge_x))
    np.testing.assert_allclose(table, ss.gammainc(_A[:, None], _X[None, :]), rtol=1e-12)


def test_derivatives_against_scipy_differences(x64):
    """First derivatives of the loop-based functions (custom JVPs, primitive JVPs), all in one
    jitted program, against central differences of scipy's functions."""
    pairs = [  # (yax function, scipy function) of one argument
        (lambda v: lax.igamma(2.5, v), lambda v: ss.gammainc(2.5, v)),
        (lambda v: lax.igamma(v, 3.0), lambda v: ss.gammainc(v, 3.0)),
        (lambda v: lax.igammac(v, 1.5), lambda v: ss.gammaincc(v, 1.5)),
        (lambda v: ys.betainc(2.0, 3.0, v / 6), lambda v: ss.betainc(2.0, 3.0, v / 6)),
        (ys.i0e, ss.i0e), (ys.i1e, ss.i1e), (ys.erfcx, ss.erfcx), (ys.expi, ss.expi),
        (ys.exp1, ss.exp1), (ys.dawsn, ss.dawsn), (ys.spence, ss.spence),
        (lambda v: ys.sici(v)[0], lambda v: ss.sici(v)[0]),
        (lambda v: ys.fresnel(v)[1], lambda v: ss.fresnel(v)[1]),
        (lambda v: ys.hyp1f1(0.5, 1.5, v), lambda v: ss.hyp1f1(0.5, 1.5, v)),
        (lambda v: ys.polygamma(1, v), lambda v: ss.polygamma(1, v)),
        (lambda v: ys.zeta(3.0, v), lambda v: ss.zeta(3.0, v)),
        (lambda v: ys.owens_t(0.7, v), lambda v: ss.owens_t(0.7, v)),
    ]
    v = np.array([0.4, 2.5, 5.0])
    got = yax.jit(lambda v: [yax.vmap(yax.grad(f))(v) for f, _ in pairs])(v)
    for i, (g, (_, ref)) in enumerate(zip(got, pairs, strict=True)):
        np.testing.assert_allclose(g, _central_difference(ref, v), rtol=1e-6, atol=1e-10,
                                   err_msg=str(i))


def test_check_grads(x64):
    """check_grads (forward and reverse, against finite differences) on functions without
    loops; the loop-based ones are checked in one batch above."""
    check_grads(yax.jit(lax.bessel_i1e), (np.array([-2.0, 0.5]),), order=1)
    check_grads(yax.jit(lambda x, h, b: ys.spence(x) * ys.owens_t(h, b)),
                (np.array([0.3, 1.7]), np.array([0.3, 1.2]), np.array([0.5, 2.0])), order=1)


def test_undefined_derivatives_raise(x64):
    with pytest.raises(yax.errors.YaxError, match="not defined"):
        yax.make_jaxpr(yax.grad(lambda a: lax.betainc(a, 2.0, 0.5)))(1.5)
    with pytest.raises(yax.errors.YaxError, match="not defined"):
        yax.make_jaxpr(yax.grad(lambda m: lax.polygamma(m, 2.0)))(1.0)
    assert jnp.asarray(ys.gamma(2)).dtype == np.float64  # ints promote to float
