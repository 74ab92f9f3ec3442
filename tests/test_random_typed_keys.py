"""Typed PRNG keys (yax.random.key): printing, shape and indexing, conversion to and from raw
data, draws equal to jax's typed keys, and passage through jit, vmap, scan and cond."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
import yax.numpy as jnp
import yax.random as yr

jr = jax.random


def test_repr_dtype_shape_match_jax():
    for seed in (0, 1, 42):
        assert repr(yr.key(seed)) == repr(jr.key(seed))
        assert str(yr.key(seed)) == str(jr.key(seed))
    ks, kj = yr.split(yr.key(0), 3), jr.split(jr.key(0), 3)
    assert repr(ks) == repr(kj)
    assert str(ks.dtype) == "key<fry>" and ks.dtype == yr.key(1).dtype
    assert ks.shape == (3,) and ks.ndim == 1 and ks.size == 3 and len(ks) == 3
    assert yr.key(0).shape == () and yr.key(0).ndim == 0
    assert ks[1].shape == () and ks[1:].shape == (2,) and ks[..., 0:2].shape == (2,)
    assert ks.reshape(3, 1).shape == (3, 1) and ks.reshape((1, 3)).T.shape == (3, 1)
    assert [k.shape for k in ks] == [(), (), ()]
    assert yr.key_impl(ks) == str(jr.key_impl(kj)) == "threefry2x32"
    assert yr.prng_key is not None and isinstance(ks.dtype, yr.prng_key)
    with pytest.raises(TypeError):
        len(yr.key(0))


def test_key_data_round_trip_and_raw_keys_unchanged():
    ks = yr.split(yr.key(5), (2, 3))
    data = yr.key_data(ks)
    assert data.shape == (2, 3, 2) and data.dtype == np.uint32
    np.testing.assert_array_equal(data, jr.key_data(jr.split(jr.key(5), (2, 3))))
    again = yr.wrap_key_data(data)
    assert isinstance(again, yr.PRNGKeyArray) and again.shape == (2, 3)
    np.testing.assert_array_equal(yr.key_data(again), data)
    raw = yr.PRNGKey(5)
    assert isinstance(raw, yax.Array) and raw.shape == (2,)
    np.testing.assert_array_equal(yr.key_data(raw), raw)
    assert isinstance(yr.split(raw), yax.Array)  # raw in, raw out
    assert isinstance(yr.fold_in(yr.key(5), 3), yr.PRNGKeyArray)  # typed in, typed out
    np.testing.assert_array_equal(yr.key_data(yr.fold_in(yr.key(5), 3)),
                                  jr.key_data(jr.fold_in(jr.key(5), 3)))
    assert bool((yr.key(1) == yr.key(1))) and not bool(yr.key(1) == yr.key(2))


def _draws(r, k):
    k1, k2, k3 = r.split(k, 3)
    return [r.normal(k1, (3,)), r.uniform(k2, (2,)), r.randint(k3, (2,), 0, 9),
            r.gamma(k1, 2.0, (2,)), r.bernoulli(k2, 0.3, (3,)), r.permutation(k3, 5)]


def test_samplers_accept_typed_and_raw_keys():
    for seed in (0, 42):
        typed = _draws(yr, yr.key(seed))
        raw = _draws(yr, yr.PRNGKey(seed))
        theirs = _draws(jr, jr.key(seed))
        for a, b, c in zip(typed, raw, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)


def test_typed_keys_through_transformations():
    key = yr.key(3)
    out = yax.jit(yr.split)(key)
    assert isinstance(out, yr.PRNGKeyArray) and out.shape == (2,)
    np.testing.assert_array_equal(yr.key_data(out), jr.key_data(jr.split(jr.key(3))))
    keys = yr.split(key, 4)
    ours = yax.vmap(lambda k: yr.normal(k, (2,)))(keys)
    theirs = jax.vmap(lambda k: jr.normal(k, (2,)))(jr.split(jr.key(3), 4))
    np.testing.assert_array_equal(ours, theirs)
    folded = yax.vmap(lambda k: yr.fold_in(k, 1))(keys)
    assert isinstance(folded, yr.PRNGKeyArray) and folded.shape == (4,)

    def body(carry, _):
        k, total = carry
        k, sub = yr.split(k)
        return (k, total + yr.uniform(sub)), None

    def body_jax(carry, _):
        k, total = carry
        k, sub = jr.split(k)
        return (k, total + jr.uniform(sub)), None

    (k_out, total), _ = yax.lax.scan(body, (key, 0.0), None, length=3)
    (kj_out, total_j), _ = jax.lax.scan(body_jax, (jr.key(3), 0.0), None, length=3)
    assert isinstance(k_out, yr.PRNGKeyArray)
    np.testing.assert_array_equal(yr.key_data(k_out), jr.key_data(kj_out))
    np.testing.assert_array_equal(total, total_j)
    picked = yax.lax.cond(jnp.asarray(True), lambda k: yr.split(k)[0], lambda k: k, key)
    np.testing.assert_array_equal(yr.key_data(picked), yr.key_data(yr.split(key)[0]))


def test_errors():
    with pytest.raises(yax.errors.ShapeError):
        yr.normal(yr.split(yr.key(0), 2), (2,))  # a batch of keys where one is needed
    with pytest.raises(yax.errors.DTypeError):
        yr.wrap_key_data(yr.key(0))
