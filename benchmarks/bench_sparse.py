"""Sparse solvers: jitted `scipy.sparse.linalg.cg` on a 256x256 SPD system, and its gradient
with respect to b (one more cg, of the transposed system), yax vs jax."""

from __future__ import annotations

import numpy as np

from benchmarks.common import compare

N = 256


def _problem():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(N, N)).astype(np.float32)
    spd = (g @ g.T / N + np.eye(N, dtype=np.float32)).astype(np.float32)
    return spd, rng.normal(size=N).astype(np.float32)


def _programs(lib, sparse_linalg, np_mod, a):
    def solve(b):
        return sparse_linalg.cg(lambda v: a @ v, b)[0]

    def loss(b):
        return np_mod.sum(solve(b) ** 2)
    return lib.jit(solve), lib.jit(lib.grad(loss))


def run() -> list:
    import jax
    import jax.numpy as jnp
    import jax.scipy.sparse.linalg as jspla

    import yax
    import yax.numpy as ynp
    import yax.scipy.sparse.linalg as yspla

    spd, b = _problem()
    ay, by = yax.device_put(spd), yax.device_put(b)
    aj, bj = jax.device_put(spd), jax.device_put(b)
    solve_y, grad_y = _programs(yax, yspla, ynp, ay)
    solve_j, grad_j = _programs(jax, jspla, jnp, aj)
    np.testing.assert_allclose(np.asarray(solve_y(by)), np.asarray(solve_j(bj)), rtol=1e-3,
                               atol=1e-4)
    return [
        compare(f"sparse cg {N}x{N} SPD: jit run", lambda: yax.block_until_ready(solve_y(by)),
                lambda: jax.block_until_ready(solve_j(bj)), number=50, rounds=5),
        compare(f"sparse cg {N}x{N} SPD: jit(grad wrt b) run",
                lambda: yax.block_until_ready(grad_y(by)),
                lambda: jax.block_until_ready(grad_j(bj)), number=50, rounds=5),
    ]


if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.common import print_table
    print_table(run())
