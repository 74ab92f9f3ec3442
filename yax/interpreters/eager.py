"""Eager evaluation: apply one primitive to concrete Arrays right away.

Each primitive application is lowered on its own (the same lowering rule `jit` uses), compiled once
per (primitive, params, input avals, platform) and cached, then executed. When an input lives on
several devices the primitive runs as one SPMD program on them (`_apply_sharded`, cached per
signature and input shardings): inputs keep their shardings, single-device inputs are replicated
onto the mesh, outputs come back as the compiler places them.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax._resource_errors import raise_if_out_of_memory
from yax.config import config
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar
from yax.core.ir import Eqn, Jaxpr, Var
from yax.core.trace import Trace, Tracer, set_eval_trace
from yax.interpreters import lowering
from yax.runtime import backend, executable, transfer
from yax.runtime.array import Array
from yax.runtime.lru import LRUCache


class EvalTrace(Trace):
    name = "eager"

    def process_primitive(self, primitive, args, params) -> list:
        arrays = args
        for x in args:  # the common case (all Arrays) converts nothing and builds no list
            if type(x) is not Array:
                arrays = [x if type(x) is Array else self._to_array(x) for x in args]
                break
        if primitive.impl is not None:
            return primitive.impl(*arrays, **params)
        return apply_primitive(primitive, arrays, params)

    def _to_array(self, x) -> Array:
        if type(x) is TypedScalar and x.array is not None:  # a constant already on the device
            return x.array
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return to_array(x)


EVAL_TRACE = EvalTrace(None)
set_eval_trace(EVAL_TRACE)


_scalar_arrays: dict = {}


def to_array(x) -> Array:
    if isinstance(x, Array):
        return x
    if type(x) is TypedScalar:
        if x.array is not None:
            return x.array
        # small cache: loops that reuse the same constants skip the host-to-device copy
        key = (x.value.tobytes(), x.aval)
        hit = _scalar_arrays.get(key)
        if hit is None:
            if len(_scalar_arrays) > 4096:
                _scalar_arrays.clear()
            hit = _scalar_arrays[key] = array_from_numpy(x.value, weak_type=x.aval.weak_type)
        x.array = hit
        return hit
    if isinstance(x, Tracer):
        raise errors.UnexpectedTracerError(
            f"a traced value {x.aval.str_short()} cannot become a concrete Array here")
    if dtypes.is_python_scalar(x):
        dt, weak = dtypes.scalar_type_of(x)
        return array_from_numpy(np.asarray(x, dtype=dtypes.canonicalize(dt)), weak_type=weak)
    return array_from_numpy(np.asarray(x))


def array_from_numpy(value, *, weak_type: bool = False, device=None) -> Array:
    """Copy NumPy data to the device (narrowing 64-bit types when x64 is off, with a warning)."""
    value = np.asarray(value)
    dt = dtypes.canonicalize(value.dtype, warn=True)
    if dt != value.dtype:
        value = value.astype(dt)
    device = device or backend.default_device()
    return Array(transfer.device_put(value, device), ShapedArray(value.shape, dt, weak_type))


def _eager_capacity() -> int:
    return config.eager_cache_size


# (primitive, params, input avals, platform) -> (Executable.run, out avals); LRU-bounded.
_exec_cache = LRUCache(_eager_capacity)


# Flags read on every eager op, mirrored here on each config change (two attribute lookups of
# `config` per op were measurable next to a ~10 us execute).
_STATE = {"platform": config.platform, "check_outputs": False}


def _refresh_state(_name=None) -> None:
    _STATE["platform"] = config.platform
    _STATE["check_outputs"] = bool(config.debug_nans or config.debug_infs)


_refresh_state()
config.on_change(_refresh_state)


def apply_primitive(primitive, arrays: list, params: dict) -> list:
    for a in arrays:
        if type(a._buf.sharding) is not _SINGLE and _sharded(a._buf):
            return _apply_sharded(primitive, arrays, params)
    avals = tuple([a.aval for a in arrays])
    try:
        key = (primitive, tuple(params.items()) if params else (), avals, _STATE["platform"])
        hit = _exec_cache.get(key)
    except TypeError:  # unhashable params (should not happen): compile without caching
        key, hit = None, None
    if hit is None:
        if key is None:
            hit = _compile_primitive(primitive, avals, params)
        else:
            hit = _exec_cache.get_or_make(key, lambda: _compile_primitive(primitive, avals, params))
    run, out_avals = hit
    try:
        bufs = run([a._buf for a in arrays])
    except Exception as e:
        for a in arrays:
            _ = a.buffer  # raises the clear error for a donated (deleted) Array
        raise_if_out_of_memory(e, out_avals, f"eager {primitive.name}")
        raise
    if len(out_avals) == 1:
        outs = [Array(bufs[0], out_avals[0])]
    else:
        outs = [Array(b, aval) for b, aval in zip(bufs, out_avals, strict=True)]
    if _STATE["check_outputs"]:
        from yax.debug.nans import check_primitive
        check_primitive(primitive, outs)
    return outs


def _compile_primitive(primitive, avals, params):
    out_avals = primitive.out_avals(list(avals), params)
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    jaxpr = Jaxpr([], invars, [Eqn(primitive, invars, params, outvars, None)], outvars)
    platform = backend.platform()
    mctx = lowering.lower_module(jaxpr, platform=platform)
    exe = executable.compile_module(mctx.module, avals, out_avals, platform=platform,
                                    host_callbacks=getattr(mctx, "host_callbacks", ()),
                                    name=primitive.name)
    return exe.run, tuple(out_avals)


from jax.sharding import SingleDeviceSharding as _SINGLE  # noqa: E402  (the type check only)

from yax.runtime import sharding_bridge  # noqa: E402

_sharded = sharding_bridge.is_multi_device


def _apply_sharded(primitive, arrays: list, params: dict) -> list:
    """A primitive on inputs spread over several devices runs as one SPMD program on them
    (inputs keep their shardings, outputs as the compiler places them); single-device inputs
    are replicated onto the mesh. Never a gather to one device."""
    avals = tuple([a.aval for a in arrays])
    shardings = tuple([a._buf.sharding if _sharded(a._buf) else None for a in arrays])
    key = (primitive, tuple(params.items()) if params else (), avals, shardings,
           _STATE["platform"])
    hit = _exec_cache.get_or_make(
        key, lambda: _compile_sharded(primitive, avals, params, shardings))
    exe, placer, out_avals = hit
    bufs = exe.run(placer.place_all([a._buf for a in arrays], avals))
    return [Array(b, aval) for b, aval in zip(bufs, out_avals, strict=True)]


def _compile_sharded(primitive, avals, params, jax_shardings):
    from yax.sharding import NamedSharding, PartitionSpec
    from yax.transforms import jit_sharding
    out_avals = primitive.out_avals(list(avals), params)
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    jaxpr = Jaxpr([], invars, [Eqn(primitive, invars, params, outvars, None)], outvars)
    arg_sh = [None if s is None else sharding_bridge.from_jax(s) for s in jax_shardings]
    paths = [f"operand {i} of {primitive.name}" for i in range(len(avals))]
    placement = jit_sharding.resolve(paths, avals, [None] * len(avals), arg_sh,
                                     [None] * len(out_avals), out_avals, jaxpr)
    replicated = NamedSharding(placement.mesh, PartitionSpec())
    placement.in_shardings = [s if s is not None else replicated
                              for s in placement.in_shardings]
    platform = backend.platform()
    mctx = lowering.lower_module(jaxpr, platform=platform,
                                 device_ids=[d.id for d in placement.devices])
    jit_sharding.annotate(mctx, placement, 0, avals, out_avals)
    exe = executable.compile_module(mctx.module, avals, out_avals, platform=platform,
                                    host_callbacks=getattr(mctx, "host_callbacks", ()),
                                    name=primitive.name, devices=placement.devices,
                                    mesh=placement.mesh)
    return exe, jit_sharding.ArgumentPlacer(exe.in_shardings), tuple(out_avals)


def clear_cache() -> None:
    """Forget every compiled primitive (and the small constant cache)."""
    _exec_cache.clear()
    _scalar_arrays.clear()
