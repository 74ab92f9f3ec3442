"""Run a closed jaxpr on concrete Arrays: compiled once per jaxpr (and input placement), then
executed. On one device unless an input spans several devices or an equation names a mesh; then
as one SPMD program over those devices. Eager `pjit`, custom derivatives, `checkpoint` and
compile-when-eager functions run their programs this way.
"""

from __future__ import annotations

from yax.compile import cache
from yax.compile.compiler import compile_jaxpr
from yax.compile.placement import ArgumentPlacer, eqn_meshes, resolve
from yax.config import config
from yax.runtime import backend, executable, sharding_bridge
from yax.runtime.array import Array, note_execute

_compiled = cache.new_cache("closed jaxprs")
_sharded = cache.new_cache("sharded closed jaxprs")
_has_mesh = cache.new_cache("jaxprs naming a mesh")


def compile_closed_jaxpr(jaxpr, *, donated=()) -> executable.Executable:
    """Compile a const-free closed jaxpr for the current platform (cached per jaxpr object)."""
    key = (jaxpr, backend.platform(), tuple(donated), config.enable_x64)
    return _compiled.get_or_make(key, lambda: compile_jaxpr(jaxpr, donated=donated))


def run_closed_jaxpr(jaxpr, arrays) -> list:
    """Compile (once) and run a const-free closed jaxpr on concrete Arrays."""
    if needs_devices(jaxpr, arrays):
        return run_closed_sharded(jaxpr, arrays)
    exe = compile_closed_jaxpr(jaxpr)
    bufs = exe([a.buffer for a in arrays])
    note_execute()
    return [Array(b, aval) for b, aval in zip(bufs, jaxpr.out_avals, strict=True)]


def needs_devices(jaxpr, arrays) -> bool:
    """Whether an eager application of a closed jaxpr must run on several devices."""
    if any(sharding_bridge.is_multi_device(a._buf) for a in arrays):
        return True
    return _has_mesh.get_or_make(jaxpr, lambda: (bool(eqn_meshes(jaxpr.jaxpr, [])),))[0]


def run_closed_sharded(jaxpr, arrays) -> list:
    """Run a const-free closed jaxpr as one SPMD program over its inputs' (and its equations'
    meshes') devices: the eager form of a jitted function applied under a transformation."""
    jax_sh = tuple(a._buf.sharding if sharding_bridge.is_multi_device(a._buf) else None
                   for a in arrays)
    exe, placer = _sharded.get_or_make((jaxpr, jax_sh),
                                       lambda: _compile_sharded(jaxpr, jax_sh))
    bufs = [a.buffer for a in arrays]
    if placer is not None:
        bufs = placer.place_all(bufs, jaxpr.in_avals)
    bufs = exe.run(bufs)
    note_execute()
    return [Array(b, aval) for b, aval in zip(bufs, jaxpr.out_avals, strict=True)]


def _compile_sharded(jaxpr, jax_sh):
    arg_sh = [None if s is None else sharding_bridge.from_jax(s) for s in jax_sh]
    n_in, n_out = len(jax_sh), len(jaxpr.out_avals)
    paths = [f"operand {i}" for i in range(n_in)]
    placement = resolve(paths, jaxpr.in_avals, [None] * n_in, arg_sh, [None] * n_out,
                        jaxpr.out_avals, jaxpr.jaxpr)
    exe = compile_jaxpr(jaxpr, placement)
    if exe.in_shardings is None:  # a mesh of one device: nothing to place
        return exe, None
    return exe, ArgumentPlacer(exe.in_shardings)
