"""`custom_jvp.defjvp(rule, symbolic_zeros=True)` as jax's: the tangent of each input that is
not differentiated arrives as a SymbolicZero (float0 for integers), a rule may return one for
a zero output tangent, and the derivatives equal jax's under grad, jvp, jit and vmap."""

from __future__ import annotations

import jax
import jax.custom_derivatives
import numpy as np
import pytest

import yax
from yax.transforms.custom_derivatives import SymbolicZero


def _make(api, zero_cls, seen):
    """f(x, y, n) = sin(x) * y with a rule that records which tangents are symbolic zeros
    and skips their terms (an arithmetic on a SymbolicZero would fail)."""
    @api.custom_jvp
    def f(x, y, n):
        return api.numpy.sin(x) * y

    def rule(primals, tangents):
        x, y, n = primals
        tx, ty, tn = tangents
        seen.append(tuple(
            (isinstance(t, zero_cls), str(np.dtype(t.dtype)) if isinstance(t, zero_cls) else None)
            for t in tangents))
        out = f(x, y, n)
        dx = 0.0 if isinstance(tx, zero_cls) else api.numpy.cos(x) * tx * y
        dy = 0.0 if isinstance(ty, zero_cls) else api.numpy.sin(x) * ty
        return out, dx + dy
    f.defjvp(rule, symbolic_zeros=True)
    return f


_PROGRAMS = {
    "grad x": lambda api, f: api.grad(f)(0.5, 2.0, 3),
    "grad y": lambda api, f: api.grad(f, argnums=1)(0.5, 2.0, 3),
    "grad x, y": lambda api, f: api.grad(f, argnums=(0, 1))(0.5, 2.0, 3),
    "jvp in x": lambda api, f: api.jvp(lambda x: f(x, 2.0, 3), (0.5,), (1.0,)),
    "jit grad": lambda api, f: api.jit(api.grad(f))(0.5, 2.0, 3),
    "grad jit": lambda api, f: api.grad(api.jit(f))(0.5, 2.0, 3),
    "vmap grad": lambda api, f: api.vmap(api.grad(f))(np.linspace(0, 1, 3, dtype=np.float32),
                                                      np.ones(3, np.float32),
                                                      np.arange(3, dtype=np.int32)),
    "grad vmap": lambda api, f: api.grad(lambda x: api.vmap(f, (0, None, None))(
        x, np.float32(2.0), 3).sum())(np.linspace(0, 1, 3, dtype=np.float32)),
}


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_symbolic_zeros_as_jax(name):
    seen_yax, seen_jax = [], []
    got = _PROGRAMS[name](yax, _make(yax, SymbolicZero, seen_yax))
    want = _PROGRAMS[name](jax, _make(jax, jax.custom_derivatives.SymbolicZero, seen_jax))
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert seen_yax[-1] == seen_jax[-1]  # which tangents were symbolic zeros, and their dtypes


@pytest.mark.parametrize("transform", ["grad", "jvp", "jit grad", "vmap grad"])
def test_rule_may_return_a_symbolic_zero(transform):
    def run(api, zero_cls):
        @api.custom_jvp
        def stopped(x):
            return x * 2.0
        stopped.defjvp(lambda p, t: (stopped(p[0]), zero_cls.from_primal_value(p[0])),
                       symbolic_zeros=True)

        def loss(x):
            return (stopped(x) + x * x).sum()
        x = np.array([1.0, 2.0], np.float32)
        if transform == "jvp":
            return api.jvp(loss, (x,), (np.ones(2, np.float32),))
        if transform == "vmap grad":
            return api.vmap(api.grad(loss))(np.stack([x, x]))
        return (api.jit(api.grad(loss)) if transform == "jit grad" else api.grad(loss))(x)
    got, want = run(yax, SymbolicZero), run(jax, jax.custom_derivatives.SymbolicZero)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_symbolic_zero_object_as_jax():
    z = SymbolicZero.from_primal_value(np.ones((2,), np.float32))
    jz = jax.custom_derivatives.SymbolicZero.from_primal_value(np.ones((2,), np.float32))
    assert (z.shape, np.dtype(z.dtype), repr(z)) == (jz.shape, np.dtype(jz.dtype), repr(jz))
    assert np.dtype(SymbolicZero.from_primal_value(np.int32(1)).dtype) == np.dtype(
        jax.custom_derivatives.SymbolicZero.from_primal_value(np.int32(1)).dtype)
    with pytest.raises(TypeError):
        z + 1


def test_without_symbolic_zeros_the_rule_gets_zeros():
    seen = []

    @yax.custom_jvp
    def f(x, y):
        return x * y

    @f.defjvp
    def _(primals, tangents):
        seen.append([type(t).__name__ for t in tangents])
        return f(*primals), tangents[0] * primals[1] + tangents[1] * primals[0]
    assert float(yax.grad(f)(2.0, 3.0)) == 3.0
    assert "SymbolicZero" not in seen[-1]
    assert f.symbolic_zeros is False
