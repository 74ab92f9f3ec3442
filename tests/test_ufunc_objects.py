"""jnp.frompyfunc / jnp.ufunc: call, reduce, accumulate, outer and at compared with jax's."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def _pair(f, **kw):
    return jnp.frompyfunc(f, 2, 1, **kw), jjnp.frompyfunc(f, 2, 1, **kw)


@pytest.mark.parametrize("name", ["add", "mul_plus_one"])
def test_methods_match_jax(name):
    f = (lambda a, b: a + b) if name == "add" else (lambda a, b: a * b + 1)
    ours, theirs = _pair(f, identity=0 if name == "add" else None)
    cases = [
        (lambda u: u(X, 2.0)),
        (lambda u: u.reduce(X)), (lambda u: u.reduce(X, axis=1)),
        (lambda u: u.reduce(X, axis=None)), (lambda u: u.reduce(X, keepdims=True)),
        (lambda u: u.reduce(X, initial=3.0)),
        (lambda u: u.accumulate(X, axis=1)), (lambda u: u.outer(X[0], X[1])),
        (lambda u: u.at(X[0], np.array([0, 0, 2], np.int32), 5.0, inplace=False)),
    ]
    for case in cases:
        np.testing.assert_allclose(case(ours), case(theirs), rtol=1e-6)
    g = yax.grad(lambda v: ours.reduce(v))(X[0])
    np.testing.assert_allclose(g, jax.grad(lambda v: theirs.reduce(v))(X[0]), rtol=1e-6)
    np.testing.assert_allclose(yax.jit(ours.accumulate)(X[0]), theirs.accumulate(X[0]),
                               rtol=1e-6)


def test_attributes_and_errors():
    u = jnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    assert (u.nin, u.nout, u.nargs, u.identity) == (2, 1, 2, 0)
    assert repr(u) == repr(jjnp.frompyfunc(lambda a, b: a + b, 2, 1))
    assert isinstance(u, jnp.ufunc)
    np.testing.assert_array_equal(u.reduce(np.zeros((0, 3), np.float32)), np.zeros(3))
    no_identity = jnp.frompyfunc(lambda a, b: a * b, 2, 1)
    with pytest.raises(ValueError, match="no identity"):
        no_identity.reduce(np.zeros((0,), np.float32))
    unary = jnp.frompyfunc(jnp.sin, 1, 1)
    np.testing.assert_allclose(unary(X), np.sin(X), rtol=1e-6)
    with pytest.raises(ValueError, match="binary"):
        unary.reduce(X)
    with pytest.raises(NotImplementedError, match="inplace"):
        u.at(X[0], 0, 1.0)
