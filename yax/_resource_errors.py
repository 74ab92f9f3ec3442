"""Clear errors for allocations that cannot be satisfied (docs/threads.md, "Faults").

An array that does not fit raises `DeviceOutOfMemoryError` (a `YaxError` and a `MemoryError`)
naming its shape, dtype and bytes, instead of NumPy's host `MemoryError` or XLA's bare
`RESOURCE_EXHAUSTED: Out of memory allocating N bytes`. Nothing is left allocated and yax keeps
working. Two tools:

- `check_allocation(shape, dtype, what)`: refuse, before anything is allocated, an array larger
  than the device's whole memory (on CPU: the machine's physical memory). This keeps a typo such
  as `jnp.zeros((2**40,))` from touching memory at all, even where the OS overcommits.
- `raise_if_out_of_memory(exc, avals, what)`: in an `except` clause around a transfer or an
  execute, turn an out-of-memory error into `DeviceOutOfMemoryError` (the cost is paid only
  when an exception is already being handled).
"""

from __future__ import annotations

import math
import os

import numpy as np

from yax import errors

_capacity: dict = {}  # device (or None: the host) -> bytes; filled once per device, lock-free

_OOM_MARKERS = ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory", "OOM")


def capacity_bytes(device=None) -> int | None:
    """The memory of `device` in bytes (PJRT's `bytes_limit`), or the host's physical memory
    for a CPU device or None; None when it cannot be told."""
    hit = _capacity.get(device, -1)
    if hit != -1:
        return hit
    limit = None
    stats = getattr(device, "memory_stats", None)
    try:
        stats = stats() if stats is not None else None
    except Exception:  # some PJRT plugins do not implement memory stats
        stats = None
    if stats:
        limit = stats.get("bytes_limit") or None
    if limit is None:
        limit = _host_memory_bytes()
    return _capacity.setdefault(device, limit)


def _host_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX
        return None


def nbytes(shape, dtype) -> int:
    return math.prod(int(d) for d in shape) * np.dtype(dtype).itemsize


def format_bytes(n: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit} ({n} bytes)"
    return f"{n} bytes"


def _describe(shapes_dtypes) -> tuple[str, int]:
    parts, total = [], 0
    for shape, dtype in shapes_dtypes:
        dt = np.dtype(dtype)
        total += nbytes(shape, dt)
        parts.append(f"{dt.name}[{','.join(str(int(d)) for d in shape)}]")
    return ", ".join(parts), total


def out_of_memory_error(shapes_dtypes, what: str, detail: str = ""):
    """The `DeviceOutOfMemoryError` for arrays `[(shape, dtype), ...]` made by `what`."""
    arrays, total = _describe(shapes_dtypes)
    cap = capacity_bytes()
    have = f" (the device has {format_bytes(cap)} in all)" if cap else ""
    extra = f" The runtime said: {detail}" if detail else ""
    return errors.DeviceOutOfMemoryError(
        f"{what}: cannot allocate {arrays}, {format_bytes(total)}{have}. Use smaller shapes (a "
        f"typo in a shape is the usual cause), a smaller batch, or free arrays you no longer "
        f"need (`del x`). Nothing was allocated; yax keeps working.{extra}")


def check_allocation(shape, dtype, what: str, device=None) -> None:
    """Raise `DeviceOutOfMemoryError` if one array of `shape`/`dtype` exceeds the device's
    whole memory (it could never be allocated)."""
    cap = capacity_bytes(device)
    if cap is not None and nbytes(shape, dtype) > cap:
        raise out_of_memory_error([(shape, dtype)], what)


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is a host or runtime out-of-memory error (not already yax's)."""
    if isinstance(exc, errors.DeviceOutOfMemoryError):
        return False
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, RuntimeError) and any(m in str(exc) for m in _OOM_MARKERS)


def _is_xla_runtime_error(exc: BaseException) -> bool:
    """jaxlib's own runtime error class (read by name: only the runtime floor imports jaxlib;
    jax renames its module to jax.errors)."""
    kind = type(exc)
    return kind.__name__ == "JaxRuntimeError" and kind.__module__.split(".")[0] in ("jax",
                                                                                   "jaxlib")


def raise_if_out_of_memory(exc: BaseException, avals, what: str) -> None:
    """Call in an `except` clause: re-raise an out-of-memory `exc` as `DeviceOutOfMemoryError`
    naming `avals` (anything with .shape and .dtype, or (shape, dtype) pairs), and any other
    failure XLA's runtime reported as `yax.errors.JaxRuntimeError` (the original is its
    `__cause__`); else return so the caller re-raises `exc` unchanged."""
    if not is_out_of_memory(exc):
        if _is_xla_runtime_error(exc):
            raise errors.JaxRuntimeError(f"{what}: {exc}") from exc
        return
    pairs = [(a.shape, a.dtype) if hasattr(a, "shape") else tuple(a) for a in avals]
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    raise out_of_memory_error(pairs, what, detail) from exc
