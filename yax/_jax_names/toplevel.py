"""Top-level jax names yax offers beside its transformations: the process queries under their
older names (`host_count`, `host_id`, `host_ids`) and `process_indices`, `float0`,
`named_call`, `print_environment_info`, and the debugging helpers `live_arrays` and
`copy_to_host_async`."""

from __future__ import annotations

import functools
import os
import platform
import sys
import warnings
from importlib import metadata

import numpy as np

from yax import tree_util
from yax._version import __version__
from yax.dtypes import float0
from yax.runtime import backend as _runtime
from yax.runtime.array import live_arrays
from yax.transforms.tracing import named_scope

__all__ = ["copy_to_host_async", "float0", "host_count", "host_id", "host_ids", "live_arrays",
           "named_call", "print_environment_info", "process_indices"]


def copy_to_host_async(x):
    """Start the host copy of every Array leaf of the pytree `x` (other leaves are left alone),
    so that reading them later (`np.asarray`, `device_get`) does not wait; returns `x`.

    Example:
      >>> out = yax.copy_to_host_async(f(x))   # the copies run while Python goes on
      >>> np.asarray(out)                      # no wait for the transfer here
    """
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of all processes of the runtime (one process: `[0]`)."""
    return list(range(_runtime.process_count(backend)))


def host_count(backend: str | None = None) -> int:
    """Deprecated name of `process_count`, as in jax."""
    warnings.warn("jax.host_count has been renamed to jax.process_count. This alias will "
                  "eventually be removed; please update your code.", stacklevel=2)
    return _runtime.process_count(backend)


def host_id(backend: str | None = None) -> int:
    """Deprecated name of `process_index`, as in jax."""
    warnings.warn("jax.host_id has been renamed to jax.process_index. This alias will "
                  "eventually be removed; please update your code.", stacklevel=2)
    return _runtime.process_index(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """Deprecated name of `process_indices`, as in jax."""
    warnings.warn("jax.host_ids has been renamed to jax.process_indices. This alias will "
                  "eventually be removed; please update your code.", stacklevel=2)
    return process_indices(backend)


def named_call(fun, *, name: str | None = None):
    """`fun` with its staged equations under the name scope `name` (default: its __name__),
    so the name shows in printed jaxprs' source info, HLO metadata and profiles."""
    name = fun.__name__ if name is None else name

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(name):
            return fun(*args, **kwargs)
    return named


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def print_environment_info(return_string: bool = False) -> str | None:
    """yax's, jaxlib's, NumPy's and Python's versions, the devices and the platform, and the
    YAX_/JAX_/XLA_ environment variables: what to include in a bug report."""
    backend = _runtime
    devices = backend.devices()
    info = "\n".join([
        f"yax:    {__version__}",
        f"jaxlib: {_version('jaxlib')}",
        f"numpy:  {np.__version__}",
        f"python: {sys.version.replace(chr(10), ' ')}",
        f"device info: {devices[0].device_kind}-{len(devices)}, "
        f"{len(backend.local_devices())} local devices",
        f"process_count: {backend.process_count()}",
        f"platform: {platform.uname()}",
    ])
    for key, value in os.environ.items():
        if key.startswith(("YAX_", "JAX_", "XLA_")):
            info += f"\n{key}={value}"
    if return_string:
        return info
    print(info)
    return None
