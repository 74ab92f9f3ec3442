"""Sharded jit on 8 forced CPU devices, yax vs jax (run in a child Python: the device count is
fixed when XLA's client starts).

Rows: (a) dispatch of a warm sharded jit call with 8-way sharded inputs (not blocking, and
call + block); (b) a data-parallel MLP training step (params replicated, batch sharded over
'data', grad + SGD in one jit); (c) the same step on a large batch, 8 devices vs 1 (reported as
ratios 8-dev/1-dev, yax and jax separately: on a 2-core machine 8 devices cannot be faster).

    python -m benchmarks.bench_sharding
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _child() -> list:
    import jax
    import jax.numpy as jjnp
    import numpy as np

    import yax
    import yax.numpy as jnp
    from benchmarks.common import compare, time_call
    from yax.sharding import NamedSharding, P, make_mesh

    put = yax.device_put  # the public path: committed, sharded Arrays

    mesh = make_mesh((8,), ("data",))
    jmesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))
    S, R = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    JS = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("data"))
    JR = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec())
    rows = []

    # (a) dispatch
    x = np.arange(64, dtype=np.float32)
    yx, yy = put(x, S), put(x, S)
    jx, jy = jax.device_put(x, JS), jax.device_put(x, JS)
    yf = yax.jit(lambda a, b: a + b, in_shardings=(S, S))
    jf = jax.jit(lambda a, b: a + b, in_shardings=(JS, JS))
    yf2 = yax.jit(lambda a, b: a + b)  # shardings from the committed arguments
    jf2 = jax.jit(lambda a, b: a + b)
    rows.append(compare("sharded jit dispatch, in_shardings (8 dev)",
                        lambda: yf(yx, yy), lambda: jf(jx, jy), number=300))
    rows.append(compare("sharded jit dispatch, committed args (8 dev)",
                        lambda: yf2(yx, yy), lambda: jf2(jx, jy), number=300))
    rows.append(compare("sharded jit call + block (8 dev)",
                        lambda: yf(yx, yy).block_until_ready(),
                        lambda: jf(jx, jy).block_until_ready(), number=300))

    # (b) data-parallel MLP step
    def make_step(np_mod, grad):
        def loss(p, xb, yb):
            h = np_mod.tanh(xb @ p["w1"] + p["b1"])
            return np_mod.mean((h @ p["w2"] - yb) ** 2)

        def step(p, xb, yb):
            g = grad(loss)(p, xb, yb)
            return {k: p[k] - 0.01 * g[k] for k in p}
        return step

    rs = np.random.RandomState(0)
    params = {"w1": rs.randn(64, 256).astype(np.float32) * 0.1,
              "b1": np.zeros(256, np.float32),
              "w2": rs.randn(256, 10).astype(np.float32) * 0.1}

    def mlp_rows(batch: int, label: str, number: int):
        xb = rs.randn(batch, 64).astype(np.float32)
        yb = rs.randn(batch, 10).astype(np.float32)
        ystep = yax.jit(make_step(jnp, yax.grad), in_shardings=(R, S, S))
        jstep = jax.jit(make_step(jjnp, jax.grad), in_shardings=(JR, JS, JS))
        yp = {k: put(v, R) for k, v in params.items()}
        jp = {k: jax.device_put(v, JR) for k, v in params.items()}
        yxb, yyb = put(xb, S), put(yb, S)
        jxb, jyb = jax.device_put(xb, JS), jax.device_put(yb, JS)
        row8 = compare(f"data-parallel MLP step, batch {batch} (8 dev){label}",
                       lambda: yax.tree_util.tree_map(lambda a: a.block_until_ready(),
                                                      ystep(yp, yxb, yyb)),
                       lambda: jax.block_until_ready(jstep(jp, jxb, jyb)), number=number)
        ystep1 = yax.jit(make_step(jnp, yax.grad))
        jstep1 = jax.jit(make_step(jjnp, jax.grad))
        yp1 = {k: jnp.asarray(v) for k, v in params.items()}
        jp1 = {k: jjnp.asarray(v) for k, v in params.items()}
        yx1, yy1, jx1, jy1 = jnp.asarray(xb), jnp.asarray(yb), jjnp.asarray(xb), jjnp.asarray(yb)
        row1 = compare(f"same MLP step, batch {batch} (1 dev)",
                       lambda: yax.tree_util.tree_map(lambda a: a.block_until_ready(),
                                                      ystep1(yp1, yx1, yy1)),
                       lambda: jax.block_until_ready(jstep1(jp1, jx1, jy1)), number=number)
        return row8, row1

    small8, _ = mlp_rows(512, "", 50)
    rows.append(small8)
    big8, big1 = mlp_rows(16384, " [large]", 5)
    rows += [big8, big1]
    rows.append({"name": "speed-up 8 dev over 1, batch 16384 (yax | jax)",
                 "yax_us": big1["yax_us"] / big8["yax_us"],
                 "jax_us": big1["jax_us"] / big8["jax_us"],
                 "ratio": (big1["yax_us"] / big8["yax_us"]) / (big1["jax_us"] / big8["jax_us"])})
    del time_call
    return rows


def run() -> list:
    """Rows from a child Python with 8 CPU devices."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=8").strip()
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("JAX_PLATFORMS", "cpu")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_sharding", "--child"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        raise RuntimeError(f"bench_sharding child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(_child()))
    else:
        from benchmarks.common import print_table
        print_table(run())
        print("(the speed-up row shows 1-dev/8-dev times, not us; its ratio is yax's over jax's)")
