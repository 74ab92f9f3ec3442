"""Floor division, remainder and heaviside at their edges (zero and infinite divisors, nan,
signed zeros) give what jax gives, eagerly and under jit, in float32, float64 and integers."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp

_FLOAT_X = [2.25, -2.25, 0.0, np.inf, -np.inf, np.nan, 5.0, -5.0, 0.0, 3.0, -0.0, 7.5]
_FLOAT_Y = [0.0, 0.0, 0.0, 2.0, 2.0, 1.0, np.inf, np.inf, -0.0, -np.inf, -3.0, -0.0]
_INT_X = [7, -7, 0, 7, -7, 6, -6, 5]
_INT_Y = [0, 0, 0, -2, 2, -3, 3, 1]

_OPS = ["floor_divide", "remainder", "fmod", "divmod"]


def _same(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype
        # bit patterns, so that the sign of a zero and of an infinity count
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("op", _OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32])
def test_division_edges_match_jax(op, dtype, x64):
    if dtype == np.float64 and not x64:
        pytest.skip("float64 needs x64")
    if np.issubdtype(dtype, np.unsignedinteger):
        x = np.array([7, 0, 5, 9], dtype)
        y = np.array([0, 0, 2, 4], dtype)
    elif np.issubdtype(dtype, np.integer):
        x, y = np.array(_INT_X, dtype), np.array(_INT_Y, dtype)
    else:
        x, y = np.array(_FLOAT_X, dtype), np.array(_FLOAT_Y, dtype)
    want = getattr(jjnp, op)(x, y)
    _same(getattr(jnp, op)(x, y), want)
    _same(yax.jit(getattr(jnp, op))(x, y), want)


def test_python_floor_division_operator_matches_jax():
    x = np.array(_FLOAT_X, np.float32)
    _same(jnp.asarray(x) // 0.0, jjnp.asarray(x) // 0.0)
    _same(jnp.asarray(x) % -0.0, jjnp.asarray(x) % -0.0)


def test_heaviside_of_nan_is_nan_as_in_jax():
    x = np.array([np.nan, -1.0, 0.0, 2.0, -0.0, np.nan], np.float32)
    h = np.array([1.0, 1.0, 0.5, 1.0, 7.0, np.nan], np.float32)
    got = jnp.heaviside(x, h)
    _same(got, jjnp.heaviside(x, h))
    _same(yax.jit(jnp.heaviside)(x, h), jjnp.heaviside(x, h))
    assert np.isnan(np.asarray(got)[0])


def test_remainder_derivatives_unchanged_at_a_zero_divisor_guard():
    # The guard on a zero divisor only touches the quotient: d(x mod y)/dx stays 1 and
    # d/dy stays -floor(x / y) away from the discontinuities, as in jax.
    x, y = np.float32(7.5), np.float32(-2.0)
    for argnum in (0, 1):
        got = yax.grad(jnp.remainder, argnum)(x, y)
        want = jax.grad(jjnp.remainder, argnum)(x, y)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
