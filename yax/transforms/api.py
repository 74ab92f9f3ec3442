"""Small public helpers: device_put/device_get, block_until_ready, devices, eval_shape,
clear_caches, disable_jit."""

from __future__ import annotations

import contextlib

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
    """The devices of `platform` (default: the backend in use), as jaxlib Device objects."""
    return backend.devices(platform)


def default_backend() -> str:
    """The backend in use: "cpu", or "gpu" when one is present (`YAX_PLATFORM` overrides)."""
    return backend.platform()


def eval_shape(fun, *args, **kwargs):
    """The output avals (shape, dtype) of `fun(*args)` without running it."""
    from yax.transforms.jit import jit
    return jit(fun).eval_shape(*args, **kwargs)


def clear_caches() -> None:
    """Free every in-memory cache of traced and compiled programs.

    Empties the caches of all jitted functions (they retrace on their next call), the eager
    executable cache, the transformation-rule cache and the compile-level caches. The persistent
    compilation cache on disk (`config.compilation_cache_dir`) is left as it is.
    """
    from yax.interpreters import rule_cache
    from yax.primitives import call
    from yax.runtime import executable
    from yax.transforms import jit

    jit.clear_all()
    eager.clear_cache()
    rule_cache.clear()
    call.clear_compiled()
    executable.clear_caches()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run their Python directly (op by op), for debugging.

    Example:
      >>> with yax.disable_jit():
      ...     f(x)  # print() inside f shows concrete values
    """
    from yax.config import config

    old = config.disable_jit
    config.update("disable_jit", bool(disable))
    try:
        yield
    finally:
        config.update("disable_jit", old)
