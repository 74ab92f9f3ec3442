"""Eager overheads, yax vs jax: one warm op on f32[8], eager linear algebra, eager grad."""

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
    return [
        compare("eager op: add(x, x)", lambda: ynp.add(xy, xy), lambda: jnp.add(xj, xj)),
        compare("eager op: x * 2.0 (operator)", lambda: xy * 2.0, lambda: xj * 2.0),
        compare("eager op: sin(x)", lambda: ynp.sin(xy), lambda: jnp.sin(xj)),
        compare("eager op: sum(x)", lambda: ynp.sum(xy), lambda: jnp.sum(xj)),
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


def run() -> list:
    return eager_op_rows() + linalg_rows()


if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.common import print_table
    print_table(run())
