"""Control flow: compile and run time of jit(grad(loss)) for a 1000-step scan RNN, yax vs jax."""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import compare

STEPS, HIDDEN = 1000, 32


def _rnn_loss(lib, np_mod):
    def loss(w, xs):
        def step(h, x):
            h = np_mod.tanh(h @ w + x)
            return h, np_mod.sum(h)
        h, ys = lib.lax.scan(step, np_mod.zeros(HIDDEN, np.float32), xs)
        return np_mod.sum(ys) + np_mod.sum(h)
    return loss


def _first_call(fn, args, block) -> float:
    start = time.perf_counter()
    block(fn(*args))
    return time.perf_counter() - start


def run() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    rng = np.random.default_rng(0)
    w_np = (rng.normal(size=(HIDDEN, HIDDEN)) * 0.1).astype(np.float32)
    xs_np = rng.normal(size=(STEPS, HIDDEN)).astype(np.float32)
    wy, xy = yax.device_put(w_np), yax.device_put(xs_np)
    wj, xj = jax.device_put(w_np), jax.device_put(xs_np)
    gy = yax.jit(yax.grad(_rnn_loss(yax, ynp)))
    gj = jax.jit(jax.grad(_rnn_loss(jax, jnp)))
    ty = _first_call(gy, (wy, xy), yax.block_until_ready)
    tj = _first_call(gj, (wj, xj), jax.block_until_ready)
    rows = [{"name": "scan RNN 1000 steps: jit(grad) compile", "yax_us": ty * 1e6,
             "jax_us": tj * 1e6, "ratio": ty / tj}]
    rows.append(compare("scan RNN 1000 steps: jit(grad) run",
                        lambda: yax.block_until_ready(gy(wy, xy)),
                        lambda: jax.block_until_ready(gj(wj, xj)), number=5, rounds=5))
    return rows
