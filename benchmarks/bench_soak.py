"""Soak: many mixed calls in one process; is resident memory flat, and how many calls a second?

Each library runs in its own fresh subprocess (so neither one's memory is counted in the other's
figures), the same mix in a fixed rotation: a jitted function, a jitted gradient, a few eager
ops, and an eager `vmap`. Resident memory (VmRSS) is read after a warm-up (every program
compiled, caches filled), every 10% of the run, and at the end after a garbage collection; the
goal is growth within 5 MiB. The peak column is the largest growth seen during the run (before
the final collection). Run alone (not part of `make bench`, it takes minutes):

    python benchmarks/bench_soak.py                 # 100000 calls each, yax then jax
    python benchmarks/bench_soak.py --calls 20000 --only yax
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 2**20


def rss_bytes() -> int:
    """This process's resident set size, from /proc (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("VmRSS not found in /proc/self/status")


def _workload(lib: str):
    """The four calls of the rotation, as zero-argument functions."""
    import numpy as np
    if lib == "yax":
        import yax as mod
        import yax.numpy as jnp
    else:
        import jax as mod
        import jax.numpy as jnp

    x = jnp.asarray(np.linspace(-1.0, 1.0, 16, dtype=np.float32))
    w = jnp.asarray(np.full((16,), 0.5, np.float32))
    xs = jnp.asarray(np.arange(32.0, dtype=np.float32).reshape(4, 8))
    predict = mod.jit(lambda w, x: jnp.tanh(w * x + 1.0))
    loss_grad = mod.jit(mod.grad(lambda w, x: jnp.sum((jnp.tanh(w * x) - x) ** 2)))

    def row_stat(r):
        return jnp.sum(r * r) - jnp.max(r)

    return [lambda: predict(w, x),
            lambda: loss_grad(w, x),
            lambda: jnp.exp(jnp.sin(x) * 2.0) + x,
            lambda: mod.vmap(row_stat)(xs)]


def _drainer(every: int):
    """With `every` > 0: a function to call each iteration that empties jaxlib's queue of
    Python objects released by its C++ threads (it is otherwise emptied only when Python's
    garbage collector runs, which a program allocating few long-lived objects rarely triggers):
    the experiment that shows where growth between garbage collections comes from."""
    if every <= 0:
        return None
    from jaxlib import xla_client
    collect = xla_client._xla.collect_garbage
    count = [0]

    def maybe_drain():
        count[0] += 1
        if count[0] % every == 0:
            collect()
    return maybe_drain


def soak(lib: str, calls: int, warmup: int, samples: int = 10, drain_every: int = 0) -> dict:
    """Run `calls` calls of the rotation (after `warmup` calls); memory and throughput."""
    ops = _workload(lib)
    drain = _drainer(drain_every)
    for i in range(warmup):
        ops[i % len(ops)]().block_until_ready()
    gc.collect()
    start_rss = rss_bytes()
    trace = []
    every = max(calls // samples, 1)
    t0 = time.perf_counter()
    out = None
    for i in range(calls):
        out = ops[i % len(ops)]()
        if drain is not None:
            drain()
        if (i + 1) % every == 0:
            out.block_until_ready()
            trace.append(round((rss_bytes() - start_rss) / MIB, 2))
    out.block_until_ready()
    elapsed = time.perf_counter() - t0
    gc.collect()
    end_rss = rss_bytes()
    return {"lib": lib, "calls": calls, "warmup": warmup, "seconds": round(elapsed, 2),
            "calls_per_s": round(calls / elapsed, 1),
            "rss_after_warmup_mib": round(start_rss / MIB, 1),
            "rss_end_mib": round(end_rss / MIB, 1),
            "growth_mib": round((end_rss - start_rss) / MIB, 2), "growth_trace_mib": trace,
            "peak_growth_mib": max(trace + [round((end_rss - start_rss) / MIB, 2)]),
            "drain_every": drain_every}


def _child(lib: str, calls: int, warmup: int, drain_every: int) -> dict:
    env = dict(os.environ, JAX_PLATFORMS="cpu", YAX_PLATFORM="cpu", TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", lib, "--calls", str(calls),
           "--warmup", str(warmup), "--drain-every", str(drain_every)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_table(rows) -> None:
    print(f"{'lib':5s} {'calls':>8s} {'calls/s':>9s} {'RSS warm (MiB)':>15s} "
          f"{'RSS end (MiB)':>14s} {'growth (MiB)':>13s} {'peak (MiB)':>11s}  "
          f"growth every 10%, before gc (MiB)")
    for r in rows:
        print(f"{r['lib']:5s} {r['calls']:8d} {r['calls_per_s']:9.1f} "
              f"{r['rss_after_warmup_mib']:15.1f} {r['rss_end_mib']:14.1f} "
              f"{r['growth_mib']:13.2f} {r['peak_growth_mib']:11.2f}  {r['growth_trace_mib']}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=100_000)
    p.add_argument("--warmup", type=int, default=5_000)
    p.add_argument("--only", choices=("yax", "jax"), default=None)
    p.add_argument("--drain-every", type=int, default=0,
                   help="empty jaxlib's deferred-release queue every N calls (an experiment)")
    p.add_argument("--child", choices=("yax", "jax"), default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(soak(args.child, args.calls, args.warmup,
                              drain_every=args.drain_every)))
        return
    libs = [args.only] if args.only else ["yax", "jax"]
    print_table([_child(lib, args.calls, args.warmup, args.drain_every) for lib in libs])


if __name__ == "__main__":
    main()
