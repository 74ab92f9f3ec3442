"""Eager evaluation: apply one primitive to concrete Arrays right away.

Each primitive application is lowered on its own (the same lowering rule `jit` uses), compiled once
per (primitive, params, input avals, platform) and cached, then executed. When an input lives on
several devices the primitive runs as one SPMD program on them (`_apply_sharded`, cached per
signature and input shardings): inputs keep their shardings, single-device inputs are replicated
onto the mesh, outputs come back as the compiler places them.

Each primitive's last hit is memoised (`_last_hit`), and `one_operand_op` gives a one-operand
function of yax.numpy (a unary ufunc, `sum`) a memo of its own, so that repeating an op on a
value of the same type runs its executable with one Python frame, as close to jax's C++ dispatch
as Python gets.
"""

from __future__ import annotations

import itertools

import numpy as np

from yax import errors
from yax._resource_errors import raise_if_out_of_memory
from yax.compile import cache, placement
from yax.compile.compiler import compile_jaxpr
from yax.config import config
from yax.core import trace as _trace
from yax.core.avals import TypedScalar
from yax.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from yax.core.trace import Trace, Tracer, set_eval_trace
from yax.runtime import backend, guards, sharding_bridge, transfer, values
from yax.runtime.array import DRAIN_EVERY, Array, drain_released, note_execute
from yax.runtime.array import buffer_sharding as _sharding_of
from yax.runtime.mesh import get_abstract_mesh
from yax.runtime.named_sharding import NamedSharding, forced_result, type_sharding
from yax.runtime.partition_spec import PartitionSpec
from yax.runtime.values import to_array


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
        if getattr(type(x), "passes_as_operand", False):
            return x  # an object primitives take as it is (a Ref, for the staged Ref equations)
        if type(x) is TypedScalar and x.array is not None and backend.device_override() is None:
            return x.array  # a constant already on the (usual) default device
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return to_array(x)


EVAL_TRACE = EvalTrace(None)
set_eval_trace(EVAL_TRACE)
# `current_trace` without its Python frame: the variable is made by `set_eval_trace` (just
# above) and never replaced
_current_trace = _trace._current.get


def _eager_capacity() -> int:
    return config.eager_cache_size


# (primitive, params, input avals, platform, id(place)) -> (Executable.run, out avals, place,
# Executable.one_device_call); LRU-bounded.
_exec_cache = cache.new_cache("eager primitives", _eager_capacity)
# its mapping, read directly on the hot path (`LRUCache.get` is this lookup and touch, one
# Python frame more); the LRU keeps this one object for its lifetime (`clear` empties it)
_exec_data = _exec_cache._data

# Per primitive, its last hit, so that a repeated op skips building and hashing the key (each
# aval's `__hash__` is Python) and touching the LRU: a tuple
#   (avals, place, params, run, out avals, the one operand's aval or None,
#    execute_sharded or None, result handlers, the one output's aval or None).
# It is filled only while no output check is on and emptied on every config change and by
# `clear_caches`, so a hit also proves the platform and that the outputs need no check. It keeps
# at most one executable per primitive alive past an eviction. Threads replace whole entries,
# each an immutable tuple, so a reader sees one hit or another, never a mix.
_last_hit: dict = {}

# every `one_operand_op`'s memo: emptied with `_last_hit`, whose hits they are
_op_memos: list = []
_NO_RUN = (None,) * 5  # an empty memo: its aval matches no operand
# Array's `__init__` is two assignments and stays so (jaxlib's C++ jit path builds every
# output through it); the short cut makes them itself (a test holds both to the same fields)
_new_array = Array.__new__


def _forget_hits() -> None:
    _last_hit.clear()
    for memo in _op_memos:
        memo[0] = _NO_RUN


# `note_execute` of the hot paths, one C call: true once every DRAIN_EVERY executions
_drain_due = itertools.cycle((False,) * (DRAIN_EVERY - 1) + (True,))

# Flags read on every eager op, mirrored here on each config change (two attribute lookups of
# `config` per op were measurable next to a ~10 us execute).
_STATE = {"platform": config.platform, "check_outputs": False}


def _refresh_state(_name=None) -> None:
    _STATE["platform"] = config.platform
    _STATE["check_outputs"] = bool(config.debug_nans or config.debug_infs)
    _forget_hits()  # its hits hold for the platform and checks they were made under
    if _STATE.get("matmul_precision") != config.default_matmul_precision:
        # read by the dot/conv lowerings, so not in the key: a change empties the cache
        _STATE["matmul_precision"] = config.default_matmul_precision
        _exec_cache.clear()


_refresh_state()
config.on_change(_refresh_state)
cache.on_clear(_forget_hits)

# Checks run on every eager primitive's outputs while debug_nans/debug_infs is on, as
# `check(primitive, outs)`: yax.debug.nans installs its own (debugging tools sit above here).
output_checks: list = []


def check_outputs(primitive, outs) -> None:
    """Run the output checks on a primitive's eager outputs (for `impl` rules that compute them
    without `apply_primitive`)."""
    if _STATE["check_outputs"]:
        for check in output_checks:
            check(primitive, outs)


def apply_primitive(primitive, arrays: list, params: dict) -> list:
    # The common case, every operand on one device through one sharding object, reads each
    # buffer's sharding once (through the C-level getter `buffer_sharding`) and keys the cache
    # on that object's id, sparing its Python `__hash__` twice per op (the cached value holds
    # the object, so the id cannot be reused by another sharding while the entry lives).
    # Anything else: `_apply_any`. One and two operands, the usual counts, are unrolled: in
    # Python 3.11 a list comprehension is a frame of its own.
    if _override_active[0] and arrays:  # a default_device block is open (in some thread)
        arrays = onto_default_device(arrays)
    n = len(arrays)
    if n == 1:
        a = arrays[0]
        buf = a._buf
        place = _sharding_of(buf)
        avals, bufs = (a.aval,), [buf]
    elif n == 2:
        a, b = arrays
        buf, buf_b = a._buf, b._buf
        place = _sharding_of(buf)
        if _sharding_of(buf_b) is not place:
            return _apply_any(primitive, arrays, params)
        avals, bufs = (a.aval, b.aval), [buf, buf_b]
    else:
        place, avals, bufs = _placed_operands(arrays)
    if n and type(place) is not _SINGLE:
        return _apply_any(primitive, arrays, params)
    hit = _last_hit.get(primitive)
    try:  # the tuple compares its avals by identity first
        again = hit is not None and hit[1] is place and hit[0] == avals and hit[2] == params
    except (TypeError, ValueError):  # params that do not compare (arrays): the usual path
        again = False
    if not again:
        hit = _cached_executable(primitive, params, avals, place)
        if hit is None:
            return _run_on(primitive, arrays, params, avals, place)
    execute = hit[6]
    try:
        bufs = hit[3](bufs) if execute is None else execute(bufs).consume_with_handlers(hit[7])
    except Exception as e:
        _raise_run_error(e, primitive, arrays, hit[4])
        raise
    if hit[8] is not None and not _STATE["check_outputs"]:  # `_outputs`, inlined
        if next(_drain_due):  # `note_execute`, inlined
            drain_released()
        return [Array(bufs[0], hit[8])]
    return _outputs(primitive, bufs, hit[4])


def _placed_operands(arrays: list) -> tuple:
    """(place, avals, buffers) of no operand or of more than two (the first one's place: the
    caller sends operands that are not all there to `_apply_any`)."""
    if not arrays:
        return backend.device_override(), (), []
    place = _sharding_of(arrays[0]._buf)
    for a in arrays:
        if _sharding_of(a._buf) is not place:
            place = None  # not one sharding object: `_apply_any`
            break
    return place, tuple([a.aval for a in arrays]), [a._buf for a in arrays]


def one_operand_op(primitive, fallback, accepts=None, params_for=None):
    """`fallback`, a function of one operand, with a short cut for its eager applications.

    `accepts(aval)` (None: always) says for which operands `fallback` does nothing but bind
    `primitive` (one result) on the operand as it is, with `params_for(aval)` (None: no
    params). For such an Array while no transformation is active, the op applies the primitive
    itself (no frames of the caller's wrapper, `bind` or the trace), and a repeat of its last
    run (same aval object and placement, a one-device executable with one output) runs that
    run's executable with this frame the only Python around jaxlib's two calls. (jax's jitted
    ufuncs are one C++ call; here each layer, the ufunc, `bind`, the trace and the
    interpreter, was a frame, together a third of the op.) Anything else is `fallback(x)`.
    """
    assert not primitive.multiple_results, primitive
    # (operand aval, placement, execute_sharded, result handlers, output aval); at first one
    # that matches no operand
    last = [_NO_RUN]
    _op_memos.append(last)

    def op(x, /):
        if type(x) is Array and _current_trace() is EVAL_TRACE and not _override_active[0]:
            hit, aval, buf = last[0], x.aval, x._buf
            if hit[0] is aval and hit[1] is _sharding_of(buf):
                try:
                    outs = hit[2]([buf]).consume_with_handlers(hit[3])
                except Exception as e:
                    _raise_run_error(e, primitive, [x], (hit[4],))
                    raise
                if next(_drain_due):  # `note_execute`, inlined
                    drain_released()
                y = _new_array(Array)  # `Array(buf, aval)` without its `__init__` frame
                y._buf = outs[0]
                y.aval = hit[4]
                return y
            if primitive.impl is None and (accepts is None or accepts(aval)):
                params = {} if params_for is None else params_for(aval)
                out = apply_primitive(primitive, [x], params)[0]  # what `bind` would do
                last[0] = _repeatable(primitive, aval, buf, params)
                return out
        return fallback(x)
    return op


def _repeatable(primitive, aval, buf, params) -> tuple:
    """What `one_operand_op` remembers of the primitive's last hit if that was its run."""
    hit = _last_hit.get(primitive)
    if hit is None or hit[5] is None or hit[6] is None or hit[8] is None:
        return _NO_RUN
    try:
        if hit[1] is not _sharding_of(buf) or hit[5] != aval or hit[2] != params:
            return _NO_RUN
    except (TypeError, ValueError):  # remembered params that do not compare (arrays)
        return _NO_RUN
    return aval, hit[1], hit[6], hit[7], hit[8]


def _cached_executable(primitive, params, avals, place):
    """This primitive's memo entry (see `_last_hit`) for an executable compiled before for
    these operands, else None; remembered as its last hit unless outputs are checked."""
    # the LRU hit inlined: a lookup and a touch
    try:
        key = (primitive, tuple(params.items()) if params else (), avals, _STATE["platform"],
               id(place))
        hit = _exec_data.get(key)
    except TypeError:
        return None
    if hit is None or hit[2] is not place:
        return None
    try:
        _exec_data.move_to_end(key)
    except KeyError:  # evicted by another thread meanwhile: the value is still valid
        pass
    run, out_avals, _, direct = hit
    execute, handlers = direct if direct is not None else (None, None)
    one_out = out_avals[0] if len(out_avals) == 1 else None
    entry = (avals, place, dict(params), run, out_avals, avals[0] if len(avals) == 1 else None,
             execute, handlers, one_out)
    if not _STATE["check_outputs"]:
        _last_hit[primitive] = entry
    return entry


def _outputs(primitive, bufs, out_avals) -> list:
    """The run's buffers as Arrays, checked when a debug flag asks."""
    note_execute()
    if len(out_avals) == 1:
        outs = [Array(bufs[0], out_avals[0])]
    else:
        outs = [Array(b, aval) for b, aval in zip(bufs, out_avals, strict=True)]
    if _STATE["check_outputs"]:
        for check in output_checks:
            check(primitive, outs)
    return outs


def _raise_run_error(e, primitive, arrays, out_avals) -> None:
    for a in arrays:
        _ = a.buffer  # raises the clear error for a donated (deleted) Array
    raise_if_out_of_memory(e, out_avals, f"eager {primitive.name}")


def _apply_any(primitive, arrays: list, params: dict) -> list:
    """Operands on several devices, or on different single devices."""
    for a in arrays:
        if type(a._buf.sharding) is not _SINGLE and _sharded(a._buf):
            return _apply_sharded(primitive, arrays, params)
    # where it runs: the first operand's device (one sharding object per device), else the
    # default device (which `yax.default_device` may change)
    place = arrays[0]._buf.sharding
    for a in arrays:
        if a._buf.sharding is not place:
            arrays, place = _onto_one_device(arrays, primitive)
            break
    return _run_on(primitive, arrays, params, tuple([a.aval for a in arrays]), place)


def _run_on(primitive, arrays: list, params: dict, avals: tuple, place) -> list:
    """Run `primitive` on one device, `place` (a one-device sharding, a device or None)."""
    try:
        key = (primitive, tuple(params.items()) if params else (), avals, _STATE["platform"],
               id(place))
        hit = _exec_cache.get(key)
    except TypeError:  # unhashable params (should not happen): compile without caching
        key, hit = None, None
    if hit is None or hit[2] is not place:
        if key is None:
            hit = _compile_primitive(primitive, avals, params, place)
        else:
            hit = _exec_cache.get_or_make(
                key, lambda: _compile_primitive(primitive, avals, params, place))
            if hit[2] is not place:  # never expected (see apply_primitive): do not reuse
                hit = _compile_primitive(primitive, avals, params, place)
    run, out_avals = hit[0], hit[1]
    try:
        bufs = run([a._buf for a in arrays])
    except Exception as e:
        _raise_run_error(e, primitive, arrays, out_avals)
        raise
    return _outputs(primitive, bufs, out_avals)


def _onto_one_device(arrays: list, primitive) -> tuple[list, object]:
    """Operands on different single devices: the computation follows the committed ones
    (explicitly placed, as in JAX); the others are copied there."""
    committed = {a._buf.sharding for a in arrays if a.committed}
    if len(committed) > 1:
        where = ", ".join(sorted(str(sharding_bridge.device_of_placement(s)) for s in committed))
        raise errors.YaxError(
            f"eager {primitive.name}: its operands are committed to different devices "
            f"({where}); move them to one device first with yax.device_put(x, device)")
    place = next(iter(committed)) if committed else arrays[0]._buf.sharding
    device = sharding_bridge.device_of_placement(place)
    moved = [a if a._buf.sharding is place else _copied_to_device(a, device) for a in arrays]
    return moved, place


_override_active = backend.override_active


def onto_default_device(values: list) -> list:
    """Inside this thread's `default_device` block (or with `config.default_device` set),
    jax computes on that device: uncommitted one-device Arrays elsewhere are copied to it.
    Committed Arrays (they chose their device) and anything else stay as they are; an eager
    op with a committed operand then runs where that operand is (`_onto_one_device`)."""
    device = backend.device_override()
    if device is None:
        return values
    moved = list(values)
    for i, a in enumerate(values):
        if type(a) is not Array or a.committed:
            continue
        place = _sharding_of(a._buf)
        if type(place) is _SINGLE and sharding_bridge.device_of_placement(place) != device:
            moved[i] = _copied_to_device(a, device)
    return moved


def _copied_to_device(a: Array, device) -> Array:
    """An implicit device-to-device copy (checked by the transfer guards as one)."""
    with guards.between_devices(lambda: f"{a._describe()} to {device}"):
        return Array(transfer.device_put(np.asarray(a), device), a.aval)


def _one_equation(primitive, avals, params) -> ClosedJaxpr:
    out_avals = primitive.out_avals(list(avals), params)
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    return ClosedJaxpr(Jaxpr([], invars, [Eqn(primitive, invars, params, outvars, None)],
                             outvars), [])


def _compile_primitive(primitive, avals, params, place=None):
    closed = _one_equation(primitive, avals, params)
    exe = compile_jaxpr(closed, device=sharding_bridge.device_of_placement(place),
                        name=primitive.name)
    # an output typed as an operand shares its aval object, so that a chain of ops
    # (`x = sin(x)`) finds the memo by identity
    out_avals = tuple([next((a for a in avals if a == out), out) for out in closed.out_avals])
    return exe.run, out_avals, place, exe.one_device_call


_SINGLE = sharding_bridge.SINGLE_DEVICE_TYPE

_sharded = sharding_bridge.is_multi_device


def _apply_sharded(primitive, arrays: list, params: dict) -> list:
    """A primitive on inputs spread over several devices runs as one SPMD program on them
    (inputs keep their shardings, outputs as the compiler places them); single-device inputs
    are replicated onto the mesh. Never a gather to one device."""
    shardings = tuple([a._buf.sharding if _sharded(a._buf) else None for a in arrays])
    avals = tuple([a.aval if s is None else _typed_aval(a) for a, s in zip(arrays, shardings)])
    # the result type `result_sharding` forces (out_sharding=) is part of what is compiled
    key = (primitive, tuple(params.items()) if params else (), avals, shardings,
           _STATE["platform"], forced_result(primitive.name))
    hit = _exec_cache.get_or_make(
        key, lambda: _compile_sharded(primitive, avals, params, shardings))
    exe, placer, out_avals = hit
    bufs = exe.run(placer.place_all([a._buf for a in arrays], avals))
    note_execute()
    return [Array(b, aval) for b, aval in zip(bufs, out_avals, strict=True)]


def _typed_aval(a: Array):
    """The aval of a sharded Array with its sharding over Explicit mesh axes as its type, for
    Arrays made by a path that did not type them (make_array_from_callback, shard_map...);
    the axis types are the current abstract mesh's (auto_axes may have made them Auto)."""
    aval = a.aval
    if getattr(aval, "sharding", True) is not None:  # typed already (or not a ShapedArray)
        return aval
    placed = sharding_bridge.from_jax(a._buf.sharding)
    if not isinstance(placed, NamedSharding):
        return aval
    current, mesh = get_abstract_mesh(), placed.mesh
    view = current if (current.axis_names, current.axis_sizes) == (
        mesh.axis_names, mesh.axis_sizes) else None
    typed = type_sharding(placed, aval.ndim, view)
    return aval if typed is None else aval.update(sharding=typed)


def _compile_sharded(primitive, avals, params, jax_shardings):
    closed = _one_equation(primitive, avals, params)
    out_avals = closed.out_avals
    arg_sh = [None if s is None else sharding_bridge.from_jax(s) for s in jax_shardings]
    paths = [f"operand {i} of {primitive.name}" for i in range(len(avals))]
    where = placement.resolve(paths, avals, [None] * len(avals), arg_sh,
                              [None] * len(out_avals), out_avals, closed.jaxpr)
    replicated = NamedSharding(where.mesh, PartitionSpec())
    where.in_shardings = [s if s is not None else replicated for s in where.in_shardings]
    exe = compile_jaxpr(closed, where, name=primitive.name)
    return exe, placement.ArgumentPlacer(exe.in_shardings), tuple(out_avals)


# the device copies of Python-scalar constants go with the compiled programs (`clear_caches`)
cache.on_clear(values.clear_scalar_arrays)
