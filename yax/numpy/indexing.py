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

The pieces live in _index_parse (canonicalising), _index_gather (reading) and _index_update
(`.at[...]`); this module holds take/take_along_axis and gathers the rest.
"""

from __future__ import annotations

import operator

import numpy as np

from yax import errors, lax
from yax.config import config
from yax.core.trace import Tracer
from yax.errors import NonConcreteBooleanIndexError  # noqa: F401  (re-exported)
from yax.numpy import _promote
from yax.numpy._index_gather import (
    _default_fill,
    _gather,
    _mode_name,
    getitem,  # noqa: F401  (re-exported)
)
from yax.numpy._index_parse import (
    _check_bounds,
    _concrete,
    _parse,
)
from yax.numpy._index_update import IndexUpdateHelper, IndexUpdateRef  # noqa: F401  (re-exported)
from yax.runtime.array import Array

__all__ = ["take", "take_along_axis"]


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


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of `a` at `indices` along `axis` (of the flattened `a` when axis is None).

    The result has shape a.shape[:axis] + indices.shape + a.shape[axis+1:]. As in JAX, the
    default mode is "fill": out-of-bounds indices read `fill_value` (NaN for floats); "clip",
    "wrap" and "raise" (concrete indices only) are accepted too. Negative indices count from
    the end.

    Example: `take(x, jnp.array([2, 0]), axis=1)` is `x[:, [2, 0]]`.
    The parameters come in jax's order; `out` must be None (Arrays are immutable), as in jax.
    """
    if out is not None:
        raise NotImplementedError("take: out= is not supported (yax arrays are immutable); use "
                                  "the returned array")
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


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """Pick `arr` values along `axis` at `indices` (same rank as arr; other axes broadcast).

    The companion of `argsort`: `take_along_axis(x, argsort(x, axis=1), axis=1)` sorts rows.
    Modes are as in `take` (default "fill"). `wrap_negative_indices` (JAX's meaning): True
    counts a negative index from the end before the mode applies (so "clip" clamps -1 to the
    last element); False makes it out of bounds ("fill" reads fill_value, "clip" clamps to 0);
    None is True except for mode "promise_in_bounds".
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
    indices = _negative_indices(indices, arr.shape[axis], mode, wrap_negative_indices)
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


def _negative_indices(indices, size: int, mode, wrap):
    """Negative `indices` made explicit for take_along_axis: first `+ size` when wrapped; what
    is still negative is out of bounds, replaced by `size` (so "fill" fills) or by 0 (what
    "clip" and "promise_in_bounds" clamp it to)."""
    name = "fill" if mode is None else str(getattr(mode, "name", mode)).lower()
    if wrap is None:
        wrap = name != "promise_in_bounds"
    out_of_bounds = size if name in ("fill", "drop") else 0
    if not isinstance(indices, (Array, Tracer)):
        indices = np.asarray(indices)
        if indices.dtype.itemsize < 4:
            indices = indices.astype(np.result_type(indices.dtype, np.int32))
        if wrap:
            indices = np.where(indices < 0, indices + size, indices)
        return np.where(indices < 0, out_of_bounds, indices)
    if np.dtype(indices.dtype).itemsize < 4:  # room for `size`
        indices = lax.convert_element_type(indices, np.result_type(indices.dtype, np.int32))
    if wrap:
        indices = lax.select(lax.lt(indices, lax.full_like(indices, 0)),
                             lax.add(indices, lax.full_like(indices, size)), indices)
    return lax.select(lax.lt(indices, lax.full_like(indices, 0)),
                      lax.full_like(indices, out_of_bounds), indices)
