"""Reading `x[idx]` for yax.numpy.indexing: static ints and slices lower to `slice` (+ `rev`,
`squeeze`/`reshape`), traced scalar ints to `dynamic_slice`, integer arrays to one `gather`
whose index vector holds one component per indexed axis, laid out in the NumPy result shape.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.config import config
from yax.core import dtypes
from yax.core.avals import is_symbolic_dim
from yax.core.trace import Tracer
from yax.numpy import _promote
from yax.numpy._index_parse import (
    _count,
    _parse,
)

__all__ = ["getitem"]


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
    # yax.export's symbolic sizes are left out of the maximum (they have no static value)
    static = [d for d in shape if not is_symbolic_dim(d)]
    return np.dtype(np.int64) if traced64 or max(static, default=0) >= 2**31 else np.dtype(
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
    return int(dtypes.iinfo(dt).min if dtypes.is_signed_int(dt) else dtypes.iinfo(dt).max)
