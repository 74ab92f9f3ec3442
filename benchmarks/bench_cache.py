"""The first jitted call in a new process, cold vs warm persistent cache, yax vs jax (each with
its own cache directory set), and what `import` costs each.

    python -m benchmarks.bench_cache

Each figure is the median over fresh processes of a jitted MLP training step's first call, from
the call until its result is ready (tracing, lowering, compiling or loading, the first run).
jax caches every entry here (minimum compile time and entry size set to 0). Work done before
the call (at import, or in the background: yax/runtime/cpu_warmup.py) is not hidden: the
"import + setup + first call" row times the whole process from before the import, and the line
under the table repeats yax's figures with that warm-up turned off (YAX_CPU_WARMUP=0).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_STEP = r"""
import os, sys, time
t0 = time.perf_counter()
if sys.argv[1].startswith("yax"):
    import yax as lib, yax.numpy as jnp
else:
    import jax as lib, jax.numpy as jnp
    lib.config.update("jax_compilation_cache_dir", os.environ["BENCH_CACHE_DIR"])
    lib.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    lib.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
t_import = time.perf_counter() - t0
import numpy as np

def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)

@lib.jit
def step(params, x, y):
    grads = lib.grad(loss)(params, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]

rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = [(lib.device_put((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)),
           lib.device_put(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]
x = lib.device_put(rng.normal(size=(32, 784)).astype(np.float32))
y = lib.device_put(rng.normal(size=(32, 10)).astype(np.float32))
lib.block_until_ready((params, x, y))
t1 = time.perf_counter()
out = step(params, x, y)
t2 = time.perf_counter()
lib.block_until_ready(out)
t3 = time.perf_counter()
print(f"{t_import:.5f} {t2 - t1:.5f} {t3 - t1:.5f} {t3 - t0:.5f}")
"""


# "yax-nowarm": yax without its background CPU kernel warm-up, to show what that buys
_LIBS = {"yax": {}, "yax-nowarm": {"YAX_CPU_WARMUP": "0"}, "jax": {}}


def _first_calls(rounds: int) -> dict:
    """{(lib, cold|warm): [(import s, call s, ready s, process start to ready s), ...]}."""
    got: dict = {}
    for _ in range(rounds):
        for lib, extra in _LIBS.items():
            with tempfile.TemporaryDirectory() as d:
                env = dict(os.environ, PYTHONPATH=_ROOT, BENCH_CACHE_DIR=d,
                           YAX_COMPILATION_CACHE_DIR=d, JAX_PLATFORMS="cpu",
                           YAX_PLATFORM="cpu", TF_CPP_MIN_LOG_LEVEL="1", **extra)
                for kind in ("cold", "warm"):
                    out = subprocess.run([sys.executable, "-c", _STEP, lib], env=env, cwd=_ROOT,
                                         check=True, capture_output=True, text=True)
                    got.setdefault((lib, kind), []).append(
                        tuple(float(v) for v in out.stdout.split()[-4:]))
    return got


def _median(rows, i) -> float:
    return statistics.median(r[i] for r in rows)


def run(rounds: int = 3) -> list:
    got = _first_calls(rounds)
    rows = []
    for kind in ("cold", "warm"):
        y, j = _median(got[("yax", kind)], 2), _median(got[("jax", kind)], 2)
        rows.append({"name": f"first jit call, new process, {kind} cache", "yax_us": y * 1e6,
                     "jax_us": j * 1e6, "ratio": y / j})
    y, j = _median(got[("yax", "warm")], 1), _median(got[("jax", "warm")], 1)
    rows.append({"name": "  same, warm, until the call returns", "yax_us": y * 1e6,
                 "jax_us": j * 1e6, "ratio": y / j})
    y = statistics.median([r[0] for k in ("cold", "warm") for r in got[("yax", k)]])
    j = statistics.median([r[0] for k in ("cold", "warm") for r in got[("jax", k)]])
    rows.append({"name": "import (yax vs jax)", "yax_us": y * 1e6, "jax_us": j * 1e6,
                 "ratio": y / j})
    y, j = _median(got[("yax", "warm")], 3), _median(got[("jax", "warm")], 3)
    rows.append({"name": "import + setup + first call, warm cache", "yax_us": y * 1e6,
                 "jax_us": j * 1e6, "ratio": y / j})
    for lib in _LIBS:  # cold/warm speedup of each library's own cache
        rows[1][f"{lib}_speedup"] = (_median(got[(lib, "cold")], 2)
                                     / _median(got[(lib, "warm")], 2))
    rows[1]["yax_nowarm"] = {  # the same figures of yax with YAX_CPU_WARMUP=0
        kind: {name: _median(got[("yax-nowarm", kind)], i) * 1e6
               for name, i in (("ready_us", 2), ("import_us", 0), ("total_us", 3))}
        for kind in ("cold", "warm")}
    return rows


if __name__ == "__main__":
    from benchmarks.common import print_table
    table = run()
    print_table(table)
    print(f"\ncold/warm first call (until ready): yax {table[1]['yax_speedup']:.1f}x, "
          f"jax {table[1]['jax_speedup']:.1f}x; yax with YAX_CPU_WARMUP=0 "
          f"{table[1]['yax-nowarm_speedup']:.1f}x")
    for kind, t in table[1]["yax_nowarm"].items():
        print(f"yax with YAX_CPU_WARMUP=0, {kind} cache: first call {t['ready_us'] / 1e3:.1f} ms, "
              f"import {t['import_us'] / 1e3:.0f} ms, "
              f"import + setup + first call {t['total_us'] / 1e3:.0f} ms")
