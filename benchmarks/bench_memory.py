"""Memory and time of reverse mode, yax vs jax, with and without checkpointing: the compiled
programs' temp/argument bytes (XLA's own statistics), the residual bytes between the passes,
and the compiled gradient's run time.

Two workloads:
- a deep chain of `tanh(sin(h @ W))` layers, checkpointed per layer, per block of 4, and per
  block under `save_within_bytes` budgets (yax only; the jax column runs the jax policy that
  stores the same values);
- a long `scan` of the same layer, plain, with the step checkpointed, and in
  `checkpoint="sqrt"` mode (jax has no such mode: its column is the same nesting written by
  hand, a scan over checkpointed inner scans).
`temp_ratio`/`res_ratio`/`time_ratio` compare each row with the workload's no-checkpoint row
(yax; times as the median of per-round ratios), `yax_jax_time` yax with jax.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np

DEPTH, BATCH, WIDTH = 32, 512, 128
STEPS, SCAN_BATCH = 1024, 16
MIB = 2 ** 20


def _net(np_mod, wrap, block: int):
    """`block` consecutive layers form one (possibly checkpointed) segment."""
    def segment(Ws, h):
        for W in Ws:
            h = np_mod.tanh(np_mod.sin(h @ W))
        return h

    def loss(Ws, x):
        h = x
        for i in range(0, len(Ws), block):
            h = wrap(segment)(Ws[i:i + block], h)
        return np_mod.sum(h * h)
    return loss


def _loop(np_mod, scan_fn):
    """`scan_fn(step, h0)` runs STEPS steps of the layer (xs=None)."""
    def loss(W, h0):
        def step(h, _):
            return np_mod.tanh(np_mod.sin(h @ W)), None
        return np_mod.sum(scan_fn(step, h0)[0] ** 2)
    return loss


def _jax_nested(jax, step, h0, n: int):
    """sqrt(n) checkpointed segments of sqrt(n) steps, by hand (n a perfect square here)."""
    k = math.isqrt(n)
    assert k * k == n

    @jax.checkpoint
    def segment(h, _):
        return jax.lax.scan(step, h, None, length=k)[0], None
    return jax.lax.scan(segment, h0, None, length=k)


def _jax_residual_bytes(jax, f, *args) -> int:
    from jax._src.ad_checkpoint import saved_residuals  # the oracle's own accounting
    return sum(int(np.prod(aval.shape)) * aval.dtype.itemsize
               for aval, _ in saved_residuals(f, *args))


def _time_rounds(calls, rounds: int = 7, number: int = 2) -> list[list[float]]:
    """Seconds per call of each `calls[i]()`, one list entry per round; every round runs every
    call in turn, so drift on a shared machine hits the rows of a round alike."""
    for call in calls:
        call()  # warm up
    times = [[] for _ in calls]
    for _ in range(rounds):
        for call, out in zip(calls, times, strict=True):
            start = time.perf_counter()
            for _ in range(number):
                call()
            out.append((time.perf_counter() - start) / number)
    return times


def _median_ratio(a: list, b: list) -> float:
    """The median over rounds of a/b (both measured in the same round)."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def _block(tree):
    import jax
    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()
    return tree


def _row(name, yf, jf, args, yax, jax) -> dict:
    ygrad, jgrad = yax.jit(yax.grad(yf)), jax.jit(jax.grad(jf))
    ystats = ygrad.lower(*args).compile().memory_analysis()
    jstats = jgrad.lower(*args).compile().memory_analysis()
    return {
        "name": name,
        "yax_temp": ystats.temp_size_in_bytes, "jax_temp": jstats.temp_size_in_bytes,
        "yax_res": yax.saved_residuals(yf, *args, compare_checkpoint=False).total_bytes,
        "jax_res": _jax_residual_bytes(jax, jf, *args),
        "yax_args": ystats.argument_size_in_bytes, "jax_args": jstats.argument_size_in_bytes,
    }, (lambda: _block(ygrad(*args)), lambda: _block(jgrad(*args)))


def _chain_rows(yax, jax, ynp, jnp) -> list:
    rng = np.random.default_rng(0)
    Ws = [(rng.normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
          for _ in range(DEPTH)]
    x = rng.normal(size=(BATCH, WIDTH)).astype(np.float32)
    ycp, jcp = yax.checkpoint_policies, jax.checkpoint_policies
    with_policy = lambda ck, p: (lambda f: ck(f, policy=p))
    plain = lambda f: f
    # one activation is 256 KiB: 1 MiB per block holds its 4 matmul results (the greedy's first
    # choice, which jax's dots_saveable also stores); 1 GiB holds everything
    cases = (
        ("no checkpoint", plain, plain, 1),
        ("checkpoint every layer", yax.checkpoint, jax.checkpoint, 1),
        ("checkpoint blocks of 4", yax.checkpoint, jax.checkpoint, 4),
        ("blocks of 4, save_within_bytes(1 MiB) (jax: dots)",
         with_policy(yax.checkpoint, ycp.save_within_bytes(MIB)),
         with_policy(jax.checkpoint, jcp.dots_saveable), 4),
        ("blocks of 4, save_within_bytes(1 GiB) (jax: all)",
         with_policy(yax.checkpoint, ycp.save_within_bytes(1024 * MIB)),
         with_policy(jax.checkpoint, jcp.everything_saveable), 4),
    )
    prefix = f"grad, {DEPTH} layers {BATCH}x{WIDTH}"
    return [_row(f"{prefix}, {label}", _net(ynp, yw, block), _net(jnp, jw, block), (Ws, x),
                 yax, jax) for label, yw, jw, block in cases]


def _scan_rows(yax, jax, ynp, jnp) -> list:
    rng = np.random.default_rng(1)
    W = (rng.normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    h0 = rng.normal(size=(SCAN_BATCH, WIDTH)).astype(np.float32)
    yscan = lambda **kw: (lambda step, h: yax.lax.scan(step, h, None, length=STEPS, **kw))
    jscan = lambda step, h: jax.lax.scan(step, h, None, length=STEPS)
    ycp, jcp = yax.checkpoint_policies, jax.checkpoint_policies
    cases = (
        ("loop: no checkpoint", yscan(), jscan),
        ("loop: checkpoint(step)",
         lambda step, h: yax.lax.scan(yax.checkpoint(step), h, None, length=STEPS),
         lambda step, h: jax.lax.scan(jax.checkpoint(step), h, None, length=STEPS)),
        # one activation (16x128 f32) per step: the greedy keeps the matmul result
        ("loop: checkpoint(step, save_within_bytes(8 KiB)) (jax: dots)",
         lambda step, h: yax.lax.scan(yax.checkpoint(step, policy=ycp.save_within_bytes(
             SCAN_BATCH * WIDTH * 4)), h, None, length=STEPS),
         lambda step, h: jax.lax.scan(jax.checkpoint(step, policy=jcp.dots_saveable), h, None,
                                      length=STEPS)),
        ('loop: checkpoint="sqrt" (jax: nested by hand)', yscan(checkpoint="sqrt"),
         lambda step, h: _jax_nested(jax, step, h, STEPS)),
    )
    prefix = f"grad, scan {STEPS} steps {SCAN_BATCH}x{WIDTH}"
    return [_row(f"{prefix}, {label}", _loop(ynp, yf), _loop(jnp, jf), (W, h0), yax, jax)
            for label, yf, jf in cases]


def run() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    rows = []
    for group in (_chain_rows(yax, jax, ynp, jnp), _scan_rows(yax, jax, ynp, jnp)):
        times = _time_rounds([c for _, pair in group for c in pair])
        base_res, base_temp, base_times = group[0][0]["yax_res"], group[0][0]["yax_temp"], times[0]
        for i, (r, _) in enumerate(group):  # each row against its workload's no-checkpoint row
            y, j = times[2 * i], times[2 * i + 1]
            r["yax_ms"], r["jax_ms"] = statistics.median(y) * 1e3, statistics.median(j) * 1e3
            r["temp_ratio"] = r["yax_temp"] / max(base_temp, 1)
            r["res_ratio"] = r["yax_res"] / max(base_res, 1)
            r["time_ratio"] = _median_ratio(y, base_times)
            r["yax_jax_time"] = _median_ratio(y, j)
            rows.append(r)
    return rows


def print_table(rows) -> None:
    mib = 1 / MIB
    print(f"{'memory (MiB) and time (ms) of grad':70s} {'yax temp':>8s} {'jax temp':>8s} "
          f"{'yax res':>8s} {'jax res':>8s} {'yax ms':>7s} {'jax ms':>7s} {'temp/0':>6s} "
          f"{'res/0':>6s} {'time/0':>6s} {'time yax/jax':>12s}")
    for r in rows:
        print(f"{r['name']:70s} {r['yax_temp'] * mib:8.2f} {r['jax_temp'] * mib:8.2f} "
              f"{r['yax_res'] * mib:8.2f} {r['jax_res'] * mib:8.2f} {r['yax_ms']:7.1f} "
              f"{r['jax_ms']:7.1f} {r['temp_ratio']:6.2f} {r['res_ratio']:6.2f} "
              f"{r['time_ratio']:6.2f} {r['yax_jax_time']:12.2f}")


if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    print_table(run())
