"""Typed PRNG keys as the jax.Arrays flax.nnx's Rngs takes them for: isinstance Array, a
key<fry> dtype inside `prng_key` (jnp.issubdtype and yax.dtypes.issubdtype), `typeof` giving
`key<fry>[...]`, and the same inside jit/vmap/scan; raw uint32 keys stay outside prng_key."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.dtypes
import yax.numpy as jnp


def _facts(api, xnp, key):
    return (isinstance(key, api.Array), xnp.issubdtype(key.dtype, api.dtypes.prng_key),
            api.dtypes.issubdtype(key.dtype, api.dtypes.prng_key),
            api.dtypes.issubdtype(key.dtype, api.dtypes.extended),
            str(key.dtype), str(api.typeof(key)), repr(api.typeof(key)),
            tuple(api.typeof(key).shape))


_KEYS = {
    "key": lambda api: api.random.key(0),
    "split": lambda api: api.random.split(api.random.key(1), 3),
    "fold_in": lambda api: api.random.fold_in(api.random.key(1), 7),
    "wrapped": lambda api: api.random.wrap_key_data(np.zeros((2, 2), np.uint32)),
}


@pytest.mark.parametrize("name", sorted(_KEYS))
def test_typed_key_facts_as_jax(name):
    assert _facts(yax, jnp, _KEYS[name](yax)) == _facts(jax, jjnp, _KEYS[name](jax))


@pytest.mark.parametrize("transform", ["jit", "vmap", "scan"])
def test_typed_key_facts_inside_transformations_as_jax(transform):
    def seen(api, xnp):
        out = []

        def body(k):
            out.append(_facts(api, xnp, k))
            return api.random.key_data(k)
        keys = api.random.split(api.random.key(0), 2)
        if transform == "jit":
            api.jit(body)(keys)
        elif transform == "vmap":
            api.vmap(body)(keys)
        else:
            api.lax.scan(lambda c, k: (c, body(k)), 0, keys)
        return out
    assert seen(yax, jnp) == seen(jax, jjnp)


def test_raw_keys_and_numbers_are_not_prng_keys_as_jax():
    for api, xnp in ((yax, jnp), (jax, jjnp)):
        raw = api.random.PRNGKey(0)
        assert not xnp.issubdtype(raw.dtype, api.dtypes.prng_key)
        assert not api.dtypes.issubdtype(np.float32, api.dtypes.prng_key)
        assert xnp.issubdtype(raw.dtype, np.unsignedinteger)


def test_typed_key_copy_and_data_as_jax():
    k, jk = yax.random.key(3), jax.random.key(3)
    np.testing.assert_array_equal(np.asarray(yax.random.key_data(k.copy())),
                                  np.asarray(jax.random.key_data(jk.copy())))
    np.testing.assert_array_equal(
        np.asarray(yax.random.normal(yax.random.split(k)[1], (3,))),
        np.asarray(jax.random.normal(jax.random.split(jk)[1], (3,))))


def _rngs_stream_steps(api, xnp):
    """What flax.nnx's Rngs does with a key: wrap raw uint32 data, fold in a uint32 counter,
    split, broadcast to a batch of keys (jnp.broadcast_to) and draw from the results."""
    key = api.random.wrap_key_data(api.random.PRNGKey(5))
    count = xnp.zeros(key.shape, dtype=xnp.uint32)
    drawn = api.random.fold_in(key, count + 1)
    batch = xnp.broadcast_to(drawn, (3,) + drawn.shape)
    pair = xnp.broadcast_to(api.random.split(drawn, 2), (4, 2))
    return (batch.shape, pair.shape, np.asarray(api.random.key_data(batch)),
            np.asarray(api.random.key_data(pair)),
            np.asarray(api.random.normal(api.random.split(drawn)[0], (2,))))


def test_rngs_stream_steps_as_jax():
    ours, theirs = _rngs_stream_steps(yax, jnp), _rngs_stream_steps(jax, jjnp)
    assert ours[:2] == theirs[:2] == ((3,), (4, 2))
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_array_equal(a, b)


def test_broadcast_to_of_a_typed_key_under_jit_as_jax():
    def f(api, xnp):
        return api.jit(lambda k: api.random.key_data(xnp.broadcast_to(k, (2, 3))))(
            api.random.key(7))
    np.testing.assert_array_equal(np.asarray(f(yax, jnp)), np.asarray(f(jax, jjnp)))
