"""A corpus of composite functions: grad, jacfwd, jacrev, hessian and HVPs agree with real jax
in float64 (relative 1e-6). Each function is written once against a NumPy-like module `m`."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import yax
import yax.numpy as ynp


def _softmax_xent(m, x):
    logits = x.reshape(2, 3)
    labels = m.asarray([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    shifted = logits - m.max(logits, axis=1, keepdims=True)
    logp = shifted - m.log(m.sum(m.exp(shifted), axis=1, keepdims=True))
    return -m.sum(labels * logp)


def _mlp(m, x):
    w1 = m.asarray(np.linspace(-1, 1, 12).reshape(6, 2))
    w2 = m.asarray(np.linspace(0.5, -0.5, 2))
    h = m.tanh(x @ w1)
    return m.sum((h @ w2 - 0.3) ** 2)


CORPUS = {
    "poly": lambda m, x: m.sum(x ** 3 - 2 * x ** 2 + x),
    "trig_mix": lambda m, x: m.sum(m.sin(x) * m.cos(2 * x) + m.tan(x / 4)),
    "exp_log": lambda m, x: m.sum(m.log(1 + m.exp(x))),
    "logsumexp": lambda m, x: m.log(m.sum(m.exp(x - m.max(x)))) + m.max(x),
    "softmax_xent": _softmax_xent,
    "mlp": _mlp,
    "l2_norm": lambda m, x: m.sqrt(m.sum(x * x)),
    "l1_smooth": lambda m, x: m.sum(m.sqrt(x * x + 1e-3)),
    "mean_var": lambda m, x: m.var(x) + m.mean(x) ** 2,
    "std": lambda m, x: m.std(x),
    "prod": lambda m, x: m.prod(x),
    "max": lambda m, x: m.max(x * m.asarray(np.arange(1.0, 7.0))),
    "min_abs": lambda m, x: m.min(m.abs(x - 0.05)),
    "broadcast_outer": lambda m, x: m.sum(m.outer(x, x) * m.asarray(np.eye(6) + 1)),
    "matmul_quad": lambda m, x: x @ m.asarray(np.diag(np.arange(1.0, 7.0))) @ x,
    "reshape_sum": lambda m, x: m.sum(m.sin(x.reshape(3, 2)).T @ m.ones(3)),
    "index_basic": lambda m, x: x[0] * x[3] + m.sum(x[1:4] ** 2),
    "index_fancy": lambda m, x: m.sum(x[m.asarray([0, 2, 2, 5])] ** 2),
    "at_set": lambda m, x: m.sum(x.at[2].set(x[1] * 3) ** 2),
    "at_add": lambda m, x: m.sum(m.sin(x.at[m.asarray([0, 0, 4])].add(x[:3])) ),
    "where": lambda m, x: m.sum(m.where(x > 0.2, x ** 2, m.sin(x))),
    "clip": lambda m, x: m.sum(m.clip(x, -0.5, 0.5) * x),
    "maximum": lambda m, x: m.sum(m.maximum(x, 0.1) * m.minimum(x, 0.3)),
    "concat_stack": lambda m, x: m.sum(m.concatenate([x, x[::-1] * 2]) ** 2) + m.sum(
        m.stack([x, m.cos(x)])),
    "cumsum": lambda m, x: m.sum(m.cumsum(x) ** 2),
    "sort": lambda m, x: m.sum(m.sort(x) * m.arange(6.0)),
    "einsum": lambda m, x: m.einsum("i,ij,j->", x, m.asarray(np.ones((6, 6)) + np.eye(6)), x),
    "division": lambda m, x: m.sum(x / (1 + x ** 2)),
    "power": lambda m, x: m.sum(m.power(m.abs(x) + 1, 1.5)),
    "arctan_mix": lambda m, x: m.sum(m.arctan2(x, 1 + x ** 2) + m.tanh(x) * m.expm1(x / 3)),
    "transpose_dot": lambda m, x: m.sum((x.reshape(2, 3).T @ x.reshape(2, 3)) ** 2),
    "mean_axis": lambda m, x: m.sum(m.mean(x.reshape(2, 3), axis=0) ** 3),
}

X = np.array([0.31, -0.42, 0.53, 0.12, -0.27, 0.74])
V = np.array([0.5, -1.0, 0.25, 2.0, -0.75, 1.5])


def _jax_oracle(jax, jnp, names):
    """jax's Hessian, gradient and HVP of every named case, as one jitted program (eager jax
    compiles a program per primitive, and a jit per case one per case)."""
    def all_cases(x, v):
        out = {}
        for name in names:
            fj = lambda x, f=CORPUS[name]: f(jnp, x)  # noqa: E731
            out[name] = {"hess": jax.hessian(fj)(x), "grad": jax.grad(fj)(x),
                         "hvp": jax.jvp(jax.grad(fj), (x,), (v,))[1]}
        return out
    return jax.tree_util.tree_map(np.asarray, jax.jit(all_cases)(X, V))


@functools.lru_cache(maxsize=1)
def _oracle():
    """Computed by the first test that needs it (inside its x64 fixture), so its compile
    counts in the suite's per-file summary."""
    import jax
    import jax.numpy as jnp
    return _jax_oracle(jax, jnp, sorted(CORPUS))


def _yax_higher_order(fy):
    """jacfwd(grad), jacrev(grad), hessian and the HVP of `fy`, as one jitted program (one
    compile per case, not one per quantity)."""
    return yax.jit(lambda x, v: (yax.jacfwd(yax.grad(fy))(x), yax.jacrev(yax.grad(fy))(x),
                                 yax.hessian(fy)(x), yax.jvp(yax.grad(fy), (x,), (v,))[1]))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_against_jax(name, x64):
    f = CORPUS[name]
    fy = lambda x: f(ynp, x)  # noqa: E731
    rtol = 1e-6
    want = _oracle()[name]
    hess = want["hess"]
    # eagerly once; the higher-order checks run jitted (one compile per program, not per op)
    np.testing.assert_allclose(yax.grad(fy)(X), want["grad"], rtol=rtol, atol=1e-10)
    jacfwd_grad, jacrev_grad, hessian, hvp = _yax_higher_order(fy)(X, V)
    np.testing.assert_allclose(jacfwd_grad, hess, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(jacrev_grad, hess, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(hessian, hess, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(hvp, want["hvp"], rtol=rtol, atol=1e-9)
