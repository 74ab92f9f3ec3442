"""custom_batching.custom_vmap / sequential_vmap: the rule runs under vmap (and jit, grad,
scan around it), the function runs as written elsewhere; compared with jax's."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.custom_batching import custom_vmap, sequential_vmap
from yax.test_util import check_grads

CALLS: list = []


@custom_vmap
def scaled_sin(x, y):
    return jnp.sin(x) * y


@scaled_sin.def_vmap
def _rule(axis_size, in_batched, x, y):
    CALLS.append((axis_size, list(in_batched)))
    # a rule that differs from batching the body, so that the tests see which one ran
    out = jnp.sin(x) * y + 100.0
    return out, any(in_batched)


X = np.array([0.1, 0.7, -1.3], np.float32)


def test_outside_vmap_the_function_runs():
    CALLS.clear()
    np.testing.assert_allclose(scaled_sin(0.5, 2.0), 2 * np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(yax.jit(scaled_sin)(0.5, 2.0), 2 * np.sin(0.5), rtol=1e-6)
    assert CALLS == []


@pytest.mark.parametrize("wrap", ["plain", "jit"])
def test_vmap_runs_the_rule(wrap):
    CALLS.clear()
    g = yax.vmap(scaled_sin, (0, None))
    g = yax.jit(g) if wrap == "jit" else g
    np.testing.assert_allclose(g(X, 2.0), 2 * np.sin(X) + 100, rtol=1e-6)
    assert CALLS == [(3, [True, False])]


def test_same_values_as_jax():
    @jax.custom_batching.custom_vmap
    def theirs(x, y):
        return jjnp.sin(x) * y

    @theirs.def_vmap
    def _(axis_size, in_batched, x, y):
        return jjnp.sin(x) * y + 100.0, any(in_batched)

    for args, axes in [((X, 2.0), (0, None)), ((X, X), (0, 0)), ((1.0, X), (None, 0))]:
        np.testing.assert_allclose(yax.vmap(scaled_sin, axes)(*args),
                                   jax.vmap(theirs, axes)(*args), rtol=1e-6)
    # jax 0.10.2 refuses reverse mode through custom_vmap ("Linearization failed"); yax
    # differentiates the body
    np.testing.assert_allclose(yax.grad(scaled_sin)(0.3, 2.0), 2 * np.cos(0.3), rtol=1e-6)
    np.testing.assert_allclose(yax.vmap(yax.grad(scaled_sin), (0, None))(X, 2.0),
                               2 * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(yax.jvp(scaled_sin, (0.3, 2.0), (1.0, 0.0))[1],
                               jax.jvp(theirs, (0.3, 2.0), (1.0, 0.0))[1], rtol=1e-6)


def test_derivatives_and_scan(x64):
    check_grads(scaled_sin, (0.3, 2.0), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: yax.vmap(scaled_sin, (0, None))(x, 2.0), (X.astype(np.float64),),
                order=2, modes=("fwd", "rev"))
    CALLS.clear()
    total, _ = yax.lax.scan(lambda c, x: (c + scaled_sin(x, 2.0), None), 0.0, X)
    np.testing.assert_allclose(total, (2 * np.sin(X)).sum(), rtol=1e-5)
    out = yax.vmap(lambda xs: yax.lax.scan(lambda c, x: (c + scaled_sin(x, 1.0), None),
                                           0.0, xs)[0])(np.stack([X, X]))
    np.testing.assert_allclose(out, [(np.sin(X) + 100).sum()] * 2, rtol=1e-5)
    assert CALLS and CALLS[0][0] == 2  # the rule ran for the batched scan body


def test_rule_errors():
    @custom_vmap
    def no_rule(x):
        return x

    with pytest.raises(AttributeError, match="No batching rule"):
        no_rule(1.0)

    @custom_vmap
    def wrong(x):
        return x

    wrong.def_vmap(lambda n, b, x: ((x, x), True))
    with pytest.raises(ValueError, match="structure"):
        yax.vmap(wrong)(X)

    y = jnp.ones(3)

    def closes_over_batched(v):
        @custom_vmap
        def h(x):
            return x * v

        h.def_vmap(lambda n, b, x: (x * v, True))
        return h(1.0)

    with pytest.raises(ValueError, match="closes over"):
        yax.vmap(closes_over_batched)(y)


def test_sequential_vmap_runs_each_element():
    seen = []

    def host_norm(v):
        seen.append(v.shape)
        return jnp.sqrt((v * v).sum())

    f = sequential_vmap(host_norm)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(yax.vmap(f)(xs), np.linalg.norm(xs, axis=1), rtol=1e-6)
    assert (3,) in seen and (4, 3) not in seen  # traced on one element, never on the batch
    j = jax.custom_batching.sequential_vmap(lambda v: jjnp.sqrt((v * v).sum()))
    np.testing.assert_allclose(yax.vmap(f)(xs), jax.vmap(j)(xs), rtol=1e-6)
    g = sequential_vmap(lambda a, b: a @ b)
    a = np.ones((4, 2, 3), np.float32)
    np.testing.assert_allclose(yax.vmap(g, (0, None))(a, np.ones(3, np.float32)),
                               np.full((4, 2), 3.0))
