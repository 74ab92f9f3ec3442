"""ppermute, pshuffle, psum_scatter, all_to_all and axis_size under vmap(axis_name=...): values
against a per-example NumPy loop and jax, derivatives by finite differences (check_grads) and
against jax, and the transposition identity of these linear maps."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax
from yax.test_util import check_grads

N = 4
CYCLE = [(j, (j + 1) % N) for j in range(N)]


def _vm(f):
    return yax.vmap(f, axis_name="i")


def _jvm(f):
    return jax.vmap(f, axis_name="i")


def test_ppermute_partial_perm_gives_zeros_where_nothing_arrives():
    x = np.arange(N * 3, dtype=np.float32).reshape(N, 3)
    perm = [(0, 2), (1, 0)]
    ref = np.zeros_like(x)
    for s, d in perm:
        ref[d] = x[s]
    np.testing.assert_array_equal(_vm(lambda v: lax.ppermute(v, "i", perm))(x), ref)
    np.testing.assert_array_equal(_vm(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0]))(x), x[::-1])


CASES = {
    "ppermute": (lambda l: lambda v: l.ppermute(v, "i", CYCLE), (N, 3, 2)),
    "psum_scatter": (lambda l: lambda v: l.psum_scatter(v, "i"), (N, N, 3)),
    "psum_scatter_tiled": (lambda l: lambda v: l.psum_scatter(v, "i", scatter_dimension=1,
                                                              tiled=True), (N, 3, 2 * N)),
    "all_to_all": (lambda l: lambda v: l.all_to_all(v, "i", 0, 1), (N, N, 3)),
    "all_to_all_10": (lambda l: lambda v: l.all_to_all(v, "i", 1, 0), (N, 3, N)),
    "all_to_all_tiled": (lambda l: lambda v: l.all_to_all(v, "i", 0, 1, tiled=True),
                         (N, 2 * N, 3)),
    "all_to_all_tiled_same": (lambda l: lambda v: l.all_to_all(v, "i", 0, 0, tiled=True),
                              (N, 2 * N, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_jax_values_and_gradients(name):
    make, shape = CASES[name]
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    got = _vm(make(lax))(x)
    want = _jvm(make(jax.lax))(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    w = np.random.default_rng(1).normal(size=np.shape(want)).astype(np.float32)
    g = yax.grad(lambda v: jnp.sum(_vm(make(lax))(v) * w))(x)
    gj = jax.grad(lambda v: jax.numpy.sum(_jvm(make(jax.lax))(v) * w))(x)
    np.testing.assert_allclose(g, gj, rtol=1e-5, atol=1e-6)
    # <u, J v> == <J^T u, v> for the linear map
    v = np.random.default_rng(2).normal(size=shape).astype(np.float32)
    _, f_vjp = yax.vjp(_vm(make(lax)), x)
    lhs = np.sum(w * np.asarray(_vm(make(lax))(v)))
    rhs = np.sum(np.asarray(f_vjp(w)[0]) * v)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4)


def test_finite_differences_and_jit(x64):
    x = np.random.default_rng(3).normal(size=(N, N, 2))
    for name in ("ppermute", "psum_scatter", "all_to_all"):
        f = _vm(CASES[name][0](lax))
        check_grads(lambda v: jnp.sin(f(v)), (x,), order=2)
        np.testing.assert_allclose(yax.jit(f)(x), f(x))


def test_axis_size_and_errors():
    out = _vm(lambda v: v * lax.axis_size("i"))(np.ones(3, np.float32))
    np.testing.assert_array_equal(out, [3.0, 3.0, 3.0])
    with pytest.raises(yax.errors.YaxError, match="twice"):
        _vm(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]))(np.ones(4))
    with pytest.raises(yax.errors.ShapeError, match="axis size"):
        _vm(lambda v: lax.psum_scatter(v, "i"))(np.ones((4, 3)))
    with pytest.raises(yax.errors.YaxError, match="unbound axis name"):
        lax.ppermute(jnp.ones(2), "nope", [(0, 0)])
