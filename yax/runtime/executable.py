"""Compiling StableHLO modules with PJRT and running them.

Running goes through the lowest-level jaxlib call, `execute_sharded(bufs)
.consume_with_handlers(handlers)`, with one result handler per output built once per executable;
jaxlib's Python `execute` wrapper disassembles outputs and calls back into Python per output.
That call is private API, so it is detected once at import (`FAST_EXECUTE`) with `execute` as
the fallback. Compiles consult the persistent cache (`compilation_cache`) when one is configured.
"""

from __future__ import annotations

import threading

import jax.core as _jax_core
from jaxlib import _jax
from jaxlib import xla_client as _xc

from yax.runtime import backend, compilation_cache, cpu_warmup
from yax.runtime.sharding_bridge import (
    device_assignment,
    from_hlo,
    like_first_argument,
    sharding_of,
    to_jax,
)

stats = {"compiles": 0, "cache_loads": 0}


def _detect_fast_execute() -> bool:
    return (callable(getattr(_jax, "array_result_handler", None))
            and hasattr(_jax, "LoadedExecutable")
            and hasattr(_jax.LoadedExecutable, "execute_sharded"))


FAST_EXECUTE = _detect_fast_execute()


def _result_handlers(out_avals, device, out_shardings=None):
    """One jaxlib result handler per output (None where this jaxlib cannot make them).

    `out_shardings` (yax shardings, one per output) places outputs of a multi-device program.
    """
    if not FAST_EXECUTE:
        return None
    try:
        if out_shardings is None:
            shardings = [sharding_of(device)] * len(out_avals)
        else:
            shardings = [to_jax(s) for s in out_shardings]
        return [_result_handler(_jax, _jax_core.ShapedArray(a.shape, a.dtype), s)
                for a, s in zip(out_avals, shardings, strict=True)]
    except Exception:  # an aval jaxlib does not know (or a changed signature): slow path
        if out_shardings is not None:
            raise
        return None


def _result_handler(_jax, aval, sharding):
    """jaxlib 0.10 takes `_skip_checks`; newer jaxlibs do not."""
    try:
        return _jax.array_result_handler(aval, sharding, True, _skip_checks=True)
    except TypeError:
        return _jax.array_result_handler(aval, sharding, True)


class MemoryAnalysis:
    """Byte counts of a compiled program, under jax's attribute names.

    Indexing by the older yax keys (`stats["temp_bytes"]`) still works.
    """

    _OLD_KEYS = {"argument_bytes": "argument_size_in_bytes", "output_bytes": "output_size_in_bytes",
                 "temp_bytes": "temp_size_in_bytes", "alias_bytes": "alias_size_in_bytes",
                 "generated_code_bytes": "generated_code_size_in_bytes"}

    def __init__(self, raw):
        for name in self._OLD_KEYS.values():
            setattr(self, name, int(getattr(raw, name, 0)))
        self.host_temp_size_in_bytes = int(getattr(raw, "host_temp_size_in_bytes", 0))

    def __getitem__(self, key: str) -> int:
        return getattr(self, self._OLD_KEYS.get(key, key))

    def __repr__(self):
        body = ", ".join(f"{n}={getattr(self, n)}" for n in self._OLD_KEYS.values())
        return f"MemoryAnalysis({body})"


class Executable:
    """A loaded executable. Calling it runs on device buffers and returns device buffers.

    PJRT checks only byte sizes, so callers check shapes and dtypes before `__call__`.
    """

    __slots__ = ("_exe", "in_avals", "out_avals", "device", "platform", "host_callbacks",
                 "_handlers", "run", "devices", "mesh", "in_shardings", "out_shardings",
                 "__weakref__")

    def __init__(self, exe, in_avals, out_avals, device, platform, host_callbacks=(),
                 devices=None, mesh=None, out_shardings=None, first_argument=None,
                 in_shardings=None):
        self._exe = exe
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.device = device
        self.platform = platform
        self.host_callbacks = tuple(host_callbacks)  # kept alive with the executable
        # several devices: partition p runs on devices[p]; shardings are yax shardings
        self.devices = tuple(devices) if devices is not None else (device,)
        self.mesh = mesh
        self.in_shardings = None
        self.out_shardings = None
        if len(self.devices) > 1:
            self.in_shardings, self.out_shardings = _compiled_shardings(
                exe, self.in_avals, self.out_avals, self.devices, mesh, out_shardings,
                first_argument, in_shardings)
        self._handlers = _result_handlers(self.out_avals, device, self.out_shardings)
        self.run = self._bind_run()  # buffers in, buffers out: the hot paths call this

    def __call__(self, buffers: list) -> list:
        return self.run(buffers)

    def _bind_run(self):
        handlers = self._handlers
        if handlers is None:
            call = self._exe.execute
        else:
            execute_sharded = self._exe.execute_sharded

            def call(buffers: list) -> list:
                # a deleted (donated) buffer makes the execute fail, and consuming the failed
                # results crashes the process (jaxlib 0.10.2, sharded programs): refuse first
                for b in buffers:
                    if b.is_deleted():
                        raise ValueError("an argument buffer has been deleted or donated")
                return execute_sharded(buffers).consume_with_handlers(handlers)
        if self.host_callbacks:
            return _reraising_callback_errors(call, self.host_callbacks)
        return call

    @property
    def one_device_call(self):
        """(execute_sharded, result handlers), to run this program as
        `execute_sharded(buffers).consume_with_handlers(handlers)` with no Python frame around
        the two jaxlib calls (the eager hot path); None where `run` does more than that (host
        callbacks, several devices, no fast execute). A deleted argument makes a one-device
        execute raise; only sharded ones need `run`'s check first."""
        if self._handlers is None or self.host_callbacks or len(self.devices) > 1:
            return None
        return self._exe.execute_sharded, self._handlers

    @property
    def raw_execute(self):
        """Buffers in, buffers out: the fastest way to run this executable."""
        return self.run

    @property
    def xla_executable(self):
        """The jaxlib LoadedExecutable (for jaxlib's C++ jit dispatch)."""
        return self._exe

    def memory_analysis(self) -> MemoryAnalysis:
        return MemoryAnalysis(self._exe.get_compiled_memory_stats())

    def memory_stats(self) -> dict:  # the older spelling, kept for callers of it
        m = self.memory_analysis()
        return {k: m[k] for k in MemoryAnalysis._OLD_KEYS}

    def cost_analysis(self) -> dict:
        """XLA's estimate: flops, bytes accessed, ... (an empty dict where unavailable)."""
        try:
            return dict(self._exe.cost_analysis())
        except Exception:  # not every backend implements it
            return {}

    def hlo_text(self) -> str:
        return self._exe.hlo_modules()[0].to_string()


def _compiled_shardings(exe, in_avals, out_avals, devices, mesh, out_shardings,
                        first_argument=None, in_shardings=None):
    """The shardings XLA settled on for parameters and results, as yax shardings (a sharding
    requested for a parameter or an output wins where one was given; `first_argument`,
    (sharding, ndim) of a committed first argument, is reused for results placed as it is)."""

    def convert(protos, avals):
        out = []
        for op, aval in zip(protos, avals, strict=True):
            out.append(from_hlo(_xc.HloSharding.from_proto(op), mesh, devices, len(aval.shape)))
        return out
    ins = convert(exe.get_parameter_shardings() or [], in_avals) if in_avals else []
    if in_shardings is not None:
        ins = [want if want is not None else got
               for want, got in zip(in_shardings, ins, strict=True)]
    outs = convert(exe.get_output_shardings() or [], out_avals) if out_avals else []
    outs = [like_first_argument(got, len(aval.shape), first_argument)
            for got, aval in zip(outs, out_avals, strict=True)]
    if out_shardings is not None:
        outs = [want if want is not None else got
                for want, got in zip(out_shardings, outs, strict=True)]
    return ins, outs


def _reraising_callback_errors(call, callbacks):
    """XLA reports an exception raised in a host callback as a generic runtime error; the
    callback kept the original (duck-typed `take_error()`), which is raised instead."""

    def run(buffers: list) -> list:
        try:
            return call(buffers)
        except Exception:
            for cb in callbacks:
                err = cb.take_error() if hasattr(cb, "take_error") else None
                if err is not None:
                    raise err from err.__cause__
            raise
    return run


# Executable objects shared by identical compiles within this process (`cache_key`).
_cache: dict = {}
_cache_lock = threading.RLock()


def compile_module(module, in_avals, out_avals, *, platform: str | None = None,
                   cache_key=None, host_callbacks=(), name: str | None = None,
                   devices=None, mesh=None, out_shardings=None, in_shardings=None,
                   first_argument=None, compiler_options=None) -> Executable:
    """Compile an `ir.Module` whose entry is `main`.

    Args:
      module: the module (entry function `main`).
      in_avals / out_avals: its parameter and result avals.
      platform: the backend (default: the current one).
      cache_key: with a key, reuse a previous compile in this process.
      host_callbacks: Python callables the module's host-callback custom calls index into. Passed
        to PJRT only when non-empty (a non-empty list makes execution synchronous); such
        executables never enter the persistent cache.
      name: shown by `config.log_compiles`.
      devices: several devices: compile one SPMD program partitioned over them (partition p on
        `devices[p]`; the module carries Shardy annotations). Default: the default device.
      mesh: the mesh the module's shardings refer to (outputs get NamedShardings over it).
      out_shardings: per output, a yax sharding to give the result, or None (XLA's choice).
      in_shardings: per parameter, the yax sharding asked for, or None (XLA's choice).
      first_argument: (sharding, ndim) of a committed first argument, or None: a result XLA
        places as that argument keeps its sharding (and so its spec's length).
      compiler_options: XLA options by name (`jit(compiler_options=)`, as jax), e.g.
        `{"xla_cpu_enable_fast_math": True}`; an unknown name is XLA's error.
    """
    if host_callbacks:  # callables are per program: never share such an executable
        cache_key = None
    if cache_key is not None:
        hit = _cache.get(cache_key)
        if hit is not None:
            return hit
    platform = platform or backend.platform()
    device = devices[0] if devices else backend.default_device(platform)
    client = backend.client(platform)
    exe = _compile_or_load(client, module, device, platform, tuple(host_callbacks), name,
                           devices=devices, spmd=mesh is not None or _declares_mesh(module),
                           overrides=tuple(sorted((compiler_options or {}).items())))
    result = Executable(exe, in_avals, out_avals, device, platform, host_callbacks,
                        devices=devices if devices and len(devices) > 1 else None, mesh=mesh,
                        out_shardings=out_shardings, first_argument=first_argument,
                        in_shardings=in_shardings)
    if cache_key is not None:
        with _cache_lock:
            _cache[cache_key] = result
    return result


def _declares_mesh(module) -> bool:
    """Whether the module declares a Shardy mesh (top-level `sdy.mesh` ops come first)."""
    with module.context:
        for op in module.body.operations:
            name = op.operation.name
            if name == "sdy.mesh":
                return True
            if name == "func.func":
                return False
    return False


def _compile_options(devices, spmd: bool = False, overrides=()):
    """`spmd`: the module carries Shardy annotations (a mesh), so it goes through the SPMD
    partitioner even on one device (which also removes Shardy's custom calls). `overrides`:
    (name, value) XLA options (part of the compile options, so of the disk cache key)."""
    options = _xc.CompileOptions()
    if overrides:
        options.env_option_overrides = list(overrides)
    if devices is not None and (len(devices) > 1 or spmd):
        options.num_replicas = 1
        options.num_partitions = len(devices)
        build = options.executable_build_options
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
    if devices is not None and (len(devices) > 1 or devices[0].id != 0):
        # without it the default assignment (by device id, from device 0) disagrees with the
        # argument buffers' devices, which fails (or crashes) at execute (RUNTIME_NOTES)
        options.device_assignment = device_assignment(devices)
    return options


def _compile_or_load(client, module, device, platform, host_callbacks, name, devices=None,
                     spmd: bool = False, overrides=()):
    options = _compile_options(devices or (device,), spmd, overrides)
    devices = _xc.DeviceList(tuple(devices) if devices else (device,))
    key = None
    if not host_callbacks and compilation_cache.cache_dir() is not None:
        try:
            key = compilation_cache.entry_key(module, platform=platform, client=client,
                                              device=device, compile_options=options)
        except Exception:  # e.g. bytecode writing unsupported: compile without the disk cache
            key = None
        payload = compilation_cache.load(key) if key is not None else None
        if payload is not None:
            try:
                exe = client.deserialize_executable(payload, devices, options)
                stats["cache_loads"] += 1
                return exe
            except Exception:  # stale or foreign entry: compile and overwrite it
                pass
    if host_callbacks:
        exe = client.compile_and_load(module, devices, options, host_callbacks=list(host_callbacks))
    else:
        exe = client.compile_and_load(module, devices, options)
    stats["compiles"] += 1
    if platform == "cpu":
        cpu_warmup.after_compile()  # the warm-up program, for the next processes' imports
    if key is not None:
        try:
            compilation_cache.store(key, exe.serialize())
        except Exception:  # serialization unsupported for this executable: just do not cache it
            pass
    return exe


def hlo_computation(module):
    """The XLA HLO computation of an `ir.Module` (what `Lowered.compiler_ir("hlo")` returns)."""
    with module.context:
        text = module.operation.get_asm(binary=True, enable_debug_info=True)
    return _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False,
                                                    return_tuple=False)


def clear_caches() -> None:
    """Drop the in-process executable cache (the persistent cache on disk stays)."""
    with _cache_lock:
        _cache.clear()
    compilation_cache.clear_memory_state()
