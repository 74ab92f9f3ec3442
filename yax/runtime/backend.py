"""Backend choice: CPU by default, the GPU when one is present, `YAX_PLATFORM` to override."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import threading

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import jax as _jax  # noqa: E402  (the runtime's real jax: its config and backends)
import jax.extend.backend as _jax_backend  # noqa: E402
from jaxlib._jax import Device  # noqa: E402,F401  (the class of devices(): jax.Device)

from yax.config import config  # noqa: E402
from yax.runtime import cpu_warmup  # noqa: E402

# As early as the runtime can (jax is imported: the warm-up's results are its arrays), so that
# oneDNN's one-time kernel generation overlaps the rest of `import yax` (runtime/cpu_warmup.py).
cpu_warmup.start_at_import()

_GPU_NAMES = ("cuda", "rocm", "gpu")


@functools.lru_cache(maxsize=None)
def _client(platform: str):
    if config.num_cpu_devices >= 0 and _jax.config.jax_num_cpu_devices != config.num_cpu_devices:
        # the real jax's CPU client reads its option when it starts; it refuses a late change
        _jax.config.update("jax_num_cpu_devices", int(config.num_cpu_devices))
    return _jax_backend.get_backend(platform)


@functools.lru_cache(maxsize=None)
def _autodetect() -> str:
    try:
        _client("gpu")
        return "gpu"
    except Exception:  # no GPU plugin or no device: CPU is always there
        return "cpu"


def platform() -> str:
    """The platform in use: config.platform (YAX_PLATFORM) if set, else gpu if present, else cpu."""
    requested = config.platform
    if requested:
        requested = requested.lower().split(",")[0]
        return "gpu" if requested in _GPU_NAMES else requested
    return _autodetect()


def client(name: str | None = None):
    name = name or platform()
    try:
        return _client(name)
    except Exception as e:
        raise RuntimeError(f"yax could not start the {name!r} backend ({e}); set YAX_PLATFORM=cpu "
                           f"or install a jax build for that platform") from e


def devices(name: str | None = None) -> list:
    return list(client(name).devices())


# `yax.default_device(dev)` blocks: per thread and per asyncio task (a context variable), so
# one thread's block never moves another thread's values.
_default_device_var: contextvars.ContextVar = contextvars.ContextVar("yax_default_device",
                                                                      default=None)


def default_device(name: str | None = None):
    """Where values with no placement go: the innermost `default_device` block, else
    `config.default_device` (`jax_default_device`), else the first device of the backend."""
    dev = _default_device_var.get()
    if dev is None:
        dev = config.default_device
    if dev is not None and (name is None or _platform_of(dev) == _canonical(name)):
        return dev
    return devices(name)[0]


# Whether any `default_device` block is open in any thread, or `config.default_device` is set:
# read by every eager op (one index), which then asks `device_override()` for its own thread.
override_active = [False]
_open_scopes = [0]
_scopes_lock = threading.Lock()
# jaxlib's C++ jit dispatch keys its cache on a thread-local value that mirrors this thread's
# override (installed by runtime/dispatch.py as `swap(device) -> previous`), so a warm call
# inside a block misses and the Python path places it.
_device_mirror = None


def set_device_mirror(swap) -> None:
    global _device_mirror
    _device_mirror = swap


def _refresh_override_flag(_name=None) -> None:
    override_active[0] = bool(_open_scopes[0]) or config.default_device is not None


config.on_change(_refresh_override_flag)


def device_override():
    """The device a `default_device` block or `config.default_device` asks for, else None
    (cheap: eager operations key their caches on it)."""
    dev = _default_device_var.get()
    return dev if dev is not None else config.default_device


def _canonical(name: str) -> str:
    name = name.lower()
    return "gpu" if name in _GPU_NAMES else name


def _platform_of(dev) -> str:
    return _canonical(getattr(dev, "platform", "cpu"))


@contextlib.contextmanager
def default_device_scope(device):
    """Within the block, `default_device()` is `device` (None: back to the usual choice)."""
    if device is not None and not hasattr(device, "id"):
        raise TypeError(f"default_device needs a device (from yax.devices()), got {device!r}")
    token = _default_device_var.set(device)
    with _scopes_lock:
        _open_scopes[0] += 1
        _refresh_override_flag()
    mirror = _device_mirror
    previous = mirror(device) if mirror is not None else None
    try:
        yield device
    finally:
        _default_device_var.reset(token)
        if mirror is not None:
            mirror(previous)
        with _scopes_lock:
            _open_scopes[0] -= 1
            _refresh_override_flag()


def process_index(name: str | None = None) -> int:
    """This process's index among the processes of a multi-process run (0 otherwise)."""
    try:
        return int(client(name).process_index())
    except Exception:  # a client without the notion: a single process
        return 0


def process_count(name: str | None = None) -> int:
    """How many processes share the devices (1 unless yax.distributed.initialize ran)."""
    return len({getattr(d, "process_index", 0) for d in devices(name)}) or 1


def local_devices(name: str | None = None) -> list:
    """The devices this process drives (all devices in a single-process run)."""
    try:
        return list(client(name).local_devices())
    except Exception:
        here = process_index(name)
        return [d for d in devices(name) if getattr(d, "process_index", 0) == here]


# Multi-process runs (yax.runtime.distributed): a client installed here, the distributed CPU
# client, takes the place of jax's for its platform; no other platform is started then.
_installed_clients: dict = {}
_client_from_jax = _client


def _client(platform: str):  # noqa: F811 -- wraps the cached one above
    if _installed_clients:
        if platform in _installed_clients:
            return _installed_clients[platform]
        raise RuntimeError(f"this multi-process run has only the {sorted(_installed_clients)} "
                           f"backend")
    return _client_from_jax(platform)


def _refuse_late_cpu_device_count(value) -> None:
    if has_client() and value != config.num_cpu_devices:
        raise RuntimeError(
            "num_cpu_devices (jax_num_cpu_devices) must be set before yax starts its backend, "
            "i.e. before the first operation: set it right after `import yax`, or set "
            "YAX_NUM_CPU_DEVICES in the environment")


def has_client() -> bool:
    """Whether a backend client already exists (yax.distributed.initialize must come first)."""
    return bool(_installed_clients or _client_from_jax.cache_info().currsize
                or _autodetect.cache_info().currsize)


def install_client(platform: str, new_client) -> None:
    """Use `new_client` for `platform` from now on (None removes it)."""
    _autodetect.cache_clear()
    if new_client is None:
        _installed_clients.pop(platform, None)
    else:
        _installed_clients[platform] = new_client


config.validate_with("num_cpu_devices", _refuse_late_cpu_device_count)
