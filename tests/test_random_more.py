"""The further yax.random distributions (binomial, multinomial, orthogonal, ball, maxwell,
double_sided_maxwell, triangular, wald, generalized_normal, f, permutation(independent=True))
against jax.random, bit for bit: eagerly, under jit (all draws in one program) and under vmap
over split keys."""

from __future__ import annotations

import jax
import numpy as np

import yax
import yax.random as yr

jr = jax.random
SEEDS = (0, 1, 42)
SHAPES = ((), (3,), (2, 5))
P3 = np.array([0.2, 0.3, 0.5], np.float32)

DRAWS = {
    "binomial": lambda r, k, s: r.binomial(k, 20.0, 0.3, s),
    "binomial_btrs": lambda r, k, s: r.binomial(k, 200.0, 0.7, s),
    "multinomial": lambda r, k, s: r.multinomial(k, 30.0, P3, shape=s + (3,)),
    "orthogonal": lambda r, k, s: r.orthogonal(k, 3, s),
    "orthogonal_wide": lambda r, k, s: r.orthogonal(k, 2, s, m=4),
    "ball": lambda r, k, s: r.ball(k, 3, 2.5, s),
    "maxwell": lambda r, k, s: r.maxwell(k, s),
    "double_sided_maxwell": lambda r, k, s: r.double_sided_maxwell(k, 1.0, 2.0, s),
    "triangular": lambda r, k, s: r.triangular(k, 0.0, 0.3, 1.0, s),
    "wald": lambda r, k, s: r.wald(k, 1.5, s),
    "generalized_normal": lambda r, k, s: r.generalized_normal(k, 1.5, s),
    "f": lambda r, k, s: r.f(k, 3.0, 5.0, s),
}
# XLA rounds these by an ulp differently from jax's compilation of the same program for some
# fusions (a fused sqrt of a sum; a pow of a folded 1/p), so they are compared to 1 ulp.
ULP_CLOSE = {"maxwell", "double_sided_maxwell", "ball", "generalized_normal", "f"}


def _all(r, key, shape):
    return {name: fn(r, key, shape) for name, fn in DRAWS.items()}


def assert_same(name, a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (name, a.dtype, b.dtype, a.shape, b.shape)
    if name in ULP_CLOSE:
        np.testing.assert_allclose(a, b, rtol=3e-7 if a.dtype == np.float32 else 1e-15,
                                   err_msg=name)
    else:
        np.testing.assert_array_equal(a, b, err_msg=name)


# Compiling the samplers dominates the cost (their while loops especially), and a compiled
# kernel serves every seed: so each shape is checked in one mode only, with all the seeds.


def test_eager_matches_jax():
    for seed in SEEDS:
        ours, theirs = _all(yr, yr.key(seed), (2, 5)), _all(jr, jr.key(seed), (2, 5))
        for name in DRAWS:
            assert_same(name, ours[name], theirs[name])


def test_jit_matches_jax_jit():
    """All draws of shape () in one jitted program per library ((3,) is drawn by the x64
    test, (2, 5) by the eager one)."""
    ours_fn = yax.jit(lambda k: [_all(yr, k, s) for s in SHAPES[:1]])
    theirs_fn = jax.jit(lambda k: [_all(jr, k, s) for s in SHAPES[:1]])
    for seed in SEEDS:
        for ours, theirs in zip(ours_fn(yr.PRNGKey(seed)), theirs_fn(jr.PRNGKey(seed))):
            for name in DRAWS:
                assert_same(name, ours[name], theirs[name])


def test_x64_matches_jax(x64):
    subset = ("binomial", "triangular", "wald", "orthogonal", "maxwell")
    for seed in SEEDS:
        for name in subset:
            ours = DRAWS[name](yr, yr.key(seed), (3,))
            assert_same(name, ours, DRAWS[name](jr, jr.key(seed), (3,)))
            assert np.asarray(ours).dtype == np.float64


def test_vmap_over_split_keys():
    subset = ("binomial", "triangular", "wald")
    ours = yax.vmap(lambda k: {n: DRAWS[n](yr, k, (2,)) for n in subset})(yr.split(yr.key(7), 4))
    theirs = jax.vmap(lambda k: {n: DRAWS[n](jr, k, (2,)) for n in subset})(
        jr.split(jr.key(7), 4))
    for name in subset:
        assert_same(name, ours[name], theirs[name])


def test_permutation_independent_and_properties():
    x = np.arange(24).reshape(4, 6)
    for seed in SEEDS:
        ours = yr.permutation(yr.key(seed), x, axis=1, independent=True)
        theirs = jr.permutation(jr.key(seed), x, axis=1, independent=True)
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.sort(np.asarray(ours), axis=1), x)
    q = np.asarray(yr.orthogonal(yr.key(0), 4, (2,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    counts = np.asarray(yr.multinomial(yr.key(0), 30.0, P3, shape=(5, 3)))
    np.testing.assert_array_equal(counts.sum(-1), 30.0)
    b = np.asarray(yr.ball(yr.key(0), 3, 2.0, (50,)))
    assert (np.linalg.norm(b, axis=-1) <= 1).all()


def test_binomial_edge_cases():
    n = np.array([-1.0, np.nan, np.inf, 5.0, 5.0, 0.0], np.float32)
    p = np.array([0.3, 0.3, 0.3, np.nan, 0.9, 0.5], np.float32)
    ours = yr.binomial(yr.key(3), n, p)
    np.testing.assert_array_equal(ours, jr.binomial(jr.key(3), n, p))
    assert np.isnan(ours[0]) and np.isinf(ours[2])


GRAD_CASES = {
    "gamma": lambda r, k, a: r.gamma(k, a),
    "loggamma": lambda r, k, a: r.loggamma(k, a),
    "beta": lambda r, k, a: r.beta(k, a, 2.0),
    "dirichlet": lambda r, k, a: r.dirichlet(k, a),
}


def _shape_grads(r, grad, a):
    weights = np.arange(1.0, 1.0 + a.size, dtype=a.dtype)
    return {name: grad(lambda a, f=f: (f(r, r.PRNGKey(1), a) * weights).sum())(a)
            for name, f in GRAD_CASES.items()}


def test_reparameterised_shape_gradients_match_jax():
    a = np.array([0.3, 1.0, 2.5, 7.0, 30.0], np.float32)
    ours = yax.jit(lambda a: _shape_grads(yr, yax.grad, a))(a)
    theirs = jax.jit(lambda a: _shape_grads(jr, jax.grad, a))(a)
    for name in GRAD_CASES:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=2e-4, atol=1e-6,
                                   err_msg=name)
    per_key = yax.vmap(lambda k: yax.grad(lambda a: yr.gamma(k, a).sum())(a))(
        yr.split(yr.key(0), 2))
    per_key_jax = jax.vmap(lambda k: jax.grad(lambda a: jr.gamma(k, a).sum())(a))(
        jr.split(jr.key(0), 2))
    np.testing.assert_allclose(per_key, per_key_jax, rtol=2e-4)


def test_reparameterised_gradient_keeps_the_cdf_fixed(x64):
    """dx/da moves the draw along a level set of the CDF: -(dP/da) / (dP/dx), by central
    differences of scipy's regularised incomplete gamma (the rejection sampler's own bits are
    not an inverse CDF, so finite differences of the draws do not give this derivative)."""
    from scipy import special, stats

    from yax.random.gamma_grad import sample_grad
    a = np.array([0.3, 0.7, 2.0, 5.0, 40.0])
    x = np.array([0.05, 1.3, 0.8, 6.5, 35.0])
    h = 1e-6
    dp_da = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(sample_grad(a, x), -dp_da / stats.gamma.pdf(x, a), rtol=1e-6)
    ours = yax.grad(lambda a: yr.loggamma(yr.PRNGKey(3), a).sum())(a)
    theirs = jax.grad(lambda a: jr.loggamma(jr.PRNGKey(3), a).sum())(a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
