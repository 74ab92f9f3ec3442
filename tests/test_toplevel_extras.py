"""Top-level names: process queries under jax's older names, float0, named_call,
print_environment_info."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
import yax.numpy as jnp


def test_process_queries():
    assert yax.process_indices() == jax.process_indices() == [0]
    with pytest.warns(UserWarning, match="process_count"):
        assert yax.host_count() == 1
    with pytest.warns(UserWarning, match="process_index"):
        assert yax.host_id() == 0
    with pytest.warns(UserWarning, match="process_indices"):
        assert yax.host_ids() == [0]


def test_float0_is_the_integer_tangent_dtype():
    assert yax.float0 == jax.float0
    _, vjp = yax.vjp(lambda i, x: x * 2.0, 3, 1.0)
    assert vjp(1.0)[0].dtype == yax.float0


def test_named_call_names_the_staged_equations():
    def inner(x):
        return jnp.sin(x) * 2

    f = yax.named_call(inner, name="my_block")
    assert f.__name__ == "inner"
    np.testing.assert_allclose(f(1.0), 2 * np.sin(1.0), rtol=1e-6)
    text = yax.jit(lambda x: f(x) + 1).lower(1.0).as_text(debug_info=True)
    assert "my_block" in text
    assert "inner" in yax.jit(lambda x: yax.named_call(inner)(x)).lower(1.0).as_text(
        debug_info=True)


def test_print_environment_info(capsys):
    text = yax.print_environment_info(return_string=True)
    assert text.startswith(f"yax:    {yax.__version__}") and "numpy:" in text
    assert "process_count: 1" in text
    assert yax.print_environment_info() is None
    assert "jaxlib:" in capsys.readouterr().out


def test_key_dtype_and_single_device_sharding():
    assert yax.random.key_dtype() == yax.random.key(0).dtype
    assert str(yax.random.key_dtype()) == str(jax.random.key_dtype())
    with pytest.raises(Exception, match="only PRNG implementation"):
        yax.random.key_dtype("rbg")
    s = yax.sharding.make_single_device_sharding(yax.devices()[0])
    x = yax.device_put(jnp.ones(2), s)
    assert x.sharding == s and x.committed


def test_policy_answers_recompute_saveable_offloadable():
    from yax.ad_checkpoint import Offloadable, Recompute, Saveable, saved_residuals

    def f(x):
        return jnp.sin(jnp.sin(x)).sum()

    counts = {}
    for name, answer in [("recompute", Recompute), ("save", Saveable),
                         ("offload", Offloadable("device", "pinned_host"))]:
        g = yax.checkpoint(f, policy=lambda *a, answer=answer, **k: answer)
        counts[name] = len(saved_residuals(g, jnp.ones(3)))
        np.testing.assert_allclose(yax.grad(g)(jnp.ones(3)), np.cos(np.sin(1.0)) * np.cos(1.0),
                                   rtol=1e-6)
    assert counts["recompute"] < counts["save"] == counts["offload"]
    assert yax.ad_checkpoint.checkpoint_policies.nothing_saveable is not None
