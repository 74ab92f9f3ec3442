"""NumPy indexing for yax: `x[idx]`, `x.at[idx].set/add/...`, `take` and `take_along_axis`.

An index is first canonicalised into one entry per operand axis (Ellipsis expanded, concrete
boolean masks turned into integer arrays, negative indices wrapped). Then:
  * static ints and slices lower to `slice` (+ `rev` for negative steps, `squeeze`/`reshape`
    for dropped and new axes), so `x[1:3]` is one `slice` equation and never a gather;
  * traced scalar ints (with only slices besides) lower to `dynamic_slice`;
  * integer arrays lower to one `gather` (reads) or `scatter*` (updates) whose index vector holds
    one component per indexed axis, laid out in the NumPy result shape.

Out of bounds, as in JAX, eagerly and under jit alike: negative indices are wrapped once (adding
the axis size); then reads clamp into range (gather mode "clip"), `.at[...]` updates drop the
out-of-bounds entries ("fill_or_drop"), `take`/`take_along_axis` fill (NaN for floats), and an
explicit `mode=` is honoured. A static int that is out of bounds takes the gather/scatter path so
it gets the same treatment. With `config.check_indices` (YAX_CHECK_INDICES=1) an out-of-bounds
index instead raises `OutOfBoundsIndexError` (an IndexError) naming the index, the axis, its size
and the user's line: concrete indices at once, traced ones when the program runs (a host check).
"""

from __future__ import annotations

import operator

import numpy as np

from yax import errors, lax
from yax.config import config
from yax.core import dtypes
from yax.core.trace import Tracer
from yax.errors import NonConcreteBooleanIndexError  # noqa: F401  (re-exported)
from yax.numpy import _promote
from yax.primitives.callbacks import HostCallback, bind_callback
from yax.runtime.array import Array

__all__ = ["take", "take_along_axis"]



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
            parts = tuple(None if p is None else operator.index(p)
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
    return lax.select(lax.lt(v, 0), lax.add(v, size), v)


def _normalise(shape, entries, check: bool) -> list:
    """Wrap negative indices and check concrete ones against the axis sizes."""
    out = []
    for kind, value, axis in entries:
        if kind == "slice":
            value = value.indices(shape[axis])
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
    return len(range(start, stop, step))


# --- static ints and slices: slice / rev / squeeze / reshape ----------------------------------

def _basic_region(shape, entries):
    """Per-axis (start, limit, stride), axes to reverse, and the result shape (with new axes)."""
    starts, limits, strides, rev, out_shape = [], [], [], [], []
    for kind, value, axis in entries:
        if kind in ("none", "sep"):
            out_shape.extend([1] if kind == "none" else [])
            continue
        if kind in ("int", "dyn"):
            lo = 0 if kind == "dyn" else value
            hi = shape[axis] if kind == "dyn" else value + 1
            starts.append(lo), limits.append(hi), strides.append(1)
            continue
        start, stop, step = value
        n = _count(start, stop, step)
        out_shape.append(n)
        if step < 0:  # read the same elements upwards, then reverse the axis
            start, step = (start + (n - 1) * step, -step) if n else (0, -step)
            rev.append(axis)
        starts.append(start), limits.append(start + (n - 1) * step + 1 if n else start)
        strides.append(step)
    return starts, limits, strides, rev, tuple(out_shape)


def _basic_getitem(x, entries):
    starts, limits, strides, rev, out_shape = _basic_region(x.shape, entries)
    y = x
    if starts != [0] * x.ndim or limits != list(x.shape) or any(s != 1 for s in strides):
        y = lax.slice(y, tuple(starts), tuple(limits),
                      None if all(s == 1 for s in strides) else tuple(strides))
    if rev:
        y = lax.rev(y, tuple(rev))
    dyn = [(v, a) for k, v, a in entries if k == "dyn"]
    if dyn:
        where = {a: v for v, a in dyn}
        begin = [where[a] if a in where else 0
                 for a in range(y.ndim)]
        sizes = tuple(1 if a in where else d for a, d in enumerate(y.shape))
        y = lax.dynamic_slice(y, begin, sizes, allow_negative_indices=False)
    if any(k == "none" for k, _, _ in entries):
        return lax.reshape(y, out_shape) if y.shape != out_shape else y
    dropped = tuple(a for k, _, a in entries if k in ("int", "dyn"))
    return lax.squeeze(y, dropped) if dropped else y


# --- integer arrays: one gather / scatter ------------------------------------------------------

def _index_dtype(entries, shape):
    traced64 = any(isinstance(v, Tracer) and np.dtype(v.dtype).itemsize == 8
                   for k, v, _ in entries if k == "adv")
    return np.dtype(np.int64) if traced64 or max(shape, default=0) >= 2**31 else np.dtype(
        np.int32)


def _advanced_layout(entries):
    """Broadcast shape of the integer arrays, and where it goes in the result (NumPy rule:
    in place when the arrays are adjacent in the index, else at the front)."""
    adv_pos = [i for i, (k, _, _) in enumerate(entries) if k == "adv"]
    if not adv_pos:  # only strided slices (an update): their iotas are the whole index
        return (), True, len(entries)
    bshape = _promote.broadcast_shapes(*(np.shape(v) if not isinstance(v, Tracer) else v.shape
                                         for k, v, _ in entries if k == "adv"), name="indexing")
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    return bshape, adjacent, adv_pos[0]


def _gather_plan(shape, entries):
    """Result shape S, the (operand axis, result position) of each whole (window) axis, and the
    index vector's components: (operand axis, index values, result positions of their dims)."""
    bshape, adjacent, first = _advanced_layout(entries)
    bstart = sum(1 for k, _, _ in entries[:first] if k in ("slice", "none")) if adjacent else 0
    bdims = tuple(range(bstart, bstart + len(bshape)))
    out_shape = [] if adjacent else list(bshape)
    windows, comps = [], []
    for i, (kind, value, axis) in enumerate(entries):
        if kind == "adv":
            if adjacent and i == first:
                out_shape.extend(bshape)
            comps.append((axis, value, bdims))
        elif kind == "none":
            out_shape.append(1)
        elif kind == "slice":  # whole axes stay windows, others become iota components
            start, stop, step = value
            n = _count(start, stop, step)
            if (start, step, n) == (0, 1, shape[axis]):
                windows.append((axis, len(out_shape)))
            else:
                comps.append((axis, np.arange(start, stop, step), (len(out_shape),)))
            out_shape.append(n)
    return tuple(out_shape), windows, comps


def _index_array(out_shape, windows, comps, dtype):
    """Stack the components into indices of shape (S without window axes) + (k,)."""
    wpos = {p for _, p in windows}
    keep = [p for p in range(len(out_shape)) if p not in wpos]
    nw_shape = tuple(out_shape[p] for p in keep)
    remap = {p: i for i, p in enumerate(keep)}
    parts = []
    for _, value, where in comps:
        dims = tuple(remap[p] for p in where)
        if isinstance(value, Tracer):
            if value.dtype != dtype:
                value = lax.convert_element_type(value, dtype)
            b_shape = tuple(nw_shape[d] for d in dims)
            if value.shape != b_shape:
                value = _promote.broadcast_to_shape(value, b_shape)
            parts.append(lax.broadcast_in_dim(value, nw_shape + (1,), dims))
        else:
            full = [1] * len(nw_shape)
            value = np.asarray(value, dtype)
            value = np.broadcast_to(value, tuple(nw_shape[d] for d in dims))
            for d, n in zip(dims, value.shape, strict=True):
                full[d] = n
            parts.append(np.broadcast_to(value.reshape(full), nw_shape)[..., None])
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts, axis=-1)
    return lax.concatenate(parts, len(nw_shape)) if len(parts) > 1 else parts[0]


def _gather(x, entries, mode, fill_value=None, unique_indices=False, indices_are_sorted=False):
    out_shape, windows, comps = _gather_plan(x.shape, entries)
    indices = _index_array(out_shape, windows, comps, _index_dtype(entries, x.shape))
    indexed = tuple(a for a, _, _ in comps)
    window_axes = {a for a, _ in windows}
    dnums = lax.GatherDimensionNumbers(offset_dims=tuple(p for _, p in windows),
                                       collapsed_slice_dims=indexed, start_index_map=indexed)
    sizes = tuple(d if a in window_axes else 1 for a, d in enumerate(x.shape))
    y = lax.gather(x, indices, dnums, sizes, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)
    assert tuple(y.shape) == out_shape, (y.shape, out_shape)
    return y


def getitem(x, idx):
    """`x[idx]` with NumPy semantics (see the module docstring for the lowering).

    Args:
      x: an Array or tracer.
      idx: ints, slices, None, Ellipsis, integer arrays (broadcast together), concrete boolean
        masks, or a tuple of those.
    Returns:
      The indexed array. An out-of-bounds index is clamped into range (as in JAX), or raises
      `OutOfBoundsIndexError` when `config.check_indices` is on.

    Example: `getitem(x, (0, slice(None, None, -1)))` is `x[0, ::-1]`.
    """
    x = _promote.to_operand(x)
    x, entries = _parse(x, idx, check=config.check_indices)
    if any(k == "adv" for k, _, _ in entries):
        return _gather(x, entries, mode="clip")
    return _basic_getitem(x, entries)


def _get(x, idx, mode, fill_value, unique_indices, indices_are_sorted):
    """`.at[idx].get(...)`: an explicit mode is honoured (and not checked by check_indices)."""
    x = _promote.to_operand(x)
    explicit = mode is not None
    x, entries = _parse(x, idx, check=config.check_indices and not explicit,
                        force_gather=explicit)
    if not any(k == "adv" for k, _, _ in entries):
        return _basic_getitem(x, entries)
    mode = _mode_name(mode, "clip")
    if mode == "fill" and fill_value is None:
        fill_value = _default_fill(x.dtype)
    return _gather(x, entries, mode=mode, fill_value=fill_value, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted)


def _mode_name(mode, default: str) -> str:
    if mode is None:
        return default
    name = str(getattr(mode, "name", mode)).lower()
    aliases = {"drop": "fill", "fill_or_drop": "fill", "clip": "clip", "fill": "fill",
               "promise_in_bounds": "promise_in_bounds"}
    if name not in aliases:
        raise ValueError(f"unknown indexing mode {mode!r}; use 'clip', 'fill', 'drop' or "
                         f"'promise_in_bounds'")
    return aliases[name]


def _default_fill(dt):
    """JAX's fill for out-of-bounds reads: NaN, the most negative int, the largest uint, True."""
    if dtypes.is_inexact(dt):
        return np.nan
    if dtypes.is_bool(dt):
        return True
    return int(np.iinfo(dt).min if dtypes.is_signed_int(dt) else np.iinfo(dt).max)


# --- updates: x.at[idx].set(v) and friends -----------------------------------------------------

_SCATTERS = {"set": "scatter", "add": "scatter_add", "mul": "scatter_mul", "min": "scatter_min",
             "max": "scatter_max"}
_ELEMENTWISE = {"add": "add", "mul": "mul", "min": "min", "max": "max"}


def _update_values(values, dt, shape, name: str):
    """Cast the update to x's dtype (as JAX) and broadcast it to the indexed shape."""
    if isinstance(values, (Array, Tracer)):
        v = values if values.dtype == dt else lax.convert_element_type(values, dt)
    else:
        v = np.asarray(values).astype(dt)
    given = vshape = tuple(v.shape)
    while len(vshape) > len(shape) and vshape[0] == 1:  # NumPy drops extra leading 1s
        vshape = vshape[1:]
    if vshape != tuple(v.shape):
        v = lax.reshape(v, vshape) if not isinstance(v, np.ndarray) else v.reshape(vshape)
    if _promote.broadcast_shapes(vshape, shape, name=name) != tuple(shape):
        raise errors.ShapeError(f"{name}: an update of shape {given} cannot be "
                                f"broadcast to the indexed shape {tuple(shape)}")
    if isinstance(v, np.ndarray) and v.shape == tuple(shape):
        return v
    # a broadcast in the program, not a constant of the whole indexed shape
    return _promote.broadcast_to_shape(v, shape)


def _basic_update(x, entries, values, op: str):
    """Static ints and slices of step +-1: a dynamic_update_slice of a contiguous block."""
    starts, limits, _, rev, out_shape = _basic_region(x.shape, entries)
    v = _update_values(values, x.dtype, out_shape, f"at[].{op}")
    block = tuple(hi - lo for lo, hi in zip(starts, limits, strict=True))
    v = v.reshape(block) if isinstance(v, np.ndarray) else lax.reshape(v, block)
    if rev:
        v = lax.rev(v, tuple(rev))
    if op != "set":
        current = lax.slice(x, tuple(starts), tuple(limits))
        v = getattr(lax, _ELEMENTWISE[op])(current, v)
    if block == tuple(x.shape):
        return v if not isinstance(v, np.ndarray) else lax.convert_element_type(v, x.dtype)
    return lax.dynamic_update_slice(x, v, [np.int32(s) for s in starts])


def _scatter(x, entries, values, op: str, mode, unique_indices, indices_are_sorted):
    out_shape, windows, comps = _gather_plan(x.shape, entries)
    indices = _index_array(out_shape, windows, comps, _index_dtype(entries, x.shape))
    v = _update_values(values, x.dtype, out_shape, f"at[].{op}")
    indexed = tuple(a for a, _, _ in comps)
    dnums = lax.ScatterDimensionNumbers(update_window_dims=tuple(p for _, p in windows),
                                        inserted_window_dims=indexed,
                                        scatter_dims_to_operand_dims=indexed)
    return getattr(lax, _SCATTERS[op])(x, indices, v, dnums, indices_are_sorted=indices_are_sorted,
                                       unique_indices=unique_indices, mode=mode)


def _update(x, idx, values, op: str, *, mode=None, indices_are_sorted=False,
            unique_indices=False):
    """`x` with `x[idx]` combined with `values` by `op` ("set", "add", "mul", "min", "max")."""
    x = _promote.to_operand(x)
    shape = tuple(x.shape)
    explicit = mode is not None
    xr, entries = _parse(x, idx, check=config.check_indices and not explicit,
                         force_gather=explicit)
    basic = not any(k in ("adv", "dyn") for k, _, _ in entries) and all(
        v[2] in (1, -1) for k, v, _ in entries if k == "slice")
    if basic:
        y = _basic_update(xr, entries, values, op)
    else:
        if not any(k == "adv" for k, _, _ in entries):  # traced scalars: drop, not clamp
            entries = [("adv", v, a) if k in ("int", "dyn") else (k, v, a)
                       for k, v, a in entries]
        y = _scatter(xr, entries, values, op, _mode_name(mode, "fill"), unique_indices,
                     indices_are_sorted)
    return y if tuple(y.shape) == shape else lax.reshape(y, shape)


def _ones_like(x, dt):
    return lax.broadcast_in_dim(np.ones((), dt), tuple(x.shape), ())


class IndexUpdateRef:
    """`x.at[idx]`: functional versions of `x[idx] = v`, `x[idx] += v`, ...

    Each method returns a new array. Repeated indices accumulate for add/mul/min/max; for set
    one of the values wins. The update is broadcast to the shape of `x[idx]` and cast to x's
    dtype. Keyword args: `mode` ("clip", "fill"/"drop", "promise_in_bounds"; default: updates at
    out-of-bounds indices are dropped, as in JAX; `get` clamps), `indices_are_sorted`,
    `unique_indices` (hints passed to the scatter).

    Example: `x.at[jnp.array([0, 0])].add(1.0)` adds 2 to x[0].
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False):
        """`x[idx]`; with `mode="fill"` out-of-bounds reads give `fill_value` (NaN default)."""
        return _get(self.array, self.index, mode, fill_value, unique_indices, indices_are_sorted)

    def _do(self, op, values, kw):
        return _update(self.array, self.index, values, op, **kw)

    def set(self, values, **kw):
        """`x[idx] = values`."""
        return self._do("set", values, kw)

    def add(self, values, **kw):
        """`x[idx] += values` (repeated indices accumulate)."""
        return self._do("add", values, kw)

    def subtract(self, values, **kw):
        """`x[idx] -= values` (repeated indices accumulate)."""
        return self._do("add", _negate(values), kw)

    def multiply(self, values, **kw):
        """`x[idx] *= values` (repeated indices accumulate)."""
        return self._do("mul", values, kw)

    mul = multiply

    def divide(self, values, **kw):
        """`x[idx] /= values`; integer arrays give a float result, as in JAX."""
        x = _promote.to_operand(self.array)
        dt = x.dtype if dtypes.is_inexact(x.dtype) else dtypes.canonicalize(
            dtypes.default_float())
        x = x if x.dtype == dt else lax.convert_element_type(x, dt)
        denom = _update(_ones_like(x, dt), self.index, values, "mul", **kw)
        return lax.div(x, denom)

    def power(self, values, **kw):
        """`x[idx] **= values` (inexact dtypes: lax.pow has no integer form)."""
        x = _promote.to_operand(self.array)
        exponent = _update(_ones_like(x, x.dtype), self.index, values, "mul", **kw)
        return lax.pow(x, exponent)

    def min(self, values, **kw):
        """`x[idx] = minimum(x[idx], values)`."""
        return self._do("min", values, kw)

    def max(self, values, **kw):
        """`x[idx] = maximum(x[idx], values)`."""
        return self._do("max", values, kw)

    def apply(self, func, **kw):
        """`x[idx] = func(x[idx])`, for indices without repeats (one read, one write)."""
        mode = kw.pop("mode", None)
        current = self.get(mode=mode)
        return self._do("set", func(current), dict(kw, mode=mode))


def _negate(values):
    if isinstance(values, (Array, Tracer)):
        return lax.neg(values)
    return -np.asarray(values) if not isinstance(values, (int, float, complex)) else -values


class IndexUpdateHelper:
    """The `x.at` property: `x.at[idx]` is an `IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"IndexUpdateHelper({self.array!r})"


# --- take / take_along_axis --------------------------------------------------------------------

def _canonical_axis(axis: int, ndim: int, name: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(f"{name}: axis {axis} is out of range for an array of rank "
                                f"{ndim}")
    return axis % ndim


def _take_mode(mode, fill_value, indices, size: int, dt):
    """NumPy/JAX modes of take: returns (gather mode, fill value, indices to use)."""
    name = "fill" if mode is None else str(getattr(mode, "name", mode)).lower()
    if name == "wrap":
        if isinstance(indices, (Array, Tracer)):
            return "clip", None, lax.rem(lax.add(lax.rem(indices, size), size), size)
        return "clip", None, np.mod(np.asarray(indices), size)
    if name == "raise":
        value = _concrete(indices)
        if value is None:
            raise errors.ConcretizationError(
                "take(mode='raise') needs concrete indices to check them; under a "
                "transformation use mode='clip', 'wrap' or 'fill'")
        _check_bounds(value, 0, size)
        return "clip", None, value
    if name == "clip":  # NumPy's clip: negative indices clamp to 0, they do not count back
        if isinstance(indices, (Array, Tracer)):
            return "clip", None, lax.clamp(0, indices, size - 1)
        return "clip", None, np.clip(np.asarray(indices), 0, size - 1)
    name = _mode_name(name, "fill")
    if name == "fill" and fill_value is None:
        fill_value = _default_fill(dt)
    return name, fill_value, indices


def take(a, indices, axis=None, mode=None, fill_value=None, unique_indices=False,
         indices_are_sorted=False):
    """Elements of `a` at `indices` along `axis` (of the flattened `a` when axis is None).

    The result has shape a.shape[:axis] + indices.shape + a.shape[axis+1:]. As in JAX, the
    default mode is "fill": out-of-bounds indices read `fill_value` (NaN for floats); "clip",
    "wrap" and "raise" (concrete indices only) are accepted too. Negative indices count from
    the end.

    Example: `take(x, jnp.array([2, 0]), axis=1)` is `x[:, [2, 0]]`.
    """
    a = _promote.to_operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (int(np.prod(a.shape)),)), 0
    axis = _canonical_axis(axis, a.ndim, "take")
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices, dtype=np.int32 if len(indices) == 0 else None)
    gmode, fill_value, indices = _take_mode(mode, fill_value, indices, a.shape[axis], a.dtype)
    index = (slice(None),) * axis + (indices,)
    a, entries = _parse(a, index, check=config.check_indices and mode is None,
                        force_gather=True)
    return _gather(a, entries, mode=gmode, fill_value=fill_value, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """Pick `arr` values along `axis` at `indices` (same rank as arr; other axes broadcast).

    The companion of `argsort`: `take_along_axis(x, argsort(x, axis=1), axis=1)` sorts rows.
    Modes are as in `take` (default "fill").
    """
    arr = _promote.to_operand(arr)
    if axis is None:
        arr, axis = lax.reshape(arr, (int(np.prod(arr.shape)),)), 0
    axis = _canonical_axis(axis, arr.ndim, "take_along_axis")
    ishape = tuple(np.shape(indices) if not isinstance(indices, (Array, Tracer))
                   else indices.shape)
    if len(ishape) != arr.ndim:
        raise errors.ShapeError(f"take_along_axis: indices of shape {ishape} must have the rank "
                                f"of arr {tuple(arr.shape)}")
    gmode, fill_value, indices = _take_mode(mode, fill_value, indices, arr.shape[axis], arr.dtype)
    index = []
    for d, n in enumerate(arr.shape):
        if d == axis:
            index.append(indices)
        else:  # an iota along axis d, broadcast against the indices
            index.append(np.arange(n, dtype=np.int32).reshape(
                [n if e == d else 1 for e in range(arr.ndim)]))
    arr, entries = _parse(arr, tuple(index), check=config.check_indices and mode is None,
                          force_gather=True)
    return _gather(arr, entries, mode=gmode, fill_value=fill_value)
