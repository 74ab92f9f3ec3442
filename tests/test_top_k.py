"""lax.top_k against jax.lax.top_k: values and indices (ties, NaN, signed zeros, every axis),
eager and jit, derivatives (finite differences and jax's VJP), vmap against a loop, errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
from tests.harness import assert_close, check_eager_and_jit
from yax import lax
from yax.test_util import check_grads


def _values(seed, shape, dtype):
    """Few distinct values (many ties); floats include NaN, +-inf and +-0.0."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        pool = np.array([np.nan, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, 3.0], dtype)
        return rng.choice(pool, shape)
    return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_matches_jax(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), "shape"))
    dtype = data.draw(st.sampled_from([np.float32, np.int32, np.uint8, np.bool_, np.float16]))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    k = data.draw(st.integers(0, shape[axis]), "k")
    x = _values(data.draw(st.integers(0, 99), "seed"), shape, dtype)
    want = jax.lax.top_k(x, k, axis=axis)
    check_eager_and_jit(lambda v: lax.top_k(v, k, axis=axis), [x], [np.asarray(w) for w in want])


def test_ties_take_the_lower_index_and_nan_is_largest():
    x = np.array([1.0, np.nan, 3.0, 3.0, -np.inf, -0.0, 0.0], np.float32)
    values, indices = lax.top_k(x, 7)
    np.testing.assert_array_equal(np.asarray(indices), [1, 2, 3, 0, 6, 5, 4])
    assert indices.dtype == np.int32
    assert np.isnan(np.asarray(values)[0])


def test_float64(x64):
    x = _values(3, (4, 6), np.float64)
    want = jax.lax.top_k(x, 3)
    check_eager_and_jit(lambda v: lax.top_k(v, 3), [x], [np.asarray(w) for w in want])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_grads_finite_differences(x64, axis):
    x = np.random.default_rng(4).permutation(24).astype(np.float64).reshape(2, 3, 4) / 7.0
    check_grads(lambda v: lax.top_k(v, 2, axis=axis)[0], (x,), order=2, modes=("fwd", "rev"))


def test_vjp_and_jvp_with_ties_match_jax():
    x = _values(5, (3, 6), np.float32)
    x = np.where(np.isfinite(x), x, 0.0).astype(np.float32)  # ties remain, no inf/nan
    t = np.random.default_rng(6).normal(size=x.shape).astype(np.float32)
    ct = np.random.default_rng(7).normal(size=(3, 4)).astype(np.float32)
    f = lambda v: lax.top_k(v, 4)[0]  # noqa: E731
    g = lambda v: jax.lax.top_k(v, 4)[0]  # noqa: E731
    assert_close(yax.jvp(f, (x,), (t,))[1], np.asarray(jax.jvp(g, (x,), (t,))[1]))
    want = np.asarray(jax.vjp(g, x)[1](ct)[0])
    assert_close(yax.vjp(f, x)[1](yax.device_put(ct))[0], want)
    assert_close(yax.jit(lambda v, c: yax.vjp(f, v)[1](c)[0])(x, ct), want)


def test_integer_operand_has_no_tangent():
    x = np.array([3, 1, 2], np.int32)
    out, t_out = yax.jvp(lambda v: lax.top_k(v, 2)[0], (x,), (np.zeros(3, np.int32),))
    np.testing.assert_array_equal(np.asarray(out), [3, 2])
    assert not np.any(np.asarray(t_out))


@pytest.mark.parametrize("in_axis,axis", [(0, -1), (1, -1), (2, 0), (0, 1)])
def test_vmap_matches_loop(in_axis, axis):
    xs = _values(8, (3, 4, 5), np.float32)
    f = lambda v: lax.top_k(v, 2, axis=axis)  # noqa: E731
    got_v, got_i = yax.vmap(f, in_axes=in_axis)(np.moveaxis(xs, 0, in_axis))
    loop = [f(v) for v in xs]
    assert_close(got_v, np.stack([np.asarray(v) for v, _ in loop]))
    assert_close(got_i, np.stack([np.asarray(i) for _, i in loop]))


def test_vmap_of_grad_matches_loop():
    xs = np.random.default_rng(9).normal(size=(3, 2, 5)).astype(np.float32)
    g = yax.grad(lambda v: (lax.top_k(v, 3)[0] ** 2).sum())
    got = yax.vmap(g)(xs)
    assert_close(got, np.stack([np.asarray(g(v)) for v in xs]))


def test_k_zero_and_jaxpr():
    x = np.ones((3, 5), np.float32)
    values, indices = yax.jit(lambda v: lax.top_k(v, 0))(x)
    assert values.shape == indices.shape == (3, 0)
    assert "top_k" in str(yax.make_jaxpr(lambda v: lax.top_k(v, 2))(x))


def test_errors():
    x = np.ones((3, 5), np.float32)
    with pytest.raises(yax.errors.ShapeError, match=r"k=6 .*f32\[3,5\]|f32\[3,5\].*k=6"):
        lax.top_k(x, 6)
    with pytest.raises(yax.errors.ShapeError, match="rank >= 1"):
        lax.top_k(np.float32(1.0), 1)
    with pytest.raises(yax.errors.ShapeError, match="static"):
        lax.top_k(x, 1.5)
    with pytest.raises(yax.errors.ShapeError, match="axis 2"):
        lax.top_k(x, 1, axis=2)
    with pytest.raises(yax.errors.DTypeError, match="c64"):
        lax.top_k(np.ones(3, np.complex64), 1)
