"""Reverse mode, eagerly or not: the one entry `grad`, `value_and_grad` and `vjp` call.

Under a transformation (or with per-op checks on), `vjp_flat` is reverse mode itself: linearize,
then transpose (`traced_vjp_flat`). Called eagerly on concrete Arrays, the function's Python runs
once under the tape (eager_tape.py), which records the primal program; that program then runs
compiled, and its vjp too, both cached per recorded structure (eager_compiled.py). For
`value_and_grad`, whose pullback is called at once with a unit cotangent, the outputs and the
gradients come from one compiled program (the speculative path).
"""

from __future__ import annotations

from yax.compile import cache as compile_cache
from yax.config import config
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.trace import is_eager
from yax.runtime.array import Array
from yax.runtime.values import aval_of, canonical_leaf, to_array
from yax.transforms.eager_compiled import (
    CompiledTapeVJP,
    cached_program,
    compiled_forward,
    replay,
    traced_vjp_flat,
)
from yax.transforms.eager_tape import concrete_outputs, record_tape

__all__ = ["vjp_flat", "traced_vjp_flat"]


def vjp_flat(flat_fun, p_leaves, unit_cotangent: bool = False):
    """(outputs, pullback) of the flat function `flat_fun` at `p_leaves`; `pullback(cts)`
    takes one cotangent per output (None for one that is never read) and returns one per
    input. `unit_cotangent`: the caller (value_and_grad) will call the pullback at once with
    a unit cotangent for the first output and None for the others."""
    if _tape_applies(p_leaves):
        return _eager_vjp_flat(flat_fun, list(p_leaves), unit_cotangent)
    return traced_vjp_flat(flat_fun, p_leaves)


def _tape_applies(p_leaves) -> bool:
    """Called eagerly on concrete Arrays, with jit enabled and no per-op debugging checks."""
    return (is_eager() and not config.disable_jit and not config.debug_nans
            and not config.debug_infs and all(type(x) is Array for x in p_leaves))


def _eager_vjp_flat(flat_fun, primals: list, unit_cotangent: bool):
    outs, tape = record_tape(flat_fun, primals)
    if tape.calls_jit:  # each jit call runs as its own programs, as in jax (see calls_jit)
        return traced_vjp_flat(_replayed(tape), primals)
    structure = _reusable_structure(tape)
    speculated = (_speculative_grad(outs, tape, structure, primals)
                  if unit_cotangent else None)
    if speculated is not None:
        p_out, grads, one_aval = speculated
    else:
        p_out = _tape_outputs(outs, tape, structure, primals)

    def pullback(cts_out: list) -> list:
        cts_out = list(cts_out)
        if speculated is not None and _is_unit_cotangent(cts_out, one_aval):
            return list(grads)
        return _tape_pullback(tape, structure, primals, cts_out)
    return p_out, pullback


def _replayed(tape):
    closed = tape.closed_jaxpr()
    return replay(closed.jaxpr, closed.consts)


def _tape_program(key, tape, build):
    """(the program cached under `key` for this recorded structure, made by `build(closed
    jaxpr)` the first time, and the consts this recording passes it). The key is that of the
    recording as made (`TapeTrace.structure_key`), so on a hit the recorded program is never
    assembled: its consts are picked from this recording's by their positions."""
    def make():
        closed = tape.closed_jaxpr()
        return build(closed), tape.const_positions(closed)
    program, positions = cached_program(key, make)
    consts = tape.const_values
    return program, [consts[i] for i in positions]


_seen_by_identity: set = set()  # structures hold params (custom rules): yax.clear_caches empties it
_MAX_SEEN = 512
compile_cache.on_clear(_seen_by_identity.clear)


def _reusable_structure(tape):
    """The structure key of a recorded program, or None when it should not be compiled: a
    const is not a concrete Array, a param cannot be hashed, or a param compares as an object
    (a custom rule, a jaxpr with consts) and this key was not seen before (objects made afresh
    on every call would otherwise compile on every call)."""
    for c in tape.const_values:
        if type(c) is not Array:
            return None
    structure, by_identity = tape.structure_key()
    if structure is not None and by_identity and structure not in _seen_by_identity:
        if len(_seen_by_identity) >= _MAX_SEEN:
            _seen_by_identity.clear()
        _seen_by_identity.add(structure)
        return None
    return structure


def _tape_outputs(outs, tape, structure, primals) -> list:
    """Concrete outputs of the recorded program: those already computed (Python asked for
    them), else from one compiled run of the program."""
    values = concrete_outputs(outs)
    if all(v is not None for v in values):
        return values
    if structure is None:
        tape.evaluate()
        return concrete_outputs(outs)
    key = ("forward", structure, config.trace_state())
    program, consts = _tape_program(key, tape, lambda closed: compiled_forward(
        closed.jaxpr, len(closed.consts)))
    return list(program(*consts, *primals))


def _tape_pullback(tape, structure, primals: list, cts_out: list) -> list:
    present = tuple(ct is not None for ct in cts_out)  # aux outputs pass None: never read
    if structure is None or not is_eager():
        _, pullback = traced_vjp_flat(_replayed(tape), primals)
        return pullback(cts_out)
    cts = [_concrete_ct(ct) for ct in cts_out if ct is not None]
    key = ("vjp", structure, present, tuple(c.aval for c in cts), config.trace_state())
    avals = [p.aval for p in primals]
    entry, consts = _tape_program(key, tape, lambda closed: CompiledTapeVJP(
        closed.jaxpr, len(closed.consts), avals, present))
    return entry(consts, primals, cts)


def _concrete_ct(ct):
    if type(ct) is Array:
        return ct
    if type(ct) is TypedScalar:
        return to_array(ct)
    return canonical_leaf(ct)


def _speculative_grad(outs, tape, structure, primals):
    """(outputs, gradients of the first output for a unit cotangent), from one compiled program,
    or None when the first output is not an inexact scalar (grad's own checks then report it)
    or the program is not compiled."""
    if structure is None or not outs:
        return None
    aval = aval_of(outs[0])
    if aval.shape != () or not dtypes.is_inexact(aval.dtype):
        return None
    one = to_array(TypedScalar(1, aval.dtype, weak_type=False))
    present = (True,) + (False,) * (len(outs) - 1)
    key = ("value_and_grad", structure, present, one.aval, config.trace_state())
    avals = [p.aval for p in primals]
    entry, consts = _tape_program(key, tape, lambda closed: CompiledTapeVJP(
        closed.jaxpr, len(closed.consts), avals, present, with_outputs=True))
    values, grads = entry(consts, primals, [one])
    return values, grads, one.aval


def _is_unit_cotangent(cts_out: list, one_aval) -> bool:
    first = cts_out[0] if cts_out else None
    return (type(first) is TypedScalar and first.aval == one_aval and first.value == 1
            and all(ct is None for ct in cts_out[1:]))
