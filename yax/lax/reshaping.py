"""yax.lax shape changes composed of the shape primitives: split, stack, unstack, tile, collapse,
broadcast_shapes and broadcast_like.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from yax import errors
from yax.lax import shape, slicing
from yax.runtime.values import as_operand, aval_of

__all__ = ["split", "stack", "unstack", "tile", "collapse", "broadcast_shapes", "broadcast_like"]


def split(operand, sizes, axis: int = 0):
    """Split `operand` along `axis` into pieces of the given sizes (which sum to its size)."""
    operand = as_operand(operand)
    aval = aval_of(operand)
    axis = operator.index(axis) % builtins.max(aval.ndim, 1)
    sizes = [operator.index(s) for s in sizes]
    if sum(sizes) != aval.shape[axis] or any(s < 0 for s in sizes):
        raise errors.ShapeError(f"split: sizes {sizes} must be non-negative and sum to the size "
                                f"of axis {axis} of {aval.str_short()}")
    starts = np.cumsum([0] + sizes)
    return [slicing.slice_in_dim(operand, int(lo), int(hi), axis=axis)
            for lo, hi in zip(starts[:-1], starts[1:], strict=True)]


def stack(operands, axis: int = 0):
    """Stack arrays of one shape along a new axis `axis`."""
    operands = [as_operand(x) for x in operands]
    if not operands:
        raise errors.ShapeError("stack needs at least one operand")
    ndim = aval_of(operands[0]).ndim
    axis = operator.index(axis) % (ndim + 1)
    return shape.concatenate([shape.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis: int = 0):
    """The slices of `x` along `axis`, as a tuple of arrays of rank x.ndim - 1."""
    x = as_operand(x)
    aval = aval_of(x)
    if aval.ndim == 0:
        raise errors.ShapeError("unstack needs an array of rank >= 1")
    axis = operator.index(axis) % aval.ndim
    return tuple(slicing.index_in_dim(x, i, axis=axis, keepdims=False)
                 for i in range(aval.shape[axis]))


def tile(operand, reps):
    """Repeat `operand` reps[i] times along axis i (len(reps) == operand.ndim)."""
    operand = as_operand(operand)
    aval = aval_of(operand)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != aval.ndim:
        raise errors.ShapeError(f"tile: reps {reps} must have one entry per axis of "
                                f"{aval.str_short()}")
    interleaved = tuple(v for r, s in zip(reps, aval.shape, strict=True) for v in (r, s))
    dims = tuple(range(1, 2 * aval.ndim, 2))
    out = shape.broadcast_in_dim(operand, interleaved, dims)
    return shape.reshape(out, tuple(r * s for r, s in zip(reps, aval.shape, strict=True)))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """Merge axes start_dimension .. stop_dimension - 1 of `operand` into one."""
    operand = as_operand(operand)
    s = aval_of(operand).shape
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(s))
    return shape.reshape(operand, s[:lo] + (math.prod(s[lo:hi]),) + s[hi:])


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the given shapes, as a tuple."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        # worded as jax words it: libraries' tests match this text
        raise errors.ShapeError(
            f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy style) to the shape of `like_arr`."""
    arr, like = as_operand(arr), aval_of(as_operand(like_arr))
    a = aval_of(arr)
    target = broadcast_shapes(a.shape, like.shape)
    dims = tuple(range(len(target) - a.ndim, len(target)))
    return shape.broadcast_in_dim(arr, target, dims)
