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
    # how many CPU devices the CPU backend starts with (-1: XLA's default, one unless
    # XLA_FLAGS forces more); read when the backend starts, so set it before the first operation
    "num_cpu_devices": ("YAX_NUM_CPU_DEVICES", lambda v: _env_int(v, -1), -1),
    # placement: where values with no sharding information go (None: the first device)
    "default_device": (None, None, None),
    # NumPy-compatibility modes: yax implements jax's defaults only (see _ONLY_VALUES)
    "numpy_dtype_promotion": (None, None, "standard"),
    "numpy_rank_promotion": (None, None, "allow"),
    # transfer guards (docs/debugging.md): None is "allow"; `transfer_guard` sets all three
    "transfer_guard_host_to_device": (None, None, None),
    "transfer_guard_device_to_host": (None, None, None),
    "transfer_guard_device_to_device": (None, None, None),
    "transfer_guard": (None, None, None),
    # dot/matmul/conv operands given precision=None lower with this precision (None: DEFAULT)
    "default_matmul_precision": (None, None, None),
    # jit's tracing raises while set (a program that must hit the cache)
    "no_tracing": (None, None, False),
    # options of jax's random and nn of which yax implements one value (see _ONLY_VALUES)
    "check_tracer_leaks": (None, None, False),
    "softmax_custom_jvp": (None, None, False),
    "threefry_partitionable": (None, None, True),
    "debug_key_reuse": (None, None, False),
    "legacy_prng_key": (None, None, "allow"),
    "enable_custom_prng": (None, None, False),
    "default_prng_impl": (None, None, "threefry2x32"),
}

TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
# jax's legacy precision names -> the XLA precision both operands get
MATMUL_PRECISIONS = {"default": "DEFAULT", "bfloat16": "DEFAULT", "high": "HIGH",
                     "tensorfloat32": "HIGH", "highest": "HIGHEST", "float32": "HIGHEST"}
# jax's dot-algorithm presets: accepted names, but yax has no dot algorithms (lax.DotAlgorithm)
_DOT_ALGORITHM_PRESETS = (
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")

# Options whose value is one of a few names (None allowed where listed): another is a ValueError.
_CHOICES = {
    **{f"transfer_guard{d}": (None, *TRANSFER_GUARD_LEVELS)
       for d in ("", "_host_to_device", "_device_to_host", "_device_to_device")},
    "default_matmul_precision": (None, *MATMUL_PRECISIONS, *_DOT_ALGORITHM_PRESETS),
    "legacy_prng_key": ("allow", "warn", "error"),
    "default_prng_impl": ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32",
                          "philox4x32"),
}

# Options of which yax implements one value: setting another is an error, not a silent no-op.
_ONLY_VALUES = {
    "numpy_dtype_promotion": ("standard", "implicit promotion follows jax's standard lattice; "
                              "'strict' (no implicit promotion) is not implemented"),
    "numpy_rank_promotion": ("allow", "arrays of different ranks broadcast as in NumPy; "
                             "'warn'/'raise' are not implemented"),
    "check_tracer_leaks": (False, "a leaked tracer is reported when it is used after its "
                           "transformation ended (UnexpectedTracerError); checking for leaks "
                           "when a trace completes is not implemented"),
    "softmax_custom_jvp": (False, "nn.softmax is differentiated through its definition (jax's "
                           "default); the custom_jvp rule is not implemented"),
    "threefry_partitionable": (True, "yax.random draws the bits of jax's partitionable "
                               "threefry (jax's default); the older scheme is not implemented"),
    "debug_key_reuse": (False, "key-reuse checking is not implemented"),
    "legacy_prng_key": ("allow", "raw uint32 keys are accepted by yax.random; 'warn'/'error' "
                        "are not implemented"),
    "enable_custom_prng": (False, "the custom PRNG upgrade is not implemented"),
    "default_prng_impl": ("threefry2x32", "yax.random implements threefry2x32 only"),
}

_ALIASES = {"jax_enable_x64": "enable_x64", "yax_enable_x64": "enable_x64",
            "jax_platform_name": "platform", "jax_platforms": "platform",
            "yax_checks": "enable_checks", "jax_enable_checks": "enable_checks",
            "jax_debug_nans": "debug_nans", "jax_debug_infs": "debug_infs",
            "jax_num_cpu_devices": "num_cpu_devices",
            "jax_disable_jit": "disable_jit", "jax_log_compiles": "log_compiles",
            "jax_explain_cache_misses": "explain_cache_misses",
            "yax_check_indices": "check_indices",
            "jax_compilation_cache_dir": "compilation_cache_dir",
            "jax_persistent_cache_max_bytes": "compilation_cache_max_bytes",
            "jax_default_device": "default_device",
            "jax_numpy_dtype_promotion": "numpy_dtype_promotion",
            "jax_numpy_rank_promotion": "numpy_rank_promotion",
            **{f"jax_{name}": name for name in (
                "transfer_guard", "transfer_guard_host_to_device",
                "transfer_guard_device_to_host", "transfer_guard_device_to_device",
                "default_matmul_precision", "no_tracing", "check_tracer_leaks",
                "softmax_custom_jvp", "threefry_partitionable", "debug_key_reuse",
                "legacy_prng_key", "enable_custom_prng", "default_prng_impl")}}


class Config:
    def __init__(self):
        object.__setattr__(self, "_listeners", [])
        object.__setattr__(self, "_validators", {})
        for name, (env, parse, default) in _OPTIONS.items():
            setattr(self, name, parse(env) if env is not None else default)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        for listener in self._listeners:
            listener(name)

    def on_change(self, listener) -> None:
        """Call `listener(option_name)` after every change (the runtime mirrors the jit key)."""
        self._listeners.append(listener)

    def validate_with(self, name: str, validator) -> None:
        """Call `validator(new_value)` before `update` sets `name`; it raises to refuse it (the
        runtime refuses options that only take effect before its backend starts)."""
        self._validators[name] = validator

    _KNOWN = tuple(_OPTIONS)

    def update(self, name: str, value) -> None:
        name = _ALIASES.get(name, name)
        if name not in _OPTIONS:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._KNOWN)}")
        choices = _CHOICES.get(name)
        if choices is not None and value not in choices:
            raise ValueError(f"config option {name!r} must be one of {list(choices)}, got "
                             f"{value!r}")
        only = _ONLY_VALUES.get(name)
        if only is not None and value != only[0]:
            raise NotImplementedError(f"config option {name!r}: yax supports only {only[0]!r} "
                                      f"({only[1]}), got {value!r}")
        if name == "default_matmul_precision" and value in _DOT_ALGORITHM_PRESETS:
            raise NotImplementedError(f"default_matmul_precision={value!r}: dot algorithm "
                                      f"presets are not implemented; use one of "
                                      f"{list(MATMUL_PRECISIONS)}")
        validator = self._validators.get(name)
        if validator is not None:
            validator(value)
        if name == "transfer_guard":  # set-only in jax too: it sets every direction
            for direction in ("host_to_device", "device_to_host", "device_to_device"):
                setattr(self, f"transfer_guard_{direction}", value)
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
                bool(self.debug_infs), bool(self.check_indices), self.default_matmul_precision)


config = Config()


_NO_VALUE = object()


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
    def __call__(self, new_val=_NO_VALUE):
        if new_val is None and None in _CHOICES.get(self.name, ()):
            pass  # None is a value of its own here (transfer guards, default_matmul_precision)
        elif new_val is None or new_val is _NO_VALUE:
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
transfer_guard_host_to_device = State("transfer_guard_host_to_device", default_on=None)
transfer_guard_device_to_host = State("transfer_guard_device_to_host", default_on=None)
transfer_guard_device_to_device = State("transfer_guard_device_to_device", default_on=None)
default_matmul_precision = State("default_matmul_precision", default_on=None)
no_tracing = State("no_tracing")
check_tracer_leaks = State("check_tracer_leaks")
softmax_custom_jvp = State("softmax_custom_jvp")
threefry_partitionable = State("threefry_partitionable")
debug_key_reuse = State("debug_key_reuse")
legacy_prng_key = State("legacy_prng_key", default_on=None)
enable_custom_prng = State("enable_custom_prng")
default_prng_impl = State("default_prng_impl", default_on=None)


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """Set the transfer guard level of every direction (host to device, device to host, device
    to device) for a block: "allow", "log", "disallow", "log_explicit" or "disallow_explicit".

    "log"/"disallow" log or refuse implicit transfers only (a NumPy array passed to a jitted
    function or an op, `np.asarray(x)`, `float(x)`, printing); the "_explicit" levels also
    catch explicit ones (`yax.device_put`, `yax.device_get`). A refused transfer raises
    `yax.errors.JaxRuntimeError` naming it.

    Example:
      >>> with yax.transfer_guard("disallow"):
      ...     f(yax.device_put(np_x))     # fine: the transfer is explicit
      ...     f(np_x)                     # JaxRuntimeError: Disallowed host-to-device transfer
    """
    with contextlib.ExitStack() as stack:
        stack.enter_context(transfer_guard_host_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_host(new_val))
        stack.enter_context(transfer_guard_device_to_device(new_val))
        yield
