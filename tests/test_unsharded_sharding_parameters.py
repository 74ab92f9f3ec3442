"""jax's sharding parameters that libraries pass by default: `out_sharding` of lax.dot_general,
lax.conv_general_dilated and the yax.random samplers, and vmap's `spmd_axis_name`. flax.nnx
passes `out_sharding=None` (nnx.Linear) or `jax.typeof(x).sharding` of an unsharded x
(nnx.Dropout's bernoulli). A value that shards nothing gives jax's result; one that shards over
mesh axes is refused (yax does not shard these results), never silently ignored. Also
`lax.scan`'s `xs`, which defaults to None as in jax."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.sharding import PartitionSpec

_X = np.arange(6, dtype=np.float32).reshape(2, 3) / 5
_W = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
_DNUMS = (((1,), (0,)), ((), ()))


def _unsharded(x):
    return [None, yax.typeof(x).sharding, PartitionSpec()]


def test_dot_general_unsharded_out_sharding_as_jax():
    want = np.asarray(jax.lax.dot_general(_X, _W, _DNUMS, out_sharding=None))
    x = jnp.asarray(_X)
    for sharding in _unsharded(x):
        got = yax.lax.dot_general(x, _W, _DNUMS, out_sharding=sharding)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_conv_unsharded_out_sharding_as_jax():
    lhs = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    rhs = np.ones((1, 1, 2, 2), np.float32)
    want = np.asarray(jax.lax.conv_general_dilated(lhs, rhs, (1, 1), "VALID", out_sharding=None))
    got = yax.lax.conv_general_dilated(lhs, rhs, (1, 1), "VALID", out_sharding=None)
    np.testing.assert_allclose(np.asarray(got), want)


def test_samplers_with_an_unsharded_out_sharding_draw_jaxs_bits():
    x = jnp.ones((2, 3))
    key, jkey = yax.random.key(3), jax.random.key(3)
    for sharding in _unsharded(x):
        np.testing.assert_array_equal(
            np.asarray(yax.random.bernoulli(key, 0.5, (2, 3), out_sharding=sharding)),
            np.asarray(jax.random.bernoulli(jkey, 0.5, (2, 3))))
        np.testing.assert_array_equal(
            np.asarray(yax.random.normal(key, (2, 3), out_sharding=sharding)),
            np.asarray(jax.random.normal(jkey, (2, 3))))


def test_bernoulli_with_typeof_sharding_inside_jit_as_jax():
    """nnx.Dropout's call: bernoulli(key, p, shape, out_sharding=typeof(x).sharding) in jit."""
    def keep(api, x):
        return api.random.bernoulli(api.random.key(1), 0.5, x.shape,
                                    out_sharding=api.typeof(x).sharding)
    got = yax.jit(lambda x: keep(yax, x))(jnp.ones(8))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(keep(jax, jax.numpy.ones(8))))


@pytest.mark.parametrize("call", [
    lambda s: yax.lax.dot_general(_X, _W, _DNUMS, out_sharding=s),
    lambda s: yax.lax.conv_general_dilated(np.ones((1, 1, 2, 2), np.float32),
                                           np.ones((1, 1, 1, 1), np.float32), (1, 1), "VALID",
                                           out_sharding=s),
    lambda s: yax.random.uniform(yax.random.key(0), (2,), out_sharding=s),
])
def test_a_bare_spec_over_mesh_axes_without_a_mesh_is_refused(call):
    # as jax (a ValueError); with a mesh set, out_sharding places and types the result
    # (tests/test_explicit.py)
    with pytest.raises(ValueError, match="no mesh is set"):
        call(PartitionSpec("x"))


def test_vmap_spmd_axis_name_none_as_jax_and_a_name_is_refused():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = jax.vmap(lambda r: r.sum(), spmd_axis_name=None)(xs)
    got = yax.vmap(lambda r: r.sum(), spmd_axis_name=None)(xs)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with pytest.raises(NotImplementedError, match="spmd_axis_name"):
        yax.vmap(lambda r: r.sum(), spmd_axis_name="batch")


def test_scan_without_xs_as_jax():
    """optax's tests call scan(f, init, length=n) with no xs argument at all."""
    def run(api):
        return api.lax.scan(lambda c, _: (c * 2 + 1, c), 1, length=4)
    (carry, ys), (jcarry, jys) = run(yax), run(jax)
    assert int(carry) == int(jcarry) == 31
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(jys))
