"""Global configuration: `yax.config.update("enable_x64", True)` and friends.

Flags are read from the environment once (YAX_ENABLE_X64, YAX_PLATFORM, YAX_CHECKS, ...) and may be
changed at run time with `update` (JAX's `jax_*` spellings are accepted as aliases). The jit cache
key includes `config.trace_state()`: every flag that changes what a traced program computes or how
it is checked.
"""

from __future__ import annotations

import contextlib
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
    # with a cache dir: an unchanged function's first call in a new process skips tracing too
    "compilation_cache_skip_tracing": ("YAX_COMPILATION_CACHE_SKIP_TRACING",
                                       _env_flag_default_on, True),
    "compilation_cache_max_bytes": ("YAX_COMPILATION_CACHE_MAX_BYTES",
                                    lambda v: _env_int(v, 2 << 30), 2 << 30),
    "jit_cache_size": ("YAX_JIT_CACHE_SIZE", lambda v: _env_int(v, 128), 128),
    "eager_cache_size": ("YAX_EAGER_CACHE_SIZE", lambda v: _env_int(v, 4096), 4096),
    # eager autodiff programs compiled with XLA's fusion (faster for large arrays; off: rounded
    # as jax's op-by-op eager execution rounds, docs/differences.md)
    "eager_fusion": ("YAX_EAGER_FUSION", _env_flag, False),
    # dispatch: jaxlib's C++ jit dispatch when the private API is present (off: Python path only)
    "jit_cpp_dispatch": ("YAX_JIT_CPP_DISPATCH", _env_flag_default_on, True),
    # placement: where values with no sharding information go (None: the first device)
    "default_device": (None, None, None),
    # NumPy-compatibility modes: yax implements jax's defaults only (see _ONLY_VALUES)
    "numpy_dtype_promotion": (None, None, "standard"),
    "numpy_rank_promotion": (None, None, "allow"),
}

# Options of which yax implements one value: setting another is an error, not a silent no-op.
_ONLY_VALUES = {
    "numpy_dtype_promotion": ("standard", "implicit promotion follows jax's standard lattice; "
                              "'strict' (no implicit promotion) is not implemented"),
    "numpy_rank_promotion": ("allow", "arrays of different ranks broadcast as in NumPy; "
                             "'warn'/'raise' are not implemented"),
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
            "jax_default_device": "default_device",
            "jax_numpy_dtype_promotion": "numpy_dtype_promotion",
            "jax_numpy_rank_promotion": "numpy_rank_promotion"}


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
        only = _ONLY_VALUES.get(name)
        if only is not None and value != only[0]:
            raise NotImplementedError(f"config option {name!r}: yax supports only {only[0]!r} "
                                      f"({only[1]}), got {value!r}")
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


class State:
    """One option as jax exposes it at top level (`jax.log_compiles`, `jax.debug_nans`, ...):
    `.value` reads it, and calling it gives a context manager that sets it for a block.

    Example:
      >>> with yax.log_compiles():          # the same as yax.log_compiles(True)
      ...     f(x)                          # logs "Finished XLA compilation of jit(f) ..."

    Unlike jax's, the setting is process-wide, not per thread (yax's config is one object).
    """

    def __init__(self, name: str, default_on=True):
        self.name = name
        self._default_on = default_on
        self.__doc__ = f"The `{name}` option: `.value`, or `with yax.{name}(value):`."

    @property
    def value(self):
        return config.read(self.name)

    @contextlib.contextmanager
    def __call__(self, new_val=None):
        if new_val is None:
            if self._default_on is None:
                raise TypeError(f"the {self.name} context manager needs the new value as its "
                                f"argument")
            new_val = self._default_on
        old = config.read(self.name)
        config.update(self.name, new_val)
        try:
            yield
        finally:
            config.update(self.name, old)

    def __bool__(self):
        raise TypeError(f"bool() of the State {self.name!r}: read `.value` instead (as in jax)")

    def __repr__(self):
        return f"State({self.name}={self.value!r})"


# The options jax also offers as top-level context managers (re-exported by yax/__init__.py).
log_compiles = State("log_compiles")
debug_nans = State("debug_nans")
debug_infs = State("debug_infs")
enable_checks = State("enable_checks")
explain_cache_misses = State("explain_cache_misses")
enable_x64 = State("enable_x64")
numpy_dtype_promotion = State("numpy_dtype_promotion", default_on=None)
numpy_rank_promotion = State("numpy_rank_promotion", default_on=None)
