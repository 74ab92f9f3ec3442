"""Functional updates for yax.numpy.indexing: `x.at[idx].set(v)`, `.add`, `.multiply`, `.min`,
`.max`, `.divide`, `.power`, `.apply` and `.get`, lowered to `dynamic_update_slice` or one
`scatter*`; out-of-bounds entries are dropped unless `mode=` says otherwise.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax.config import config
from yax.core import dtypes
from yax.core.trace import Tracer
from yax.numpy import _promote
from yax.numpy._index_gather import (
    _basic_region,
    _gather_plan,
    _get,
    _index_array,
    _index_dtype,
    _mode_name,
)
from yax.numpy._index_parse import (
    _parse,
)
from yax.runtime.array import Array

__all__ = ["IndexUpdateRef", "IndexUpdateHelper"]


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
