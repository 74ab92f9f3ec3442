"""yax.random keys, and draws under jit / vmap / scan / fori_loop, against jax doing the same
(bit for bit); plus the errors a user can reach."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
import yax.random as yr
from tests.harness import only_against_jax_0_10
from yax import errors
from yax.random._checks import RandomArgumentError

jr = jax.random


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b)


def assert_tree_same(a, b):
    la, lb = yax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb, strict=True):
        assert_same(x, y)


# --- keys ------------------------------------------------------------------------------------

SEEDS_X32 = [0, 1, 42, 2 ** 31 - 1, -1, 2 ** 32 + 5, -(2 ** 40), 2 ** 63 - 1,
             np.uint32(4_000_000_000), np.int64(-3), np.int8(-2)]


def test_prngkey_matches_jax():
    for seed in SEEDS_X32:
        assert_same(yr.PRNGKey(seed), jr.PRNGKey(seed))
        assert_same(yr.key_data(yr.key(seed)), jr.key_data(jr.key(seed)))


def test_prngkey_matches_jax_x64(x64):
    for seed in SEEDS_X32 + [np.uint64(2 ** 64 - 1)]:
        assert_same(yr.PRNGKey(seed), jr.PRNGKey(seed))


def test_traced_seeds():
    seeds = np.array([0, 7, -3, 2 ** 31 - 1], np.int32)
    assert_same(yax.vmap(yr.PRNGKey)(jnp.asarray(seeds)), jax.vmap(jr.PRNGKey)(seeds))
    assert_same(yax.jit(yr.PRNGKey)(jnp.asarray(np.int32(-3))), jr.PRNGKey(np.int32(-3)))


def test_traced_64bit_seeds(x64):
    seeds = np.array([-(2 ** 40), 2 ** 63 - 1, 5], np.int64)
    assert_same(yax.vmap(yr.PRNGKey)(jnp.asarray(seeds)), jax.vmap(jr.PRNGKey)(seeds))


def test_split_and_fold_in_match_jax():
    for seed in (0, 42, 2 ** 31 - 1):
        k, kj = yr.PRNGKey(seed), jr.PRNGKey(seed)
        assert_same(yr.split(k), jr.split(kj))
        assert_same(yr.split(k, 5), jr.split(kj, 5))
        assert_same(yr.split(k, (2, 3)), jr.split(kj, (2, 3)))
        assert_same(yr.split(k, 1), jr.split(kj, 1))
        for data in (0, 7, 2 ** 32 - 1, np.int32(-1), np.uint8(200)):
            assert_same(yr.fold_in(k, data), jr.fold_in(kj, data))
        assert_same(yr.fold_in(k, -5), jr.fold_in(kj, np.int32(-5)))


def test_key_helpers():
    k = yr.PRNGKey(3)
    keys = yr.split(k, 4)
    assert yr.key_data(keys) is keys
    assert_same(yr.key_data(yr.wrap_key_data(jnp.asarray(np.asarray(k)))), k)
    assert yr.key_impl(keys) == "threefry2x32"
    assert yr.clone(k) is k
    assert yr.key(3, impl="threefry2x32").shape == ()  # a typed key (key<fry>)
    with pytest.raises(errors.ShapeError):
        yr.wrap_key_data(jnp.zeros((3,), jnp.uint32))


# --- transformations ------------------------------------------------------------------------

def _program(r):
    """A few draws from one key, the same text for yax and jax."""
    def f(key, alpha):
        k1, k2, k3 = r.split(key, 3)
        return (r.uniform(k1, (3,), minval=-1.0), r.normal(k2, (2,)), r.gamma(k3, alpha, (2,)),
                r.randint(k1, (2,), 0, 7), r.permutation(k2, 5),
                r.choice(k3, 5, (2,), replace=False), r.bernoulli(r.fold_in(k1, 3), 0.3, (2,)))
    return f


@pytest.fixture(scope="module")
def program():
    return _program(yr), yax.jit(_program(yr)), _program(jr)


def test_jit_equals_eager_equals_jax(program):
    eager, jitted, jax_f = program
    for seed in (0, 11):
        k = yr.PRNGKey(seed)
        expected = jax_f(jr.PRNGKey(seed), 1.5)
        assert_tree_same(eager(k, 1.5), expected)
        assert_tree_same(jitted(k, 1.5), expected)  # a literal gamma parameter under jit


@only_against_jax_0_10("jax 0.11 rounds these draws differently (by an ulp)")
def test_vmap_over_split_keys(program):
    eager, jitted, jax_f = program
    keys, keys_j = yr.split(yr.PRNGKey(5), 3), jr.split(jr.PRNGKey(5), 3)
    alphas = np.array([1.5, 0.5, 3.0], np.float32)
    batched = yax.vmap(jitted)(keys, jnp.asarray(alphas))
    assert_tree_same(batched, jax.vmap(jax_f)(keys_j, alphas))
    for i in range(3):  # and equal to a Python loop over the keys
        one = eager(keys[i], jnp.asarray(alphas[i]))
        for b, o in zip(batched, one, strict=True):
            assert_same(b[i], o)


def test_split_fold_in_and_draws_inside_vmap():
    def f(r):
        def g(key, i):
            sub = r.split(r.fold_in(key, i), (2, 2))[1, 0]
            return sub, r.normal(sub, (2,)), r.categorical(sub, jjnp.log(np.array([.2, .8])))
        return g
    keys, keys_j = yr.split(yr.PRNGKey(1), 4), jr.split(jr.PRNGKey(1), 4)
    idx = np.arange(4, dtype=np.int32)
    ours = yax.vmap(f(yr))(keys, jnp.asarray(idx))
    assert_tree_same(ours, jax.vmap(f(jr))(keys_j, idx))
    # one key, vmapped data; and in_axes=None for the key
    assert_tree_same(yax.vmap(f(yr), in_axes=(None, 0))(yr.PRNGKey(2), jnp.asarray(idx)),
                     jax.vmap(f(jr), in_axes=(None, 0))(jr.PRNGKey(2), idx))


@only_against_jax_0_10("jax 0.11 rounds these draws differently (by an ulp)")
def test_vmap_gamma_over_keys_with_shared_parameter():
    keys, keys_j = yr.split(yr.PRNGKey(5), 3), jr.split(jr.PRNGKey(5), 3)
    ours = yax.vmap(lambda k: yr.gamma(yr.split(k, 3)[2], 1.5, (2,)))(keys)
    assert_same(ours, jax.vmap(lambda k: jr.gamma(jr.split(k, 3)[2], 1.5, (2,)))(keys_j))
    for i in range(3):
        assert_same(ours[i], yr.gamma(yr.split(keys[i], 3)[2], 1.5, (2,)))


def test_vmap_gamma_with_batched_parameters():
    alphas = np.array([0.2, 1.0, 3.0, 10.0], np.float32)
    keys, keys_j = yr.split(yr.PRNGKey(9), 4), jr.split(jr.PRNGKey(9), 4)
    assert_same(yax.vmap(lambda k, a: yr.gamma(k, a, (2,)))(keys, jnp.asarray(alphas)),
                jax.vmap(lambda k, a: jr.gamma(k, a, (2,)))(keys_j, alphas))


def test_scan_matches_jax():
    def body(r):
        def step(key, x):
            key, sub = r.split(key)
            return key, r.normal(sub, (2,)) + x
        return step
    xs = np.arange(5, dtype=np.float32)
    carry, ys = yax.lax.scan(body(yr), yr.PRNGKey(4), jnp.asarray(xs))
    carry_j, ys_j = jax.lax.scan(body(jr), jr.PRNGKey(4), xs)
    assert_same(carry, carry_j)
    assert_same(ys, ys_j)


def test_fori_loop_matches_jax():
    def body(r):
        def step(i, c):
            key, acc = c
            return key, acc + r.uniform(r.fold_in(key, i), (3,))
        return step
    init, init_j = (yr.PRNGKey(6), jnp.zeros(3)), (jr.PRNGKey(6), jjnp.zeros(3))
    expected = jax.lax.fori_loop(0, 4, body(jr), init_j)[1]
    assert_same(yax.lax.fori_loop(0, 4, body(yr), init)[1], expected)
    traced = yax.jit(lambda n: yax.lax.fori_loop(0, n, body(yr), init)[1])
    assert_same(traced(jnp.asarray(4)), expected)


def test_x64_float_draws_are_float64(x64):
    k = yr.PRNGKey(0)
    assert yr.uniform(k).dtype == np.float64
    assert yr.normal(k, (2,), np.float32).dtype == np.float32
    assert yr.randint(k, (2,), 0, 3).dtype == np.int64
    assert yr.bits(k).dtype == np.uint64
    assert_same(yax.jit(lambda k: yr.normal(k, (3,)))(k), jr.normal(jr.PRNGKey(0), (3,)))


def test_float64_request_without_x64_is_float32():
    with pytest.warns(UserWarning, match="truncated"):
        assert yr.normal(yr.PRNGKey(0), (2,), np.float64).dtype == np.float32


def test_eager_draws_do_not_retrace():
    k = yr.PRNGKey(0)
    yr.normal(k, (4,))
    kernel = next(iter(yr.continuous._normal_kernel._jitted.values()))
    before = sum(f.trace_count for f in yr.continuous._normal_kernel._jitted.values())
    for seed in range(3):
        yr.normal(yr.PRNGKey(seed), (4,))
    after = sum(f.trace_count for f in yr.continuous._normal_kernel._jitted.values())
    assert after == before and kernel.trace_count >= 1


# --- errors ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def key():
    return yr.PRNGKey(0)


ERROR_CASES = [
    ("batch of keys", lambda k: yr.normal(yr.split(k, 3)), errors.ShapeError, "vmap"),
    ("float key", lambda k: yr.normal(jnp.zeros(2)), errors.DTypeError, "uint32"),
    ("not a key", lambda k: yr.uniform(5), errors.DTypeError, "PRNG key"),
    ("traced shape", lambda k: yax.jit(lambda n: yr.normal(k, (n,)))(3),
     errors.ConcretizationError, "static"),
    ("traced split num", lambda k: yax.jit(lambda n: yr.split(k, n))(3),
     errors.ConcretizationError, "static"),
    ("negative shape", lambda k: yr.normal(k, (-1,)), errors.ShapeError, "negative"),
    ("parameter shape", lambda k: yr.uniform(k, (3,), minval=jnp.zeros(4)), errors.ShapeError,
     "broadcast"),
    ("gumbel mode", lambda k: yr.gumbel(k, mode="x"), RandomArgumentError, "mode"),
    ("uniform int dtype", lambda k: yr.uniform(k, dtype=jnp.int32), errors.DTypeError, "float"),
    ("signed bits", lambda k: yr.bits(k, dtype=jnp.int32), errors.DTypeError, "unsigned"),
    ("randint float dtype", lambda k: yr.randint(k, (2,), 0, 5, dtype=jnp.float32),
     errors.DTypeError, "integer"),
    ("randint overflow", lambda k: yr.randint(k, (2,), 0, 2 ** 31), errors.DTypeError, "x64"),
    ("choice too many", lambda k: yr.choice(k, 3, (5,), replace=False), RandomArgumentError,
     "without replacement"),
    ("choice p shape", lambda k: yr.choice(k, 3, (2,), p=jnp.ones(4) / 4), errors.ShapeError,
     "p must"),
    ("choice traced a", lambda k: yax.jit(lambda a: yr.choice(k, a, (2,)))(3),
     errors.ConcretizationError, "concrete"),
    ("categorical too many", lambda k: yr.categorical(k, jnp.zeros(3), shape=(4,),
                                                      replace=False), RandomArgumentError,
     "cannot exceed"),
    ("dirichlet scalar", lambda k: yr.dirichlet(k, 1.0), errors.ShapeError, "rank"),
    ("mvn cov shape", lambda k: yr.multivariate_normal(k, jnp.zeros(2), jnp.eye(3)),
     errors.ShapeError, "cov"),
    ("mvn method", lambda k: yr.multivariate_normal(k, jnp.zeros(2), jnp.eye(2), method="qr"),
     RandomArgumentError, "method"),
    ("float seed", lambda k: yr.PRNGKey(1.5), errors.DTypeError, "integer"),
    ("array seed", lambda k: yr.PRNGKey(jnp.arange(3)), errors.ShapeError, "vmap"),
    ("huge seed", lambda k: yr.PRNGKey(2 ** 70), errors.DTypeError, "int64"),
    ("other impl", lambda k: yr.PRNGKey(0, impl="rbg"), RandomArgumentError, "threefry2x32"),
    ("fold_in array", lambda k: yr.fold_in(k, jnp.arange(2)), errors.ShapeError, "scalar"),
    ("fold_in float", lambda k: yr.fold_in(k, 1.5), errors.DTypeError, "integer"),
    ("bernoulli int p", lambda k: yr.bernoulli(k, 1), errors.DTypeError, "float"),
    ("permutation float", lambda k: yr.permutation(k, 2.5), errors.DTypeError, "integer"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(key, case):
    _, fun, error, text = case
    with pytest.raises(error, match=text) as info:
        fun(key)
    assert isinstance(info.value, errors.YaxError)
    assert __file__ in str(info.value)  # the message names the user's line


def test_docs_page_runs():
    """The code blocks of docs/random.md run in order, in one namespace."""
    import pathlib
    import re
    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "random.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, "docs/random.md", "exec"), namespace)


def test_gradients_through_draws():
    """Draws are smooth in location/scale parameters; the gradients agree with jax's."""
    cases = [lambda r, k, t: r.uniform(k, (3,), minval=t, maxval=2.0).sum(),
             lambda r, k, t: r.lognormal(k, t, (3,)).sum(),
             lambda r, k, t: r.truncated_normal(k, t, 2.0, (3,)).sum()]
    k, kj = yr.PRNGKey(1), jr.PRNGKey(1)
    for f in cases:
        expected = jax.grad(lambda t: f(jr, kj, t))(0.5)
        np.testing.assert_allclose(yax.grad(lambda t: f(yr, k, t))(0.5), expected, rtol=1e-6)
        np.testing.assert_allclose(yax.jit(yax.grad(lambda t: f(yr, k, t)))(0.5), expected,
                                   rtol=1e-6)


def test_gamma_gradient_is_reparameterised():
    """(Was: a clear error.) Now the implicit-reparameterisation gradient, as jax's; more in
    tests/test_random_more.py."""
    ours = yax.grad(lambda a: yr.gamma(yr.PRNGKey(0), a, (2,)).sum())(2.0)
    theirs = jax.grad(lambda a: jr.gamma(jr.PRNGKey(0), a, (2,)).sum())(2.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)


def test_literal_parameters_under_jit():
    """Constant parameters must not be folded by XLA on the host (erf/log there can differ from
    the compiled kernel by an ulp): jit(f)(key) == f(key) == jax's eager draw."""
    cases = [lambda r, k: r.truncated_normal(k, 2.0, 5.0, (6,)),
             lambda r, k: r.gamma(k, 0.3, (3,)),
             lambda r, k: r.poisson(k, 3.3, (4,))]
    k, kj = yr.PRNGKey(3), jr.PRNGKey(3)
    for f in cases:
        expected = f(jr, kj)
        assert_same(f(yr, k), expected)
        assert_same(yax.jit(lambda key: f(yr, key))(k), expected)
