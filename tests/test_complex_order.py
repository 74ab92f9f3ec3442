"""Complex values ordered as jax orders them (real part, then imaginary part) wherever jax
accepts them: lax.max/min, reductions, sorts, jnp's comparisons and searchsorted; and the
operations jax refuses on complex (lax.lt, argmax, clip) refused here too."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import only_against_jax_0_10

# ties in the real part and ties in both parts
X = np.array([1 + 2j, 1 - 1j, 0 + 5j, 1 + 2j, 2 + 0j, -3 + 1j], np.complex64)
Y = np.array([1 + 1j, 1 - 1j, 0 + 6j, 3 + 0j, 2 - 1j, -3 + 1j], np.complex64)
M = np.array([[1 + 2j, 1 + 3j, -1j], [2 - 1j, 2 - 2j, 0j]], np.complex64)

_BINARY = {
    "lax.max": lambda api: api.lax.max, "lax.min": lambda api: api.lax.min,
    "maximum": lambda api: api.numpy.maximum, "minimum": lambda api: api.numpy.minimum,
    "less": lambda api: api.numpy.less, "less_equal": lambda api: api.numpy.less_equal,
    "greater": lambda api: api.numpy.greater,
    "greater_equal": lambda api: api.numpy.greater_equal,
    "operator<": lambda api: lambda x, y: api.numpy.asarray(x) < y,
}

_UNARY = {
    "max": lambda api, a: api.numpy.max(a), "min": lambda api, a: api.numpy.min(a),
    "max0": lambda api, a: api.numpy.max(a, axis=0),
    "min1": lambda api, a: api.numpy.min(a, axis=1),
    "reduce_max": lambda api, a: api.lax.reduce_max(a, (1,)),
    "sort": lambda api, a: api.numpy.sort(a, axis=-1),
    "sort0": lambda api, a: api.numpy.sort(a, axis=0),
    "argsort": lambda api, a: api.numpy.argsort(a, axis=-1),
    "lax.sort": lambda api, a: api.lax.sort(a),
    "sort_key_val": lambda api, a: api.lax.sort(
        (a, api.numpy.broadcast_to(api.numpy.arange(a.shape[-1]), a.shape)), num_keys=1)[1],
}


@pytest.mark.parametrize("name", sorted(_BINARY))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_binary_orders_complex_as_jax(name, mode):
    want = _BINARY[name](jax)(X, Y)
    fn = _BINARY[name](yax)
    got = fn(X, Y) if mode == "eager" else yax.jit(fn)(X, Y)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_reductions_and_sorts_order_complex_as_jax(name):
    for a in (M, np.stack([X, Y])):
        want = _UNARY[name](jax, a)
        got = yax.jit(lambda v: _UNARY[name](yax, v))(a)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        np.testing.assert_array_equal(np.asarray(_UNARY[name](yax, a)), np.asarray(want))


def test_searchsorted_complex_as_jax():
    a = np.sort(X)
    for side in ("left", "right"):
        want = jjnp.searchsorted(a, Y, side=side)
        np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, Y, side=side)),
                                      np.asarray(want))


@only_against_jax_0_10("jax 0.11 refuses to order complex values here")
def test_complex_max_under_vmap_and_grad_as_jax():
    def loss(api):
        return lambda a: api.numpy.max(a * a).real + api.lax.max(a, a[::-1]).imag.sum()
    got = yax.grad(loss(yax))(X)
    want = jax.grad(loss(jax))(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    got = yax.vmap(lambda a: jnp.max(a))(M)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.vmap(jjnp.max)(M)))


@pytest.mark.parametrize("call", [
    lambda api: api.lax.lt(X, Y),
    lambda api: api.numpy.argmax(X),
    lambda api: api.numpy.clip(X, 0, 1),
], ids=["lax.lt", "argmax", "clip"])
def test_complex_refused_where_jax_refuses(call):
    with pytest.raises((TypeError, ValueError)):
        call(jax)
    with pytest.raises((TypeError, ValueError)):
        call(yax)
