"""Eager overheads, yax vs jax: one warm op on f32[8] (and a few beside it), eager linear
algebra, eager grad."""

from __future__ import annotations

import numpy as np

from benchmarks.common import compare


def eager_op_rows() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    x_np = np.arange(8, dtype=np.float32)
    xy, xj = yax.device_put(x_np), jax.device_put(x_np)
    my, mj = yax.device_put(x_np.reshape(2, 4)), jax.device_put(x_np.reshape(2, 4))
    return [
        compare("eager op: add(x, x)", lambda: ynp.add(xy, xy), lambda: jnp.add(xj, xj)),
        compare("eager op: x * 2.0 (operator)", lambda: xy * 2.0, lambda: xj * 2.0),
        compare("eager op: sin(x)", lambda: ynp.sin(xy), lambda: jnp.sin(xj)),
        compare("eager op: sum(x)", lambda: ynp.sum(xy), lambda: jnp.sum(xj)),
        compare("eager op: sum(m, axis=0), f32[2,4]", lambda: ynp.sum(my, axis=0),
                lambda: jnp.sum(mj, axis=0)),
        compare("eager op: sin(cos(x)) (a chain)", lambda: ynp.sin(ynp.cos(xy)),
                lambda: jnp.sin(jnp.cos(xj))),
        compare("eager op: x[1:3]", lambda: xy[1:3], lambda: xj[1:3]),
    ]


def linalg_rows() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    rng = np.random.default_rng(0)
    a = (rng.normal(size=(64, 64)) + 8 * np.eye(64)).astype(np.float32)
    b = rng.normal(size=(64,)).astype(np.float32)
    ay, by, aj, bj = yax.device_put(a), yax.device_put(b), jax.device_put(a), jax.device_put(b)
    spd_np = (a @ a.T).astype(np.float32)
    sy, sj = yax.device_put(spd_np), jax.device_put(spd_np)
    rows = [
        compare("eager linalg.solve 64x64", lambda: ynp.linalg.solve(ay, by),
                lambda: jnp.linalg.solve(aj, bj), number=50, rounds=5),
        compare("eager linalg.inv 64x64", lambda: ynp.linalg.inv(ay),
                lambda: jnp.linalg.inv(aj), number=50, rounds=5),
        compare("eager linalg.cholesky 64x64", lambda: ynp.linalg.cholesky(sy),
                lambda: jnp.linalg.cholesky(sj), number=50, rounds=5),
        compare("eager linalg.det 64x64", lambda: ynp.linalg.det(ay),
                lambda: jnp.linalg.det(aj), number=50, rounds=5),
    ]
    return rows


def _mlp3(np_mod):
    def loss(params, x, y):
        for w, b in params[:-1]:
            x = np_mod.tanh(x @ w + b)
        w, b = params[-1]
        return np_mod.mean((x @ w + b - y) ** 2)
    return loss


def _mlp3_args(put, sizes=(16, 32, 32, 4)):
    rng = np.random.default_rng(0)
    params = [(put(rng.normal(size=(m, n)).astype(np.float32) * 0.3),
               put(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]
    x = put(rng.normal(size=(64, sizes[0])).astype(np.float32))
    y = put(rng.normal(size=(64, sizes[-1])).astype(np.float32))
    return params, x, y


def grad_rows() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    args_y, args_j = _mlp3_args(yax.device_put), _mlp3_args(jax.device_put)
    gy, gj = yax.grad(_mlp3(ynp)), jax.grad(_mlp3(jnp))
    vy, vj = yax.value_and_grad(_mlp3(ynp)), jax.value_and_grad(_mlp3(jnp))
    return [
        compare("eager grad(3-layer MLP loss)", lambda: gy(*args_y), lambda: gj(*args_j),
                number=10, rounds=7),
        compare("eager value_and_grad(3-layer MLP loss)", lambda: vy(*args_y),
                lambda: vj(*args_j), number=10, rounds=7),
    ]


def run() -> list:
    """Linear algebra and autodiff rows (`make bench` gets the eager-op rows from
    bench_dispatch; `python benchmarks/bench_eager.py` prints them too)."""
    return linalg_rows() + grad_rows()


if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.common import print_table
    print_table(eager_op_rows() + run())
