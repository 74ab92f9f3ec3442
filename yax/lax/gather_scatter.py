"""yax.lax indexing built on gather and scatter: index_take (NumPy advanced indexing along
some axes) and scatter_sub.
"""

from __future__ import annotations

import operator

import numpy as np

from yax.lax import elementwise as ew
from yax.lax import shape, slicing
from yax.runtime.values import as_operand, aval_of

__all__ = ["index_take", "scatter_sub"]


def index_take(src, idxs, axes):
    """src indexed by the columns of idxs (N, len(axes)) along `axes` (NumPy advanced
    indexing: the N results come first when the axes are not adjacent)."""
    src, idxs = as_operand(src), as_operand(idxs)
    src_shape, (n, k) = aval_of(src).shape, aval_of(idxs).shape
    axes = tuple(operator.index(a) % len(src_shape) for a in axes)
    dt = aval_of(idxs).dtype
    # negative indices count from the end, as in NumPy indexing (larger ones are clamped)
    bounds = shape.broadcast_in_dim(as_operand(np.array([src_shape[a] for a in axes], dt)),
                                    (n, k), (1,))
    zeros = shape.broadcast_in_dim(as_operand(np.zeros((), dt)), (n, k), ())
    idxs = ew.select(ew.lt(idxs, zeros), ew.add(idxs, bounds), idxs)
    kept = len(src_shape) - k
    dnums = slicing.GatherDimensionNumbers(offset_dims=tuple(range(1, kept + 1)),
                                           collapsed_slice_dims=tuple(sorted(axes)),
                                           start_index_map=axes)
    out = slicing.gather(src, idxs, dnums,
                         tuple(1 if d in axes else size for d, size in enumerate(src_shape)))
    first = min(axes)
    if sorted(axes) != list(range(first, first + k)) or first == 0:
        return out
    # adjacent axes: NumPy puts the N results where the axes were
    return shape.transpose(out, (*range(1, first + 1), 0, *range(first + 1, kept + 1)))


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with `updates` subtracted at the scattered positions (scatter_add of -updates)."""
    return slicing.scatter_add(operand, scatter_indices, ew.neg(as_operand(updates)),
                               dimension_numbers, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
