"""`default_device` blocks place computations as jax does: warm and first `jit` calls, eager
ops and array creation on uncommitted values run on the block's device; committed values keep
theirs; `config.default_device` does the same process-wide; leaving the block restores
everything. One child process on 2 CPU devices runs the same program with jax and with yax."""

from __future__ import annotations

from tests.multidevice import run_on_devices

CHILD = r'''
import threading
import numpy as np

def program(jax):
    jnp = jax.numpy
    d0, d1 = jax.devices()
    where = lambda y: sorted(d.id for d in y.devices())  # noqa: E731
    out = []
    x = jnp.arange(4.0)
    f = jax.jit(lambda x: x * 2)
    g = jax.jit(lambda x: x + 1)
    h = jax.jit(lambda x, y: x * y)
    out.append(("before", where(f(x))))
    committed = jax.device_put(jnp.arange(4.0), d0)
    with jax.default_device(d1):
        out.append(("warm jit", where(f(x)), np.asarray(f(x)).tolist()))
        out.append(("first jit", where(g(x)), np.asarray(g(x)).tolist()))
        out.append(("again", where(g(x))))
        out.append(("eager", where(jnp.sin(x)), where(x * 3), where(x + x)))
        out.append(("create", where(jnp.ones(3)), where(jnp.arange(3))))
        out.append(("committed jit", where(f(committed)), where(h(committed, x))))
        out.append(("committed eager", where(committed * 2), where(committed + x)))
        out.append(("grad", where(jax.grad(lambda x: jnp.sum(jnp.sin(x)))(x))))
        out.append(("jit grad", where(jax.jit(jax.grad(lambda x: jnp.sum(x ** 2)))(x))))
        out.append(("vmap", where(jax.vmap(f)(jnp.ones((2, 4))))))
        seen = []
        t = threading.Thread(target=lambda: seen.append(where(f(x))))  # another thread:
        t.start(); t.join()                                             # not in the block
        out.append(("thread", seen))
    out.append(("after", where(f(x)), where(g(x)), where(jnp.sin(x))))
    jax.config.update("jax_default_device", d1)
    try:
        out.append(("config", where(f(x)), where(jnp.cos(x)), where(jnp.zeros(2))))
    finally:
        jax.config.update("jax_default_device", None)
    out.append(("config reset", where(f(x)), where(jnp.cos(x))))
    return out

import jax, yax
want, got = program(jax), program(yax)
for w, g in zip(want, got):
    print("ROW", w[0], "OK" if list(w) == list(g) else f"DIFF jax {w} yax {g}")
'''


def test_default_device_blocks_place_as_jax():
    out = run_on_devices(CHILD, n=2, timeout=300)
    rows = [line for line in out.splitlines() if line.startswith("ROW ")]
    assert len(rows) == 15, out
    bad = [r for r in rows if not r.endswith(" OK")]
    assert not bad, "\n".join(bad)
