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
