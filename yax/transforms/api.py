"""Small public helpers: device_put/device_get, block_until_ready, devices, eval_shape."""

from __future__ import annotations

import numpy as np

from yax import tree_util
from yax.core.trace import Tracer
from yax.interpreters import eager
from yax.runtime import backend
from yax.runtime.array import Array


def device_put(x, device=None):
    """Copy a pytree of arrays to `device` (default: the first device of the backend)."""
    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        if type(leaf) is Array and device is None:
            return leaf
        if type(leaf) is Array:
            return eager.array_from_numpy(np.asarray(leaf), weak_type=leaf.weak_type,
                                          device=device)
        return eager.array_from_numpy(np.asarray(leaf), device=device)
    return tree_util.tree_map(put, x)


def device_get(x):
    """Fetch a pytree of Arrays to NumPy arrays on the host."""
    return tree_util.tree_map(lambda a: np.asarray(a) if type(a) is Array else a, x)


def block_until_ready(x):
    """Wait until every Array in the pytree `x` is computed; returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        if type(leaf) is Array:
            leaf.block_until_ready()
    return x


def devices(platform: str | None = None) -> list:
    return backend.devices(platform)


def default_backend() -> str:
    return backend.platform()


def eval_shape(fun, *args, **kwargs):
    """The output avals (shape, dtype) of `fun(*args)` without running it."""
    from yax.transforms.jit import jit
    return jit(fun).eval_shape(*args, **kwargs)
