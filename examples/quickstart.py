"""yax quickstart: one small program run eagerly, shown as a jaxpr and as StableHLO, then jitted.

Run with `python examples/quickstart.py` (`make demo` runs examples/mlp_digits.py).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402


def predict(params, x):
    """A two-layer perceptron with a softmax output."""
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logits = logits - jnp.max(logits, axis=-1, keepdims=True)
    return jnp.exp(logits) / jnp.sum(jnp.exp(logits), axis=-1, keepdims=True)


def timed(fn, *args, repeat: int = 50):
    fn(*args)  # first call: trace + compile
    start = time.perf_counter()
    for _ in range(repeat):
        out = fn(*args)
    yax.block_until_ready(out)
    return out, (time.perf_counter() - start) / repeat


def main() -> None:
    rng = np.random.default_rng(0)
    params = [jnp.asarray(rng.normal(size=s).astype(np.float32) * 0.5)
              for s in [(4, 16), (16,), (16, 3), (3,)]]
    x = jnp.asarray(rng.normal(size=(8, 4)).astype(np.float32))

    print(f"backend: {yax.default_backend()}")
    eager_out, eager_t = timed(predict, params, x)
    print("\n== eager ==")
    print(eager_out[:2])
    print(f"rows sum to one: {np.allclose(np.sum(eager_out, axis=1), 1.0, atol=1e-5)}")

    print("\n== jaxpr ==")
    print(yax.make_jaxpr(predict)(params, x))

    fast = yax.jit(predict)
    print("\n== StableHLO ==")
    print(fast.lower(params, x).as_text())

    start = time.perf_counter()
    fast(params, x).block_until_ready()
    first = time.perf_counter() - start
    jit_out, jit_t = timed(fast, params, x)
    print("== jit ==")
    print(f"eager and jit agree: {np.allclose(eager_out, jit_out, atol=1e-6)}")
    print(f"eager call: {eager_t * 1e3:8.3f} ms   (one cached executable per primitive)")
    print(f"jit first call (trace + compile): {first * 1e3:8.3f} ms")
    print(f"jit call:   {jit_t * 1e3:8.3f} ms   traces={fast.trace_count} "
          f"compiles={fast.compile_count}")


if __name__ == "__main__":
    main()
