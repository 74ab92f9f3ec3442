"""Global configuration: `yax.config.update("enable_x64", True)` and friends.

Flags are read from the environment once (YAX_ENABLE_X64, YAX_PLATFORM, YAX_CHECKS, ...) and may be
changed at run time with `update` (JAX's `jax_*` spellings are accepted as aliases). The jit cache
key includes `config.trace_state()`: every flag that changes what a traced program computes or how
it is checked.
"""

from __future__ import annotations

import os

# jaxlib's C++ logging reads this once, when its first library loads. yax loads jaxlib's MLIR
# bindings before jax itself, so without it every start prints two PJRT INFO lines. Level 1 hides
# INFO only: warnings and errors still appear, and a value the user set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _env_flag_default_on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("0", "false", "no", "off")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


# option name -> (environment variable, parser, default)
_OPTIONS = {
    "enable_x64": ("YAX_ENABLE_X64", _env_flag, False),
    "platform": ("YAX_PLATFORM", lambda v: os.environ.get(v) or None, None),
    "enable_checks": ("YAX_CHECKS", _env_flag, False),
    "large_jaxpr_warning": (None, None, 10_000),
    # debugging (docs/debugging.md)
    "debug_nans": ("YAX_DEBUG_NANS", _env_flag, False),
    "debug_infs": ("YAX_DEBUG_INFS", _env_flag, False),
    "disable_jit": ("YAX_DISABLE_JIT", _env_flag, False),
    "log_compiles": ("YAX_LOG_COMPILES", _env_flag, False),
    "explain_cache_misses": ("YAX_EXPLAIN_CACHE_MISSES", _env_flag, False),
    "check_indices": ("YAX_CHECK_INDICES", _env_flag, False),
    # caches
    "compilation_cache_dir": ("YAX_COMPILATION_CACHE_DIR",
                              lambda v: os.environ.get(v) or None, None),
    "compilation_cache_max_bytes": ("YAX_COMPILATION_CACHE_MAX_BYTES",
                                    lambda v: _env_int(v, 2 << 30), 2 << 30),
    "jit_cache_size": ("YAX_JIT_CACHE_SIZE", lambda v: _env_int(v, 128), 128),
    "eager_cache_size": ("YAX_EAGER_CACHE_SIZE", lambda v: _env_int(v, 4096), 4096),
    # dispatch: jaxlib's C++ jit dispatch when the private API is present (off: Python path only)
    "jit_cpp_dispatch": ("YAX_JIT_CPP_DISPATCH", _env_flag_default_on, True),
    # placement: where values with no sharding information go (None: the first device)
    "default_device": (None, None, None),
}

_ALIASES = {"jax_enable_x64": "enable_x64", "yax_enable_x64": "enable_x64",
            "jax_platform_name": "platform", "jax_platforms": "platform",
            "yax_checks": "enable_checks", "jax_enable_checks": "enable_checks",
            "jax_debug_nans": "debug_nans", "jax_debug_infs": "debug_infs",
            "jax_disable_jit": "disable_jit", "jax_log_compiles": "log_compiles",
            "jax_explain_cache_misses": "explain_cache_misses",
            "yax_check_indices": "check_indices",
            "jax_compilation_cache_dir": "compilation_cache_dir",
            "jax_persistent_cache_max_bytes": "compilation_cache_max_bytes",
            "jax_default_device": "default_device"}


class Config:
    def __init__(self):
        object.__setattr__(self, "_listeners", [])
        for name, (env, parse, default) in _OPTIONS.items():
            setattr(self, name, parse(env) if env is not None else default)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        for listener in self._listeners:
            listener(name)

    def on_change(self, listener) -> None:
        """Call `listener(option_name)` after every change (the runtime mirrors the jit key)."""
        self._listeners.append(listener)

    _KNOWN = tuple(_OPTIONS)

    def update(self, name: str, value) -> None:
        name = _ALIASES.get(name, name)
        if name not in _OPTIONS:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._KNOWN)}")
        setattr(self, name, value)

    def read(self, name: str):
        """The current value of an option (JAX spellings accepted)."""
        name = _ALIASES.get(name, name)
        if name not in _OPTIONS:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._KNOWN)}")
        return getattr(self, name)

    def __getattr__(self, name):  # `config.jax_enable_x64` reads like JAX's
        alias = _ALIASES.get(name)
        if alias is None:
            raise AttributeError(name)
        return getattr(self, alias)

    @property
    def x64_enabled(self) -> bool:
        return bool(self.enable_x64)

    def trace_state(self) -> tuple:
        """The flags a jit cache entry depends on: a change retraces (and misses C++ caches)."""
        return (bool(self.enable_x64), self.platform, bool(self.debug_nans),
                bool(self.debug_infs), bool(self.check_indices))


config = Config()
