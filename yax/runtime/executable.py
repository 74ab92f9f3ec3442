"""Compiling StableHLO modules with PJRT and running them, with an executable cache."""

from __future__ import annotations

from jaxlib import xla_client as _xc

from yax.runtime import backend

_cache: dict = {}
stats = {"compiles": 0}


class Executable:
    """A loaded executable. Calling it runs on device buffers and returns device buffers.

    PJRT checks only byte sizes, so callers check shapes and dtypes before `__call__`.
    """

    __slots__ = ("_exe", "in_avals", "out_avals", "device", "platform")

    def __init__(self, exe, in_avals, out_avals, device, platform):
        self._exe = exe
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.device = device
        self.platform = platform

    def __call__(self, buffers: list) -> list:
        return self._exe.execute(buffers)

    @property
    def raw_execute(self):
        """The bound PJRT execute (buffers in, buffers out), for the jit hot path."""
        return self._exe.execute

    def memory_stats(self) -> dict:
        s = self._exe.get_compiled_memory_stats()
        return {"argument_bytes": s.argument_size_in_bytes, "output_bytes": s.output_size_in_bytes,
                "temp_bytes": s.temp_size_in_bytes, "alias_bytes": s.alias_size_in_bytes,
                "generated_code_bytes": s.generated_code_size_in_bytes}

    def hlo_text(self) -> str:
        return self._exe.hlo_modules()[0].to_string()


def compile_module(module, in_avals, out_avals, *, platform: str | None = None,
                   cache_key=None, host_callbacks=()) -> Executable:
    """Compile an `ir.Module` whose entry is `main`. With `cache_key`, reuse a previous compile.

    `host_callbacks` are the Python callables the module's callback custom calls name by index;
    passed only when non-empty (they make execution synchronous), never cached.
    """
    if host_callbacks:
        cache_key = None
    if cache_key is not None:
        hit = _cache.get(cache_key)
        if hit is not None:
            return hit
    platform = platform or backend.platform()
    device = backend.default_device(platform)
    client = backend.client(platform)
    if host_callbacks:
        exe = _WithCallbacks(client.compile_and_load(
            module, _xc.DeviceList((device,)), _xc.CompileOptions(),
            host_callbacks=list(host_callbacks)), tuple(host_callbacks))
    else:
        exe = client.compile_and_load(module, _xc.DeviceList((device,)), _xc.CompileOptions())
    stats["compiles"] += 1
    result = Executable(exe, in_avals, out_avals, device, platform)
    if cache_key is not None:
        _cache[cache_key] = result
    return result


class _WithCallbacks:
    """A loaded executable holding host callbacks. XLA reports an exception raised in a callback
    as a generic runtime error; the callback kept the original, which is raised instead."""

    __slots__ = ("_exe", "_callbacks")

    def __init__(self, exe, callbacks):
        self._exe = exe
        self._callbacks = callbacks

    def execute(self, buffers):
        try:
            return self._exe.execute(buffers)
        except Exception:
            for cb in self._callbacks:
                err = cb.take_error() if hasattr(cb, "take_error") else None
                if err is not None:
                    raise err from err.__cause__
            raise

    def __getattr__(self, name):
        return getattr(self._exe, name)
