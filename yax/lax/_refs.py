"""Mutable array references (yax.new_ref) closed over by control-flow bodies: cond branches and
loop bodies capture them (see yax/interpreters/ref_state.py); the staged call takes their
values as extra operands (loop carries) and yax writes the results back after it."""

from __future__ import annotations

from yax.interpreters import ref_state
from yax.lax.elementwise import _convert_keep_weak


def ref_operands(refs) -> list:
    """The Refs' current values, strongly typed as the bodies' Ref inputs are."""
    return [_convert_keep_weak(ref_state.read(r), r.dtype, False) for r in refs]


def write_back(refs, values) -> None:
    for r, v in zip(refs, values, strict=True):
        ref_state.write(r, v)


def stale(refs) -> bool:
    """Whether a cached body captured a Ref of a transformation that has finished (it must be
    traced again)."""
    return any(not r._home.alive for r in refs)
