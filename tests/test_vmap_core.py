"""vmap as a transformation: axes specs, nesting, composition with grad and jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
import yax.numpy as jnp

RNG = np.random.default_rng(0)


def _stack(results, axis):
    return np.stack([np.asarray(r) for r in results], axis=axis)


@settings(max_examples=20, deadline=None)
@given(in_axis=st.integers(-3, 2), out_axis=st.integers(-3, 2))
def test_in_and_out_axes_including_negative(in_axis, out_axis):
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    f = lambda a: jnp.sin(a) * 2.0 + 1.0
    got = yax.vmap(f, in_axes=in_axis, out_axes=out_axis)(x)
    examples = np.moveaxis(x, in_axis, 0)
    want = _stack([np.sin(e) * 2 + 1 for e in examples], out_axis)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_pytree_in_axes_prefix_and_none():
    params = {"w": jnp.asarray(RNG.normal(size=(3,)).astype(np.float32)), "b": jnp.asarray(1.0)}
    xs = jnp.asarray(RNG.normal(size=(5, 3)).astype(np.float32))
    f = lambda p, x: jnp.sum(p["w"] * x) + p["b"]
    got = yax.vmap(f, in_axes=({"w": None, "b": None}, 0))(params, xs)
    want = np.asarray(xs) @ np.asarray(params["w"]) + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got2 = yax.vmap(f, in_axes=(None, 0))(params, xs)
    np.testing.assert_allclose(got2, want, rtol=1e-5)


def test_out_axes_none_for_unbatched_output():
    out, shared = yax.vmap(lambda x: (x * 2.0, jnp.ones(2)), out_axes=(0, None))(jnp.arange(3.0))
    assert out.shape == (3,) and shared.shape == (2,)


def test_nested_vmap_with_different_axes():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    f = lambda v: jnp.sum(jnp.sin(v))
    got = yax.vmap(yax.vmap(f, in_axes=0), in_axes=1)(x)  # outer over axis 1, inner over axis 0
    want = np.sum(np.sin(x), axis=2).T
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_vmap_of_jit_and_jit_of_vmap():
    f = yax.jit(lambda a, b: jnp.sin(a) * b)
    xs = jnp.asarray(RNG.normal(size=(4, 3)).astype(np.float32))
    want = np.sin(np.asarray(xs)) * 2.0
    np.testing.assert_allclose(yax.vmap(f, in_axes=(0, None))(xs, 2.0), want, rtol=1e-6)
    g = yax.jit(yax.vmap(lambda a: jnp.sin(a) * 2.0))
    np.testing.assert_allclose(g(xs), want, rtol=1e-6)
    assert "= jit[" in str(yax.make_jaxpr(yax.vmap(f, in_axes=(0, None)))(xs, 2.0))


def test_per_example_grads_and_grad_of_vmap(x64):
    xs = RNG.normal(size=(5, 3))
    w = RNG.normal(size=(3,))
    loss = lambda w, x: jnp.sum(jnp.tanh(x * w) ** 2)
    per_ex = yax.vmap(yax.grad(loss), in_axes=(None, 0))(w, xs)
    loop = np.stack([np.asarray(yax.grad(loss)(w, x)) for x in xs])
    np.testing.assert_allclose(per_ex, loop, rtol=1e-12)
    total = yax.grad(lambda w: jnp.sum(yax.vmap(loss, in_axes=(None, 0))(w, xs)))(w)
    np.testing.assert_allclose(total, loop.sum(0), rtol=1e-12)


def test_vmap_without_batched_argument_needs_axis_size():
    with pytest.raises(yax.errors.YaxError, match="axis_size"):
        yax.vmap(lambda x: x, in_axes=None)(jnp.ones(3))
