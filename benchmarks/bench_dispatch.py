"""jit dispatch overhead and eager per-op overhead, yax vs jax."""

from __future__ import annotations

import numpy as np

from benchmarks.common import compare


def run() -> list:
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

    ty = yax.jit(lambda p: {"w": p["w"] * 2.0, "b": p["b"]})
    tj = jax.jit(lambda p: {"w": p["w"] * 2.0, "b": p["b"]})
    py, pj = {"w": xy, "b": xy}, {"w": xj, "b": xj}
    rows.append(compare("jit dispatch, dict pytree", lambda: ty(py), lambda: tj(pj)))

    rows.append(compare("eager op: add(x, x)", lambda: ynp.add(xy, xy), lambda: jnp.add(xj, xj)))
    rows.append(compare("eager op: x * 2.0 (operator)", lambda: xy * 2.0, lambda: xj * 2.0))
    rows.append(compare("eager op: sin(x)", lambda: ynp.sin(xy), lambda: jnp.sin(xj)))
    rows.append(compare("eager op: sum(x)", lambda: ynp.sum(xy), lambda: jnp.sum(xj),
                        number=500))
    return rows
