"""Canonicalising a NumPy index for yax.numpy.indexing: one entry per operand axis (Ellipsis
expanded, concrete boolean masks turned into integer arrays, negative indices wrapped, bounds
checked when `config.check_indices` asks).
"""

from __future__ import annotations

import operator

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.avals import is_symbolic_dim
from yax.core.trace import Tracer
from yax.errors import NonConcreteBooleanIndexError
from yax.primitives.callbacks import HostCallback, bind_callback
from yax.primitives.dim_as_value import dimension_as_value
from yax.runtime.array import Array

# --- canonicalising the index ------------------------------------------------------------------
# Entries are (kind, value, axis): kind is "int" (static Python int), "dyn" (traced 0-d int),
# "slice" (a (start, stop, step) triple after slice.indices), "none" (new axis), "adv" (an
# integer array: NumPy data when concrete, else a tracer) or "sep" (an Ellipsis that covers no
# axis: it only keeps integer arrays on either side apart). `axis` is the operand axis (None
# for "none" and "sep").

def _concrete(v):
    """NumPy data for a concrete value, or None for a traced one."""
    if isinstance(v, Tracer):
        value = v.to_concrete_or_none()
        return None if value is None else np.asarray(value)
    if isinstance(v, Array):
        return np.asarray(v)
    return np.asarray(v)


def _classify(e):
    """One raw index element -> (kind, value) before axes are assigned."""
    if e is None:
        return ("none", None)
    if e is Ellipsis:
        return ("ellipsis", None)
    if isinstance(e, slice):
        try:
            # a symbolic bound (yax.export, `x[:y.shape[0]]`) is kept for _symbolic_slice_indices
            parts = tuple(None if p is None else p if is_symbolic_dim(p) else operator.index(p)
                          for p in (e.start, e.stop, e.step))
        except (errors.ConcretizationError, errors.TracerIntegerConversionError) as err:
            raise errors.ConcretizationError(
                f"slice bounds must be static Python ints, got {e}; use lax.dynamic_slice(x, "
                f"starts, sizes) for a slice that starts at a traced position") from err
        return ("slice", slice(*parts))
    if isinstance(e, (bool, np.bool_)):
        return ("bool", np.asarray(e))
    if isinstance(e, (int, np.integer)):
        return ("int", int(e))
    if not isinstance(e, (Array, Tracer, np.ndarray, list, tuple)):
        raise TypeError(f"invalid index element {e!r} of type {type(e).__name__}: indices must "
                        f"be ints, slices, None, Ellipsis, or integer/boolean arrays")
    value = _concrete(e)
    dt = np.dtype(e.dtype) if value is None else value.dtype
    if isinstance(e, (list, tuple)) and value.size == 0:
        value, dt = value.astype(np.int32), np.dtype(np.int32)  # NumPy: [] indexes as ints
    if dtypes.is_bool(dt):
        if value is None:
            raise NonConcreteBooleanIndexError(
                f"a boolean mask index {e.aval.str_short()} is traced, but the shape of x[mask] "
                f"depends on how many entries are True, so it cannot be known inside a "
                f"transformation. Keep the shape with jnp.where(mask, x, 0) (or "
                f"jnp.where(mask, new, x) for an update), or use jnp.nonzero(mask, size=N) with "
                f"a static size N and index with its result.")
        return ("bool", value)
    if not dtypes.is_int(dt):
        raise TypeError(f"array indices must be integers or booleans, got dtype {dt}")
    if np.ndim(e if value is None else value) == 0:
        return ("int", int(value)) if value is not None else ("dyn", e)
    return ("adv", e if value is None else value)


def _raw_entries(idx) -> list:
    if not isinstance(idx, tuple):
        idx = (idx,)
    return [_classify(e) for e in idx]


def _insert_scalar_bool_axes(x, raw):
    """`x[True]`: a 0-d mask adds an axis of size 1 that the mask then selects (or not)."""
    if not any(k == "bool" and v.ndim == 0 for k, v in raw):
        return x, raw
    shape, out, pos = list(x.shape), [], 0
    for k, v in raw:
        if k == "ellipsis":
            # the 0-d masks after an Ellipsis sit after the axes it covers
            used = sum(_ndim_used(k2, v2) for k2, v2 in raw)
            pos += x.ndim - used
        if k == "bool" and v.ndim == 0:
            shape.insert(pos, 1)
            out.append(("adv", np.zeros(int(bool(v)), np.int32)))
            pos += 1
            continue
        pos += _ndim_used(k, v)
        out.append((k, v))
    return lax.reshape(x, tuple(shape)), out


def _ndim_used(kind, value) -> int:
    if kind in ("none", "ellipsis"):
        return 0
    return value.ndim if kind == "bool" else 1


def _expand(shape, raw) -> list:
    """Assign operand axes: expand Ellipsis, split boolean masks into integer arrays."""
    if sum(k == "ellipsis" for k, _ in raw) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_ndim_used(k, v) for k, v in raw)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{used} were indexed")
    if not any(k == "ellipsis" for k, _ in raw):
        raw = raw + [("ellipsis", None)]
    entries, axis = [], 0
    for kind, value in raw:
        if kind == "ellipsis":
            if len(shape) == used:  # an empty '...' still separates integer arrays (NumPy)
                entries.append(("sep", None, None))
            for _ in range(len(shape) - used):
                entries.append(("slice", slice(None), axis))
                axis += 1
        elif kind == "none":
            entries.append(("none", None, None))
        elif kind == "bool":
            want = tuple(shape[axis:axis + value.ndim])
            if value.shape != want:
                raise IndexError(f"boolean index of shape {value.shape} does not match the "
                                 f"indexed axes {tuple(range(axis, axis + value.ndim))} of shape "
                                 f"{want}")
            for nz in np.nonzero(value):
                entries.append(("adv", nz.astype(np.int32), axis))
                axis += 1
        else:
            entries.append((kind, value, axis))
            axis += 1
    return entries


def _check_bounds(value, axis: int, size: int, location=None) -> None:
    value = np.asarray(value)
    bad = (value < -size) | (value >= size)
    if np.any(bad):
        first = value[bad].flat[0]
        raise errors.OutOfBoundsIndexError(
            f"index {int(first)} is out of bounds for axis {axis} with size {size} (index "
            f"checking is on: config.check_indices / YAX_CHECK_INDICES; when it is off, as in "
            f"JAX, reads clamp the index and .at[] updates drop it)", location)


def _check_bounds_at_run_time(value, axis: int, size: int) -> None:
    """A traced index: a host check staged into the program raises when it runs."""
    location = errors.user_location()

    def check(v):
        _check_bounds(v, axis, size, location)
        return []
    bind_callback(HostCallback(check, "check_indices", wrap_errors=False), [value], [],
                  effect="io")


def _out_of_bounds_int(kind, value, axis, shape) -> bool:
    return kind == "int" and not 0 <= value < shape[axis]


def _wrap_traced(v, size: int):
    """Wrap negative traced indices (x[-1] is the last element)."""
    if dtypes.is_unsigned_int(v.dtype):
        return v
    # dimension_as_value: under yax.export the axis size may be symbolic
    return lax.select(lax.lt(v, 0), lax.add(v, dimension_as_value(size, v.dtype)), v)


def _symbolic_slice_indices(s: slice, n) -> tuple:
    """`slice.indices` for a symbolic axis size `n` (yax.export): static bounds and step 1;
    a clamp whose outcome depends on `n` raises InconclusiveDimensionOperation."""
    if s.step not in (None, 1):
        raise errors.ExportError(f"slicing an axis of symbolic size {n} with step {s.step} "
                                 f"is not supported by yax.export")

    def bound(v, default):
        if v is None:
            return default
        v = v if is_symbolic_dim(v) else operator.index(v)
        v = v + n if v < 0 else v
        try:  # a bound that may lie past the axis is taken as within it (jax keeps a min)
            return 0 if v < 0 else n if v >= n else v
        except errors.ExportError:
            return v
    start, stop = bound(s.start, 0), bound(s.stop, n)
    return start, stop, 1


def _normalise(shape, entries, check: bool) -> list:
    """Wrap negative indices and check concrete ones against the axis sizes."""
    out = []
    for kind, value, axis in entries:
        if kind == "slice":
            value = (_symbolic_slice_indices(value, shape[axis]) if is_symbolic_dim(shape[axis])
                     else value.indices(shape[axis]))
        elif kind in ("int", "adv") and not isinstance(value, Tracer):
            if check:
                _check_bounds(value, axis, shape[axis])
            value = np.where(value < 0, value + shape[axis], value) if kind == "adv" else (
                value + shape[axis] if value < 0 else value)
        elif kind in ("dyn", "adv"):
            if check:
                _check_bounds_at_run_time(value, axis, shape[axis])
            value = _wrap_traced(value, shape[axis])
        out.append((kind, value, axis))
    return out


def _parse(x, idx, check: bool, force_gather: bool = False):
    """Canonical entries for `x[idx]`; ints turn advanced next to integer arrays (NumPy)."""
    x, raw = _insert_scalar_bool_axes(x, _raw_entries(idx))
    entries = _normalise(x.shape, _expand(x.shape, raw), check)
    # an out-of-bounds static int is clamped (reads) or dropped (updates) by gather/scatter
    force_gather = force_gather or any(_out_of_bounds_int(k, v, a, x.shape) for k, v, a in entries)
    if force_gather or any(k == "adv" for k, _, _ in entries):
        entries = [("adv", v, a) if k in ("int", "dyn") else (k, v, a) for k, v, a in entries]
    return x, entries


def _count(start: int, stop: int, step: int) -> int:
    if is_symbolic_dim(start) or is_symbolic_dim(stop):  # yax.export: step 1 only
        return stop - start
    return len(range(start, stop, step))
