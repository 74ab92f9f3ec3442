"""Small public helpers: device_put/device_get, block_until_ready, devices, eval_shape,
clear_caches, disable_jit."""

from __future__ import annotations

import contextlib

import numpy as np

from yax import tree_util
from yax.compile import cache as compile_cache
from yax.config import config
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.trace import Tracer
from yax.runtime import backend as _backend
from yax.runtime import executable, guards, transfer, values
from yax.runtime.array import Array
from yax.runtime.named_sharding import (
    NamedSharding,
    Sharding,
    SingleDeviceSharding,
    on_current_mesh,
    type_sharding,
)
from yax.runtime.partition_spec import PartitionSpec
from yax.transforms.jit import jit


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Copy a pytree of arrays to a device or a sharding.

    Args:
      x: a pytree of arrays (yax Arrays, NumPy arrays, scalars).
      device: None (Arrays stay where they are, other values go to the default device), a
        device from `yax.devices()`, a yax sharding (`NamedSharding`, `SingleDeviceSharding`),
        a `PartitionSpec` over the mesh set with `yax.set_mesh`, or a pytree prefix of `x`
        holding those.
    Returns:
      The same pytree of Arrays; those placed explicitly are *committed*. An Array already
      placed elsewhere is moved or resharded (its values are kept: shards are gathered and
      re-split). `src`, `donate` and `may_alias` are accepted as JAX's; yax always copies
      (no buffer is donated or aliased), so they change nothing.

    Example:
      >>> mesh = yax.make_mesh((8,), ("data",))
      >>> x = yax.device_put(np.zeros((16, 4)), NamedSharding(mesh, P("data")))
    """
    del src, donate, may_alias
    with guards.explicit():  # the transfer guards' "explicit" transfers
        if _is_target(device):
            return tree_util.tree_map(lambda leaf: _put_leaf(leaf, device), x)
        # a prefix pytree of targets: broadcast each target over its subtree of x
        return tree_util.tree_map(lambda target, sub: tree_util.tree_map(
            lambda leaf: _put_leaf(leaf, target), sub), device, x,
            is_leaf=lambda v: v is None or _is_target(v))


def _is_target(t) -> bool:
    return (t is None or isinstance(t, (Sharding, PartitionSpec))
            or hasattr(t, "client") and hasattr(t, "id"))


def _resolve_spec(target):
    """A bare PartitionSpec names axes of the mesh set with `yax.set_mesh` (or `with mesh:`),
    as in jax: it stands for NamedSharding(that mesh, spec)."""
    if not isinstance(target, PartitionSpec):
        return target
    return on_current_mesh(target, "device_put")


def _put_leaf(leaf, target):
    if isinstance(leaf, Tracer):
        return leaf
    target = _resolve_spec(target)
    if target is None:
        if type(leaf) is Array:
            return leaf
        return values.array_from_numpy(np.asarray(leaf))
    weak = leaf.weak_type if type(leaf) is Array else False
    if isinstance(target, SingleDeviceSharding):
        target = next(iter(target.device_set))
    if isinstance(target, Sharding):
        return _put_sharded(leaf, target, weak)
    if not _is_target(target):
        raise TypeError(f"device_put places values on a device (from yax.devices()), a yax "
                        f"sharding (yax.sharding.NamedSharding, SingleDeviceSharding) or None, "
                        f"not {target!r}")
    if type(leaf) is Array and leaf._buf.sharding.device_set == {target}:
        out = Array(leaf._buf, leaf.aval)
    elif type(leaf) is Array:
        with guards.between_devices(lambda: f"{leaf._describe()} to {target}"):
            out = values.array_from_numpy(np.asarray(leaf), weak_type=weak, device=target)
    else:
        out = values.array_from_numpy(np.asarray(leaf), weak_type=weak, device=target)
    out._committed = True
    return out


def _put_sharded(leaf, sharding, weak: bool) -> Array:
    out = _put_sharded_untyped(leaf, sharding, weak)
    typed = type_sharding(sharding, out.ndim)  # its sharding over Explicit axes is its type
    if typed != out.aval.sharding:
        out.aval = out.aval.update(sharding=typed)
    return out


def _put_sharded_untyped(leaf, sharding, weak: bool) -> Array:
    if getattr(getattr(sharding, "spec", None), "unreduced", None):
        return _put_unreduced(leaf, sharding, weak)
    if type(leaf) is Array and leaf.sharding == sharding:
        out = Array(leaf._buf, leaf.aval)
    elif type(leaf) is Array and sharding.is_equivalent_to(leaf.sharding, leaf.ndim):
        # the same blocks under the name asked for (P('x', None) for P('x')): no copy
        out = Array(transfer.relabel(leaf._buf, sharding, leaf.shape, leaf.dtype), leaf.aval)
    else:
        with _moving(leaf, sharding):
            value = np.asarray(leaf)  # a sharded Array is gathered here, then re-split
            dt = dtypes.canonicalize(value.dtype, warn=True)
            if dt != value.dtype:
                value = value.astype(dt)
            if hasattr(sharding, "check_shape"):
                sharding.check_shape(value.shape, "the array given to device_put")
            out = Array(transfer.device_put_sharded(value, sharding),
                        ShapedArray(value.shape, dt, weak))
    out._committed = True
    return out


def _put_unreduced(leaf, sharding, weak: bool) -> Array:
    """Each device along the unreduced axes holds a summand (see transfer.device_put_unreduced)."""
    held = None
    if type(leaf) is Array and isinstance(leaf.sharding, NamedSharding) and (
            leaf.sharding.mesh.axis_names == sharding.mesh.axis_names):
        held = leaf.sharding.spec
    with _moving(leaf, sharding):
        value = np.asarray(leaf)
        dt = dtypes.canonicalize(value.dtype, warn=True)
        value = value.astype(dt) if dt != value.dtype else value
        sharding.check_shape(value.shape, "the array given to device_put")
        out = Array(transfer.device_put_unreduced(value, sharding, held),
                    ShapedArray(value.shape, dt, weak))
    out._committed = True
    return out


def _moving(leaf, sharding):
    """An Array resharded is a device-to-device transfer (other values: host-to-device)."""
    if type(leaf) is Array:
        return guards.between_devices(lambda: f"{leaf._describe()} to {sharding}")
    guards.check("host_to_device", lambda: f"aval={values.aval_of(leaf).str_short()}, "
                                           f"sharding={sharding}")
    return contextlib.nullcontext()


def device_get(x):
    """Fetch a pytree of Arrays to NumPy arrays on the host (sharded Arrays are gathered)."""
    with guards.explicit():  # the transfer guards' "explicit" transfers
        return tree_util.tree_map(lambda a: np.asarray(a) if type(a) is Array else a, x)


def block_until_ready(x):
    """Wait until every Array in the pytree `x` is computed; returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        if type(leaf) is Array:
            leaf.block_until_ready()
    return x


def devices(backend: str | None = None) -> list:
    """Every device of `backend` (default: the backend in use), in id order, across all
    processes. `XLA_FLAGS=--xla_force_host_platform_device_count=N` (set before yax starts)
    gives N CPU devices for development and tests."""
    return _backend.devices(backend)


def device_count(backend: str | None = None) -> int:
    """How many devices `backend` has, across all processes."""
    return len(_backend.devices(backend))


def local_devices(process_index: int | None = None, backend: str | None = None) -> list:
    """The devices driven by process `process_index` (default: this process)."""
    if process_index is None:
        return _backend.local_devices(backend)
    return [d for d in _backend.devices(backend)
            if getattr(d, "process_index", 0) == process_index]


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process drives."""
    return len(_backend.local_devices(backend))


def process_index(backend: str | None = None) -> int:
    """This process's index in a multi-process run (0 in a single-process run)."""
    return _backend.process_index(backend)


def process_count(backend: str | None = None) -> int:
    """How many processes take part (1 unless `yax.distributed.initialize` ran)."""
    return _backend.process_count(backend)


def default_device(device):
    """A context manager: within the block, values with no placement of their own (new arrays,
    eager results of uncommitted inputs) go to `device`. Per thread. For a process-wide choice,
    `yax.config.update("jax_default_device", device)`.

    Example:
      >>> with yax.default_device(yax.devices()[1]):
      ...     x = jnp.ones(3)          # on device 1
    """
    return _backend.default_device_scope(device)


def default_backend() -> str:
    """The backend in use: "cpu", or "gpu" when one is present (`YAX_PLATFORM` overrides)."""
    return _backend.platform()


def eval_shape(fun, *args, **kwargs):
    """The outputs of `fun(*args)` as `ShapeDtypeStruct`s (shape, dtype, weak type), without
    running it; arguments may be arrays or `ShapeDtypeStruct`s.

    Example:
      >>> yax.eval_shape(lambda x: x * 2, yax.ShapeDtypeStruct((3,), "float32"))
      ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    return jit(fun).eval_shape(*args, **kwargs)


def clear_caches() -> None:
    """Free every in-memory cache of traced and compiled programs.

    Empties the caches of all jitted functions (they retrace on their next call), the eager
    executable cache, the transformation-rule cache and the compile-level caches. The persistent
    compilation cache on disk (`config.compilation_cache_dir`) is left as it is.
    """
    compile_cache.clear_all()  # every registered cache (jit, eager, traced functions, rules, ...)
    executable.clear_caches()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run their Python directly (op by op), for debugging.

    Example:
      >>> with yax.disable_jit():
      ...     f(x)  # print() inside f shows concrete values
    """

    old = config.disable_jit
    config.update("disable_jit", bool(disable))
    try:
        yield
    finally:
        config.update("disable_jit", old)
