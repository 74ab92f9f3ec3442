"""jit's argument errors name what the user wrote: the pytree path of a non-array leaf (as JAX
does), and an out-of-range static_argnums/donate_argnums index with the number of positional
arguments (JAX raises ValueError for static_argnums too)."""

from __future__ import annotations

import jax
import pytest

import yax
import yax.numpy as jnp


def test_non_array_leaf_is_named_by_its_path():
    f = lambda d: d["x"] + 1
    with pytest.raises(TypeError, match=r"d\['name'\]"):
        yax.jit(f)({"x": 1.0, "name": "abc"})
    with pytest.raises(TypeError, match=r"d\['name'\]"):  # the oracle says the same path
        jax.jit(f)({"x": 1.0, "name": "abc"})
    assert float(yax.jit(f)({"x": 1.0})) == 2.0  # and yax keeps working


@pytest.mark.parametrize("option", ["static_argnums", "donate_argnums"])
def test_argnums_out_of_range(option):
    with pytest.raises(ValueError, match=r"index 3 is out of range.*2 positional"):
        yax.jit(lambda x, y: x + y, **{option: (3,)})
    with pytest.raises(ValueError, match=r"index -3"):
        yax.jit(lambda x, y: x + y, **{option: (-3,)})
    with pytest.raises(ValueError):
        jax.jit(lambda x, y: x + y, static_argnums=(3,))


def test_varargs_accept_any_index():
    f = yax.jit(lambda *a: a[0] * a[3], static_argnums=(3,))
    assert float(f(jnp.float32(2.0), 0, 0, 5)) == 10.0
