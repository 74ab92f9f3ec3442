"""Side-by-side timing of yax and jax in one process: interleaved rounds, medians, ratios."""

from __future__ import annotations

import statistics
import time


def time_call(fn, number: int) -> float:
    """Seconds per call of `fn` over `number` calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def compare(name: str, yax_fn, jax_fn, *, number: int = 2000, rounds: int = 7) -> dict:
    """Interleave rounds of both so drift on a noisy machine hits both alike; report medians."""
    yax_fn(), jax_fn()  # warm up: compile, fill caches
    ys, js = [], []
    for _ in range(rounds):
        ys.append(time_call(yax_fn, number))
        js.append(time_call(jax_fn, number))
    y, j = statistics.median(ys), statistics.median(js)
    return {"name": name, "yax_us": y * 1e6, "jax_us": j * 1e6, "ratio": y / j}


# Libraries a row may also be measured beside (bench_peers.py): `<peer>_us`, `<peer>_ratio`.
PEERS = ("torch", "autograd")


def print_table(rows) -> None:
    print(f"{'benchmark':44s} {'yax (us)':>10s} {'jax (us)':>10s} {'yax/jax':>8s}")
    for r in rows:
        peers = "".join(f"  {peer}/jax {r[peer + '_ratio']:.3f}" for peer in PEERS
                        if peer + "_ratio" in r)
        print(f"{r['name']:44s} {r['yax_us']:10.1f} {r['jax_us']:10.1f} {r['ratio']:8.2f}{peers}")
