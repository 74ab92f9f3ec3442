"""yax.mixed_precision: policies, pytree casts, and dynamic loss scaling under jit."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import mixed_precision as mp


def test_policy_parsing_and_casts():
    policy = mp.Policy.from_string("params=float32,compute=bfloat16,output=float32")
    assert policy == mp.Policy("float32", jnp.bfloat16, np.float32)
    assert str(policy) == "params=float32,compute=bfloat16,output=float32"
    assert mp.Policy.from_string("p=f32,c=f16").compute_dtype == np.float16
    assert mp.Policy.from_string("bf16").output_dtype == jnp.bfloat16
    assert mp.get_policy(policy) is policy
    tree = {"w": jnp.ones(3), "n": jnp.arange(3), "b": [np.zeros(2, np.float32)]}
    cast = policy.cast_to_compute(tree)
    assert cast["w"].dtype == jnp.bfloat16 and cast["b"][0].dtype == jnp.bfloat16
    assert cast["n"].dtype == np.int32  # integer leaves are left alone
    assert policy.cast_to_output(cast)["w"].dtype == np.float32
    with pytest.raises(ValueError, match="role"):
        mp.Policy.from_string("weights=float32")
    with pytest.raises(ValueError, match="floating"):
        mp.Policy("int32", "float32", "float32")


def test_dynamic_loss_scale_under_jit():
    scale = mp.DynamicLossScale(16.0, period=2)

    @yax.jit
    def step(scale, grads):
        finite = mp.all_finite(grads)
        return scale.adjust(finite), finite

    history = []
    for g in [1.0, 1.0, 1.0, np.inf, 1.0, np.nan]:
        scale, finite = step(scale, {"a": jnp.asarray([g, 1.0]), "n": jnp.arange(2)})
        history.append((bool(finite), float(scale.loss_scale), int(scale.counter)))
    assert history == [(True, 16.0, 1), (True, 32.0, 0), (True, 32.0, 1), (False, 16.0, 0),
                       (True, 16.0, 1), (False, 8.0, 0)]
    small = mp.DynamicLossScale(1.0, min_loss_scale=1.0)
    assert float(small.adjust(jnp.asarray(False)).loss_scale) == 1.0
    leaves = yax.tree_util.tree_leaves(scale)
    assert len(leaves) == 2  # the scale and the counter; the settings are static


def test_scale_unscale_and_skip():
    scale = mp.DynamicLossScale(2.0 ** 10)
    grads = yax.grad(lambda w: scale.scale(jnp.sum(w ** 2)))(jnp.ones(3))
    np.testing.assert_allclose(scale.unscale(grads), 2 * np.ones(3))
    assert scale.scale(jnp.asarray(2.0, jnp.bfloat16)).dtype == jnp.bfloat16
    kept = mp.select_tree(jnp.asarray(False), {"p": jnp.ones(2)}, {"p": jnp.zeros(2)})
    np.testing.assert_array_equal(kept["p"], 0.0)
    assert float(mp.StaticLossScale(4.0).unscale(jnp.asarray(8.0))) == 2.0
    assert mp.NoOpLossScale().scale(3.0) == 3.0
    # float16 overflow is detected: a scaled loss of 1e5 squared is inf in float16.
    g16 = yax.grad(lambda w: jnp.sum((w.astype(jnp.float16) * 1e3) ** 2).astype(np.float32))(
        jnp.ones(2) * 100)
    assert not bool(mp.all_finite(g16))
