"""lax.shape_as_value: a shape as an int32 vector, symbolic dimensions of yax.export included
(each becomes the `dim_as_value` of its expression, computed from the argument shapes when
the exported program runs)."""

from __future__ import annotations

import numpy as np

from yax.core.avals import is_symbolic_dim
from yax.lax.shape import broadcast_in_dim, concatenate
from yax.primitives.dim_as_value import dimension_as_value
from yax.runtime.values import as_operand

__all__ = ["shape_as_value"]


def shape_as_value(shape):
    """The int32 vector of the dimensions of `shape`.

    Args:
      shape: a tuple of ints and (under yax.export) symbolic dimensions.
    Returns:
      int32[len(shape)]: a constant when every dimension is an int.

    Example: `lax.shape_as_value(x.shape)`.
    """
    shape = tuple(shape)
    if not any(is_symbolic_dim(d) for d in shape):
        return as_operand(np.asarray(shape, np.int32).reshape(len(shape)))
    parts = [broadcast_in_dim(as_operand(np.int32(d)) if not is_symbolic_dim(d)
                              else dimension_as_value(d, np.int32), (1,), ())
             for d in shape]
    return concatenate(parts, 0)
