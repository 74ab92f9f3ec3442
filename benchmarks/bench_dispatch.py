"""jit dispatch overhead and eager per-op overhead, yax vs jax; the persistent compilation cache
(first call in a fresh process, cold vs warm); resident memory after 300 new shapes.

    python -m benchmarks.bench_dispatch            # the timing table
    python -m benchmarks.bench_dispatch --best     # the same rows, best of 60 short chunks each
    python -m benchmarks.bench_dispatch --cache    # + persistent cache, cold vs warm
    python -m benchmarks.bench_dispatch --shapes   # + memory after 300 new shapes, yax vs jax
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks.common import compare, print_table, time_call

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compare_best(name: str, yax_fn, jax_fn, *, chunks: int = 60, number: int = 500) -> dict:
    """Like `common.compare`, but the best of many short interleaved chunks: on a shared,
    loaded machine the fastest chunk is the one least disturbed, for both libraries alike."""
    yax_fn(), jax_fn(), yax_fn(), jax_fn()
    ys, js = [], []
    for _ in range(chunks):
        ys.append(time_call(yax_fn, number))
        js.append(time_call(jax_fn, number))
    y, j = min(ys), min(js)
    return {"name": name, "yax_us": y * 1e6, "jax_us": j * 1e6, "ratio": y / j}


def run(compare=compare) -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    x_np = np.ones((8,), np.float32)
    xy, xj = yax.device_put(x_np), jax.device_put(x_np)
    rows = []

    fy = yax.jit(lambda a: a + 1.0)
    fj = jax.jit(lambda a: a + 1.0)
    rows.append(compare("jit dispatch, 1 array in/out", lambda: fy(xy), lambda: fj(xj)))

    gy = yax.jit(lambda a, b, c: (a * b + c, a - c))
    gj = jax.jit(lambda a, b, c: (a * b + c, a - c))
    rows.append(compare("jit dispatch, 3 arrays in, 2 out", lambda: gy(xy, xy, xy),
                        lambda: gj(xj, xj, xj)))

    def tree(p):
        return {"w": p["w"] * 2.0, "b": p["b"] + p["c"], "c": p["c"], "d": p["d"] - p["w"]}
    ty, tj = yax.jit(tree), jax.jit(tree)
    py = {k: xy for k in "wbcd"}
    pj = {k: xj for k in "wbcd"}
    rows.append(compare("jit dispatch, dict pytree of 4 arrays", lambda: ty(py), lambda: tj(pj)))

    rows.append(compare("eager op: add(x, x)", lambda: ynp.add(xy, xy), lambda: jnp.add(xj, xj)))
    rows.append(compare("eager op: x * 2.0 (operator)", lambda: xy * 2.0, lambda: xj * 2.0))
    rows.append(compare("eager op: sin(x)", lambda: ynp.sin(xy), lambda: jnp.sin(xj)))
    rows.append(compare("eager op: sum(x)", lambda: ynp.sum(xy), lambda: jnp.sum(xj),
                        number=500))
    rows.append(compare("eager op: x[1:3]", lambda: xy[1:3], lambda: xj[1:3], number=500))
    return rows


# --- persistent compilation cache: first call of a training step in a fresh process -----------

_STEP = r"""
import os, sys, time
t0 = time.perf_counter()
import numpy as np
import yax, yax.numpy as jnp
t_import = time.perf_counter() - t0

def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return jnp.mean((logits - y) ** 2)

@yax.jit
def step(params, x, y):
    grads = yax.grad(loss)(params, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]

rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = [(yax.device_put(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m)),
           yax.device_put(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]
x = yax.device_put(rng.normal(size=(32, 784)).astype(np.float32))
y = yax.device_put(rng.normal(size=(32, 10)).astype(np.float32))
t1 = time.perf_counter()
out = step(params, x, y)
t2 = time.perf_counter()
yax.block_until_ready(out)
print(f"{t2 - t1:.4f} {time.perf_counter() - t1:.4f}")
"""


def run_cache(rounds: int = 3) -> dict:
    """Median first-call seconds of a jitted MLP training step, cold vs warm cache: until the
    call returns (trace, lower, compile or load, dispatch) and until its result is ready."""
    times = {"cold": [], "warm": [], "cold_ready": [], "warm_ready": []}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, YAX_COMPILATION_CACHE_DIR=d, PYTHONPATH=_ROOT)
            for kind in ("cold", "warm"):
                out = subprocess.run([sys.executable, "-c", _STEP], env=env, check=True,
                                     capture_output=True, text=True).stdout.split()
                times[kind].append(float(out[0]))
                times[kind + "_ready"].append(float(out[1]))
    r = {k: float(np.median(v)) for k, v in times.items()}
    r["speedup"] = r["cold"] / r["warm"]
    r["speedup_ready"] = r["cold_ready"] / r["warm_ready"]
    return r


# --- memory after a jitted function sees 300 new shapes ----------------------------------------

_SHAPES = r"""
import resource, sys
import numpy as np
which = sys.argv[1]
if which == "yax":
    import yax as lib, yax.numpy as jnp
else:
    import jax as lib, jax.numpy as jnp
f = lib.jit(lambda x: jnp.sin(x) * 2.0 + jnp.sum(x))
for n in range(1, 301):
    lib.block_until_ready(f(jnp.ones((n,), jnp.float32)))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run_shapes() -> dict:
    """Peak resident MiB of a process calling one jitted function with 300 new shapes."""
    env = dict(os.environ, PYTHONPATH=_ROOT, YAX_COMPILATION_CACHE_DIR="")
    env.pop("YAX_COMPILATION_CACHE_DIR")
    out = {}
    for which in ("yax", "jax"):
        res = subprocess.run([sys.executable, "-c", _SHAPES, which], env=env, check=True,
                             capture_output=True, text=True)
        out[which] = float(res.stdout.split()[-1])
    return out


if __name__ == "__main__":
    print_table(run(compare_best) if "--best" in sys.argv else run())
    if "--cache" in sys.argv:
        r = run_cache()
        print(f"\npersistent cache, first call of a jitted MLP step in a fresh process: "
              f"cold {r['cold'] * 1e3:.0f} ms, warm {r['warm'] * 1e3:.0f} ms "
              f"({r['speedup']:.1f}x faster warm); until the result is ready: cold "
              f"{r['cold_ready'] * 1e3:.0f} ms, warm {r['warm_ready'] * 1e3:.0f} ms "
              f"({r['speedup_ready']:.1f}x)")
    if "--shapes" in sys.argv:
        r = run_shapes()
        print(f"\n300 new shapes, peak RSS: yax {r['yax']:.0f} MiB, jax {r['jax']:.0f} MiB")
