"""yax.lax slicing: static and dynamic slices, dynamic updates, gather and the scatter family.

Dynamic start indices may be Python ints, NumPy ints, Arrays or tracers. They are converted to
integer scalars of one dtype (StableHLO needs that); negative ones count from the end of their
axis (jax.lax's `allow_negative_indices=True`), then XLA clamps them so the slice fits.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import TypedScalar, is_symbolic_dim
from yax.core.trace import bind
from yax.lax import elementwise as ew
from yax.lax.shape import _axes, _identity, _ints, _shape, expand_dims, squeeze
from yax.primitives import slicing as sl
from yax.primitives.dim_as_value import dimension_as_value
from yax.primitives.scatter import scatter_primitives
from yax.primitives.slicing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from yax.runtime.values import as_operand

__all__ = ["slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "gather", "scatter", "scatter_add", "scatter_mul",
           "scatter_min", "scatter_max", "GatherDimensionNumbers", "ScatterDimensionNumbers",
           "GatherScatterMode"]


# --- static slices --------------------------------------------------------------------------------

def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001  (jax.lax's name)
    """operand[start_0:limit_0:stride_0, ...] with static, in-bounds, non-negative indices."""
    operand = as_operand(operand)
    shape = _shape(operand)
    start, limit = _ints("slice", start_indices), _ints("slice", limit_indices)
    strides = None if strides is None else _ints("slice", strides)
    if strides is not None and all(s == 1 for s in strides):
        strides = None
    if strides is None and start == (0,) * len(shape) and limit == shape:
        return _identity(operand)
    return bind(sl.slice_p, operand, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """Slice along one `axis`; None means the axis's start/end and negative counts from the end."""
    operand = as_operand(operand)
    shape = _shape(operand)
    (axis,) = _axes("slice_in_dim", (axis,), len(shape))
    n = shape[axis]
    # _ints, not int(): a transpose rule under yax.export slices at symbolic offsets
    start = 0 if start_index is None else _ints("slice_in_dim", (start_index,))[0]
    limit = n if limit_index is None else _ints("slice_in_dim", (limit_index,))[0]
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts = [0] * len(shape)
    limits, strides = list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """Take the static position `index` (negative from the end) along `axis`."""
    operand = as_operand(operand)
    shape = _shape(operand)
    (axis,) = _axes("index_in_dim", (axis,), len(shape))
    index, n = int(index), shape[axis]
    if not -n <= index < n:
        raise errors.ShapeError(f"index_in_dim: index {index} is out of bounds for axis {axis} of "
                                f"size {n} (shape {shape})")
    index %= n
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# --- dynamic slices -------------------------------------------------------------------------------

def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _split_indices(start_indices) -> list:
    """A sequence of scalars, or a rank-1 array/tracer, becomes a list of scalars."""
    if isinstance(start_indices, np.ndarray):
        return list(start_indices.tolist())
    if hasattr(start_indices, "aval"):
        if start_indices.aval.ndim != 1:
            raise errors.ShapeError(f"start indices must be a rank-1 array or a sequence of "
                                    f"scalars, got {start_indices.aval.str_short()}")
        return [squeeze(slice(start_indices, (i,), (i + 1,)), (0,))
                for i in range(start_indices.aval.shape[0])]
    return list(start_indices)


def _start_indices(name: str, shape, start_indices, allow_negative_indices=True) -> list:
    """Scalars of one integer dtype, with negative entries wrapped when allowed."""
    starts = [s.item() if isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu"
              else s for s in _split_indices(start_indices)]
    starts = [s if _is_static_int(s) else as_operand(s) for s in starts]
    if len(starts) != len(shape):
        raise errors.ShapeError(f"{name}: got {len(starts)} start indices for an operand of shape "
                                f"{shape}; pass one per axis")
    allow = allow_negative_indices
    allow = [allow] * len(shape) if isinstance(allow, bool) else list(allow)
    dynamic = [s for s in starts if not _is_static_int(s)]
    for s in dynamic:
        if s.aval.ndim != 0 or not dtypes.is_int(s.aval.dtype):
            raise errors.DTypeError(f"{name}: start indices must be integer scalars, got "
                                    f"{s.aval.str_short()}")
    pairs = [(s.aval.dtype, s.aval.weak_type) for s in dynamic] or [(dtypes.default_int(), True)]
    dt = dtypes.result_type(*pairs)[0]
    # (symbolic sizes of yax.export are left out: they have no static maximum)
    static = [d for d in shape if not is_symbolic_dim(d)]
    if static and max(static) > dtypes.iinfo(dt).max:  # e.g. int8 indices into a long axis
        dt = dtypes.result_type((dt, False), (dtypes.canonicalize(dtypes.int32), False))[0]
    out = []
    for s, n, neg in zip(starts, shape, allow, strict=True):
        if _is_static_int(s):
            if is_symbolic_dim(n):  # yax.export: a symbolic size; negative starts need it
                if neg and s < 0:
                    s = ew.add(TypedScalar(int(s), dt, weak_type=False),
                               dimension_as_value(n, dt))
                    out.append(s)
                else:
                    out.append(TypedScalar(max(int(s), 0), dt, weak_type=False))
                continue
            s = int(s) + n if neg and s < 0 else int(s)
            # XLA clamps into [0, n - size] anyway; clamping to [0, n] first keeps it in dtype
            out.append(TypedScalar(min(max(s, 0), n), dt, weak_type=False))
            continue
        signed = dtypes.is_signed_int(s.aval.dtype)
        if s.aval.dtype != dt:
            s = ew.convert_element_type(s, dt)
        if neg and signed:
            s = ew.select(ew.lt(s, 0), ew.add(s, dimension_as_value(n, dt)), s)
        out.append(s)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """operand[s_0:s_0 + slice_sizes[0], ...] for traced starts, each clamped so the slice fits."""
    operand = as_operand(operand)
    shape = _shape(operand)
    sizes = _ints("dynamic_slice", slice_sizes)
    starts = _start_indices("dynamic_slice", shape, start_indices, allow_negative_indices)
    if sizes == shape:  # every start clamps to 0: the whole operand
        return _identity(operand)
    return bind(sl.dynamic_slice_p, operand, *starts, slice_sizes=sizes)


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices=True):
    """dynamic_slice along one `axis`; the other axes are kept whole."""
    operand = as_operand(operand)
    shape = _shape(operand)
    (axis,) = _axes("dynamic_slice_in_dim", (axis,), len(shape))
    starts = [0] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices=True):
    """Take the traced position `index` along `axis` (clamped into range)."""
    operand = as_operand(operand)
    (axis,) = _axes("dynamic_index_in_dim", (axis,), len(_shape(operand)))
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """operand with the block at `start_indices` (clamped so it fits) replaced by `update`."""
    operand, update = as_operand(operand), as_operand(update)
    starts = _start_indices("dynamic_update_slice", _shape(operand), start_indices,
                            allow_negative_indices)
    return bind(sl.dynamic_update_slice_p, operand, update, *starts)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices=True):
    """dynamic_update_slice with a traced start along `axis` and 0 along the other axes."""
    operand = as_operand(operand)
    shape = _shape(operand)
    (axis,) = _axes("dynamic_update_slice_in_dim", (axis,), len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices=True):
    """Write `update` at position `index` of `axis`; `update` may lack that axis."""
    operand, update = as_operand(operand), as_operand(update)
    shape = _shape(operand)
    (axis,) = _axes("dynamic_update_index_in_dim", (axis,), len(shape))
    if len(_shape(update)) == len(shape) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# --- gather / scatter -----------------------------------------------------------------------------

def _gather_dnums(dn) -> GatherDimensionNumbers:
    """Any object with the five fields (e.g. jax's own) becomes ours, with int tuples."""
    fields = GatherDimensionNumbers._fields
    return GatherDimensionNumbers(*(_ints("gather", getattr(dn, f, ())) for f in fields))


def _scatter_dnums(dn) -> ScatterDimensionNumbers:
    fields = ScatterDimensionNumbers._fields
    return ScatterDimensionNumbers(*(_ints("scatter", getattr(dn, f, ())) for f in fields))


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather: one window of `slice_sizes` per index vector (the last axis of indices).

    `mode` None means PROMISE_IN_BOUNDS, as in jax.lax.gather (XLA then clamps the starts).
    With 'fill', windows that do not fit are filled with `fill_value` (default NaN for inexact
    dtypes, the minimum for signed ints, the maximum for unsigned ints, True for bool); 'clip'
    clamps the starts. See the slicing primitives' module docstring for the exact meaning.
    Example (x[i] for x of shape (5, 3), i of shape (k,)):
        gather(x, i[:, None], GatherDimensionNumbers((1,), (0,), (0,)), (1, 3))
    """
    # jax.lax.gather's default differs from GatherScatterMode.from_any(None) (FILL_OR_DROP)
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                      else mode)
    if fill_value is not None and mode == GatherScatterMode.FILL_OR_DROP:
        fill_value = np.asarray(fill_value).item()  # hashable, printable param
    else:
        fill_value = None
    return bind(sl.gather_p, as_operand(operand), as_operand(start_indices),
                dimension_numbers=_gather_dnums(dimension_numbers),
                slice_sizes=_ints("gather", slice_sizes),
                indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                mode=mode, fill_value=fill_value)


def _scatter(prim):
    def op(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        return bind(prim, as_operand(operand), as_operand(scatter_indices), as_operand(updates),
                    dimension_numbers=_scatter_dnums(dimension_numbers),
                    indices_are_sorted=bool(indices_are_sorted),
                    unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode))
    op.__name__ = prim.name
    how = {"scatter": "replaces the value (duplicate indices: one of them wins)",
           "scatter_add": "adds to it", "scatter_mul": "multiplies it",
           "scatter_min": "keeps the minimum", "scatter_max": "keeps the maximum"}[prim.name]
    op.__doc__ = (f"XLA's scatter: each update window is combined into `operand` at the start "
                  f"given by its index vector; `{prim.name}` {how}. Out-of-bounds windows are "
                  f"dropped by default (mode FILL_OR_DROP) or clamped (mode 'clip').")
    return op


scatter, scatter_add, scatter_mul, scatter_min, scatter_max = (
    _scatter(scatter_primitives[n])
    for n in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"))
