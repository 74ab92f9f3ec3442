"""Memory of reverse mode, yax vs jax, with and without checkpoint: the compiled programs'
argument/output/temp bytes (XLA's own statistics) and the residual bytes between the passes.

The network is a deep chain of `tanh(sin(h @ W))` layers: each layer leaves residuals (the sin
and tanh derivatives) that checkpointing the layers trades for recomputation.
"""

from __future__ import annotations

import numpy as np

DEPTH, BATCH, WIDTH = 32, 512, 128


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


def _jax_residual_bytes(jax, f, *args) -> int:
    from jax._src.ad_checkpoint import saved_residuals  # the oracle's own accounting
    return sum(int(np.prod(aval.shape)) * aval.dtype.itemsize
               for aval, _ in saved_residuals(f, *args))


def run() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    rng = np.random.default_rng(0)
    Ws = [(rng.normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
          for _ in range(DEPTH)]
    x = rng.normal(size=(BATCH, WIDTH)).astype(np.float32)
    rows = []
    plain = lambda f: f
    cases = (("no checkpoint", plain, plain, 1),
             ("checkpoint every layer", yax.checkpoint, jax.checkpoint, 1),
             ("checkpoint blocks of 4", yax.checkpoint, jax.checkpoint, 4))
    for label, ywrap, jwrap, block in cases:
        yf, jf = _net(ynp, ywrap, block), _net(jnp, jwrap, block)
        ystats = yax.jit(yax.grad(yf)).lower(Ws, x).compile().memory_analysis()
        jstats = jax.jit(jax.grad(jf)).lower(Ws, x).compile().memory_analysis()
        rows.append({
            "name": f"grad, {DEPTH} layers {BATCH}x{WIDTH}, {label}",
            "yax_temp": ystats["temp_bytes"], "jax_temp": jstats.temp_size_in_bytes,
            "yax_res": yax.saved_residuals(yf, Ws, x, compare_checkpoint=False).total_bytes,
            "jax_res": _jax_residual_bytes(jax, jf, Ws, x),
            "yax_args": ystats["argument_bytes"], "jax_args": jstats.argument_size_in_bytes,
        })
    return rows


def print_table(rows) -> None:
    mib = 1 / 2 ** 20
    print(f"{'memory (MiB)':52s} {'yax temp':>9s} {'jax temp':>9s} {'yax res':>8s} "
          f"{'jax res':>8s} {'args':>6s}")
    for r in rows:
        print(f"{r['name']:52s} {r['yax_temp'] * mib:9.2f} {r['jax_temp'] * mib:9.2f} "
              f"{r['yax_res'] * mib:8.2f} {r['jax_res'] * mib:8.2f} {r['yax_args'] * mib:6.2f}")


if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    print_table(run())
