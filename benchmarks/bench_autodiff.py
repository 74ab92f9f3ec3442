"""Differentiation and batching overheads, yax vs jax: eager grad, make_jaxpr(grad), first-call
jit(grad), a jitted MLP training step, and per-example gradients."""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import compare


def _mlp(np_mod):
    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = np_mod.tanh(x @ w1 + b1)
        out = h @ w2 + b2
        return np_mod.mean((out - y) ** 2)
    return loss


def _params(lib_put, rng, sizes=(16, 32, 4)):
    return [(lib_put(rng.normal(size=(m, n)).astype(np.float32) * 0.3),
             lib_put(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]


def _first_call_seconds(make, args, block, repeats: int = 3) -> float:
    """Trace + compile time of a fresh jit(grad(...)) (best of a few fresh functions)."""
    best = float("inf")
    for _ in range(repeats):
        fn = make()
        start = time.perf_counter()
        block(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def run() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    rng = np.random.default_rng(0)
    py, pj = _params(yax.device_put, rng), _params(jax.device_put, np.random.default_rng(0))
    x_np, y_np = rng.normal(size=(64, 16)).astype(np.float32), rng.normal(size=(64, 4)).astype(
        np.float32)
    xy, yy, xj, yj = yax.device_put(x_np), yax.device_put(y_np), jax.device_put(x_np), \
        jax.device_put(y_np)
    loss_y, loss_j = _mlp(ynp), _mlp(jnp)
    rows = []

    gy, gj = yax.grad(loss_y), jax.grad(loss_j)
    rows.append(compare("eager grad(MLP loss)", lambda: gy(py, xy, yy), lambda: gj(pj, xj, yj),
                        number=20, rounds=5))
    # a fresh function each time: jax caches traces per function object, and the row measures
    # tracing itself
    rows.append(compare("make_jaxpr(grad(MLP loss)), fresh function",
                        lambda: yax.make_jaxpr(yax.grad(_mlp(ynp)))(py, xy, yy),
                        lambda: jax.make_jaxpr(jax.grad(_mlp(jnp)))(pj, xj, yj), number=20,
                        rounds=5))
    ty = _first_call_seconds(lambda: yax.jit(yax.grad(_mlp(ynp))), (py, xy, yy),
                             yax.block_until_ready)
    tj = _first_call_seconds(lambda: jax.jit(jax.grad(_mlp(jnp))), (pj, xj, yj),
                             jax.block_until_ready)
    rows.append({"name": "first call jit(grad(MLP loss))", "yax_us": ty * 1e6,
                 "jax_us": tj * 1e6, "ratio": ty / tj})

    def step(lib, loss):
        @lib.jit
        def update(params, x, y):
            grads = lib.grad(loss)(params, x, y)
            return lib.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return update
    sy, sj = step(yax, loss_y), step(jax, loss_j)
    rows.append(compare("jitted MLP training step", lambda: sy(py, xy, yy),
                        lambda: sj(pj, xj, yj), number=200))

    per_ex_y = yax.jit(yax.vmap(yax.grad(loss_y), in_axes=(None, 0, 0)))
    per_ex_j = jax.jit(jax.vmap(jax.grad(loss_j), in_axes=(None, 0, 0)))
    rows.append(compare("per-example grads jit(vmap(grad)) B=64",
                        lambda: per_ex_y(py, xy, yy), lambda: per_ex_j(pj, xj, yj), number=100))
    one_y, one_j = yax.jit(yax.grad(loss_y)), jax.jit(jax.grad(loss_j))
    rows.append(compare("per-example grads: loop of jit(grad) B=64",
                        lambda: [one_y(py, xy[i:i + 1], yy[i:i + 1]) for i in range(64)],
                        lambda: [one_j(pj, xj[i:i + 1], yj[i:i + 1]) for i in range(64)],
                        number=5, rounds=3))
    return rows
