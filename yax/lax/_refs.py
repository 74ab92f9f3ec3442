"""Mutable array references (yax.new_ref) closed over by control-flow bodies: cond branches and
loop bodies capture them (see yax/interpreters/ref_state.py); the staged call takes their
values as extra operands (loop carries) and yax writes the results back after it."""

from __future__ import annotations

from yax.core.trace import current_trace
from yax.interpreters import ref_state
from yax.lax.elementwise import _convert_keep_weak


def ref_operands(refs) -> list:
    """The Refs' current values, strongly typed as the bodies' Ref inputs are."""
    return [_convert_keep_weak(ref_state.read(r), r.dtype, False) for r in refs]


def write_back(refs, values, written) -> None:
    """Write the Refs' final values back, those a body wrote (`written`: their ids); a Ref only
    read keeps its value (and weak type)."""
    for r, v in zip(refs, values, strict=True):
        if id(r) in written:
            ref_state.write(r, v)


def written_ids() -> frozenset:
    """Inside a traced body, at its end: the ids of the Refs it wrote."""
    return frozenset(id(r) for r in ref_state.written(current_trace()))


def stale(refs) -> bool:
    """Whether a cached body captured a Ref of a transformation that has finished (it must be
    traced again)."""
    return any(not r._home.alive for r in refs)
