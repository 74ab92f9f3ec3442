"""Compiled kernels of the samplers, one `yax.jit` function per static configuration.

Each public sampler checks its arguments in Python and then calls `kernel(*arrays, **static)`.
Keeping one jitted function per static configuration (shape, dtype, mode, ...) means the jitted
function has no static arguments, so an eager call with Array arguments takes jit's fast path:
one dictionary lookup and one executable call. Under an enclosing transformation the kernel is
staged as a `pjit` like any jitted function, so it fuses into the caller's program.
"""

from __future__ import annotations

from yax.compile.when_eager import CompiledVariants
from yax.transforms.jit import jit


class Kernel:
    """`Kernel(fun)(*dynamic, **static)` runs `jit(lambda *d: fun(*d, **static))(*dynamic)`,
    with the jitted function cached per `static`."""

    def __init__(self, fun):
        self._fun = fun
        self._jitted = CompiledVariants(fun.__name__, jit)

    def __call__(self, *dynamic, **static):
        key = tuple(static.items())
        jitted = self._jitted.get(key)
        if jitted is None:  # threads racing on a new key share the first one made
            jitted = self._jitted.get_or_make(key, lambda: self._bind(static))
        return jitted(*dynamic)

    def _bind(self, static: dict):
        fun = self._fun

        def kernel(*dynamic):
            return fun(*dynamic, **static)

        kernel.__name__ = kernel.__qualname__ = fun.__name__.lstrip("_") or "random"
        return kernel
