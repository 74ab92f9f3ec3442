"""Host callbacks: one `debug.print` per call inside a jitted function, yax vs jax.

Printed text goes to an in-memory buffer, so the figure is the callback machinery (the custom
call, the host round trip, formatting) rather than the terminal. A plain jitted call is timed too,
so the print's own overhead can be read off for each library.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np

from benchmarks.common import compare


def _fns(lib, np_mod):
    def with_print(x):
        lib.debug.print("x = {}", x)
        return x + 1

    def plain(x):
        return x + 1
    return lib.jit(with_print), lib.jit(plain)


def run() -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    x_np = np.arange(8, dtype=np.float32)
    xy, xj = yax.device_put(x_np), jax.device_put(x_np)
    py, qy = _fns(yax, ynp)
    pj, qj = _fns(jax, jnp)
    with contextlib.redirect_stdout(io.StringIO()):
        printed = compare("jit with one debug.print per call",
                          lambda: yax.block_until_ready(py(xy)),
                          lambda: jax.block_until_ready(pj(xj)), number=300, rounds=5)
    plain = compare("same jit without the print", lambda: yax.block_until_ready(qy(xy)),
                    lambda: jax.block_until_ready(qj(xj)), number=300, rounds=5)
    overhead = {"name": "debug.print overhead (with - without)",
                "yax_us": printed["yax_us"] - plain["yax_us"],
                "jax_us": printed["jax_us"] - plain["jax_us"]}
    overhead["ratio"] = overhead["yax_us"] / max(overhead["jax_us"], 1e-9)
    return [printed, plain, overhead]


if __name__ == "__main__":
    from benchmarks.common import print_table
    print_table(run())
