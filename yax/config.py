"""Global configuration: `yax.config.update("enable_x64", True)` and friends.

Flags are read from the environment once (YAX_ENABLE_X64, YAX_PLATFORM, YAX_CHECKS) and may be
changed at run time with `update`. The jit cache key includes `config.trace_state()`.
"""

from __future__ import annotations

import os


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class Config:
    def __init__(self):
        self.enable_x64 = _env_flag("YAX_ENABLE_X64")
        self.platform = os.environ.get("YAX_PLATFORM") or None
        self.enable_checks = _env_flag("YAX_CHECKS")
        self.large_jaxpr_warning = 10_000

    _KNOWN = ("enable_x64", "platform", "enable_checks", "large_jaxpr_warning")

    def update(self, name: str, value) -> None:
        aliases = {"jax_enable_x64": "enable_x64", "yax_enable_x64": "enable_x64",
                   "jax_platform_name": "platform", "jax_platforms": "platform",
                   "yax_checks": "enable_checks", "jax_enable_checks": "enable_checks"}
        name = aliases.get(name, name)
        if name not in self._KNOWN:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._KNOWN)}")
        setattr(self, name, value)

    @property
    def x64_enabled(self) -> bool:
        return bool(self.enable_x64)

    def trace_state(self) -> tuple:
        return (bool(self.enable_x64), self.platform)


config = Config()
