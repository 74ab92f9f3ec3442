"""jax.lax's typing aliases (DotDimensionNumbers, PrecisionLike) and lax.dtype.
"""

from __future__ import annotations

import builtins

import numpy as np

from yax.core import dtypes

__all__ = ["DotDimensionNumbers", "PrecisionLike", "dtype"]


# Typing aliases, as jax.lax exports them.
DotDimensionNumbers = tuple


PrecisionLike = object


def dtype(x):
    """The canonical dtype of `x` (an array, scalar or dtype-like), as jax.lax.dtype."""
    if hasattr(x, "dtype") and not isinstance(x, type):
        return dtypes.canonicalize(np.dtype(x.dtype))
    if isinstance(x, (bool, int, float, builtins.complex)):
        return dtypes.canonicalize(dtypes.scalar_type_of(x)[0])
    return dtypes.canonicalize(np.dtype(x))
