"""Transfer guards: log or refuse copies between the host and devices (`yax.transfer_guard`).

Three directions, each with its own level (config `transfer_guard_host_to_device`, ...):
host-to-device (NumPy data or a Python scalar becoming an Array), device-to-host (an Array read
as NumPy: `np.asarray`, `float`, printing, `device_get`) and device-to-device (an Array copied
to another device). A transfer is *explicit* when the user asked for it (`yax.device_put`,
`yax.device_get`), else *implicit*. Levels: "allow" (None: the default), "log" and "disallow"
(implicit transfers only), "log_explicit" and "disallow_explicit" (every transfer). A refused
transfer raises `yax.errors.JaxRuntimeError` naming it; a logged one is a warning on the "yax"
logger.

The checks sit where the runtime copies data (values.array_from_numpy, Array's host copy, the
moves between devices), so they cost one dictionary read when no guard is set.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from yax import errors
from yax.config import config

_log = logging.getLogger("yax")

DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")
_levels = {d: None for d in DIRECTIONS}  # mirrors the config; None: "allow"


def _sync(name: str) -> None:
    if name.startswith("transfer_guard"):
        for d in DIRECTIONS:
            level = getattr(config, f"transfer_guard_{d}")
            _levels[d] = None if level in (None, "allow") else level


config.on_change(_sync)
_sync("transfer_guard")


class _Scope(threading.local):
    explicit = 0   # inside device_put/device_get: transfers are explicit
    moving = 0     # inside a device-to-device copy (made through the host): only d2d counts


_scope = _Scope()


@contextlib.contextmanager
def explicit():
    """Transfers made inside are explicit (the user asked for them)."""
    _scope.explicit += 1
    try:
        yield
    finally:
        _scope.explicit -= 1


@contextlib.contextmanager
def between_devices(describe):
    """A device-to-device copy (`describe()` names it): checked once as such; its trip through
    the host is not a host transfer of its own."""
    check("device_to_device", describe)
    _scope.moving += 1
    try:
        yield
    finally:
        _scope.moving -= 1


_HINTS = {
    "host_to_device": "place the value with yax.device_put first",
    "device_to_host": "fetch it with yax.device_get",
    "device_to_device": "move it with yax.device_put(x, device)",
}


def check(direction: str, describe) -> None:
    """Apply the guard of `direction` to one transfer; `describe()` gives its aval and place."""
    level = _levels[direction]
    if level is None or (_scope.moving and direction != "device_to_device"):
        return
    is_explicit = _scope.explicit > 0
    if is_explicit and level in ("log", "disallow"):
        return
    what = f"{direction.replace('_', '-')} transfer: {describe()}"
    if level.startswith("log"):
        _log.warning(what)
        return
    kind = "an explicit" if is_explicit else "an implicit"
    hint = ";" if is_explicit else f"; {_HINTS[direction]}, or"
    raise errors.JaxRuntimeError(
        f"Disallowed {what} ({kind} transfer, refused by transfer_guard_{direction}="
        f"{level!r}{hint} allow it with `yax.transfer_guard_{direction}('allow')`)")
