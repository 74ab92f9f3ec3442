"""yax.export beside jax.export: export (trace and lower), serialize, deserialize and call of a
small MLP, for a concrete shape and for a symbolic batch dimension.

jax's serialize/deserialize need the `flatbuffers` package; without it those two rows time yax
alone (jax_us is then reported as NaN). Each export row builds a fresh `jit` so no trace cache
is hit; `call` rows time a call of an already-compiled export.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from benchmarks.common import compare, time_call

_W1 = np.linspace(-1, 1, 16 * 32, dtype=np.float32).reshape(16, 32)
_W2 = np.linspace(-1, 1, 32 * 4, dtype=np.float32).reshape(32, 4)


def _mlp(m):
    def f(x):
        return m.tanh(m.tanh(x @ _W1) @ _W2).sum(axis=1)
    return f


def _yax_only(name, fn, number) -> dict:
    fn()
    us = min(time_call(fn, number) for _ in range(3)) * 1e6
    return {"name": name, "yax_us": us, "jax_us": float("nan"), "ratio": float("nan")}


def run() -> list:
    import jax
    import jax.export
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp
    from yax import export as yexport

    x = np.ones((8, 16), np.float32)
    fy, fj = _mlp(ynp), _mlp(jnp)
    sy, sj = yax.ShapeDtypeStruct(x.shape, np.float32), jax.ShapeDtypeStruct(x.shape, np.float32)
    rows = [compare("export: trace + lower an MLP (f32[8,16])",
                    lambda: yexport.export(yax.jit(fy))(sy),
                    lambda: jax.export.export(jax.jit(fj))(sj), number=20, rounds=3)]
    ey, ej = yexport.export(yax.jit(fy))(sy), jax.export.export(jax.jit(fj))(sj)
    by = ey.serialize()
    if importlib.util.find_spec("flatbuffers") is not None:
        bj = ej.serialize()
        rows.append(compare("export: serialize", ey.serialize, ej.serialize, number=200,
                            rounds=3))
        rows.append(compare("export: deserialize", lambda: yexport.deserialize(by),
                            lambda: jax.export.deserialize(bj), number=100, rounds=3))
    else:
        rows.append(_yax_only("export: serialize (yax only: no flatbuffers)", ey.serialize, 200))
        rows.append(_yax_only("export: deserialize (yax only: no flatbuffers)",
                              lambda: yexport.deserialize(by), 100))
    again = yexport.deserialize(by)
    xj = jax.device_put(x)
    rows.append(compare("export: call of a deserialized export",
                        lambda: yax.block_until_ready(again.call(x)),
                        lambda: jax.block_until_ready(ej.call(xj)), number=200, rounds=3))
    (b, _), (jb, _) = yexport.symbolic_shape("b, 16"), jax.export.symbolic_shape("b, 16")
    py, pj = yax.ShapeDtypeStruct((b, 16), np.float32), jax.ShapeDtypeStruct((jb, 16), np.float32)
    rows.append(compare("export: trace + lower, symbolic batch (b, 16)",
                        lambda: yexport.export(yax.jit(fy))(py),
                        lambda: jax.export.export(jax.jit(fj))(pj), number=20, rounds=3))
    ply, plj = yexport.export(yax.jit(fy))(py), jax.export.export(jax.jit(fj))(pj)
    rows.append(compare("export: call, symbolic batch, shape seen before",
                        lambda: yax.block_until_ready(ply.call(x)),
                        lambda: jax.block_until_ready(plj.call(xj)), number=200, rounds=3))
    return rows


if __name__ == "__main__":
    from benchmarks.common import print_table
    print_table(run())
