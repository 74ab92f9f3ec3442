"""ShapeDtypeStruct.like (the external-callbacks notebook declares callback results with it)."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np

import yax
import yax.numpy as jnp


def test_like_matches_jax():
    for ours, theirs in [(jnp.ones(3), jjnp.ones(3)), (np.zeros((2, 2), np.int32),) * 2,
                         (1.0, 1.0), (3, 3), (np.float64(2.0),) * 2]:
        a, b = yax.ShapeDtypeStruct.like(ours), jax.ShapeDtypeStruct.like(theirs)
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type), ours
        assert a.sharding is None


def test_like_of_a_tracer_declares_a_callback_result():
    def f(x):
        return yax.pure_callback(lambda v: np.sin(v).astype(v.dtype),
                                 yax.ShapeDtypeStruct.like(x), x, vmap_method="sequential")

    x = jnp.arange(4.0)
    np.testing.assert_allclose(yax.jit(f)(x), np.sin(np.arange(4.0)), rtol=1e-6)
    np.testing.assert_allclose(yax.vmap(f)(x), np.sin(np.arange(4.0)), rtol=1e-6)


def test_like_keeps_an_explicit_placement():
    x = yax.device_put(jnp.ones(2), yax.devices()[0])
    assert yax.ShapeDtypeStruct.like(x).sharding == x.sharding
