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
                   cache_key=None) -> Executable:
    """Compile an `ir.Module` whose entry is `main`. With `cache_key`, reuse a previous compile."""
    if cache_key is not None:
        hit = _cache.get(cache_key)
        if hit is not None:
            return hit
    platform = platform or backend.platform()
    device = backend.default_device(platform)
    client = backend.client(platform)
    exe = client.compile_and_load(module, _xc.DeviceList((device,)), _xc.CompileOptions())
    stats["compiles"] += 1
    result = Executable(exe, in_avals, out_avals, device, platform)
    if cache_key is not None:
        _cache[cache_key] = result
    return result
