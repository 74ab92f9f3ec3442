"""yax.lax array construction: full, full_like, empty and complex (x + 1j * y).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.lax import elementwise as ew
from yax.lax import shape
from yax.runtime.values import as_operand, aval_of

__all__ = ["full", "full_like", "empty", "complex"]


def full(shape_, fill_value, dtype=None, *, sharding=None):
    """An array of `shape_` filled with `fill_value` (its dtype unless `dtype` is given)."""
    del sharding
    shape_ = (shape_,) if isinstance(shape_, int) else tuple(int(s) for s in shape_)
    value = as_operand(fill_value)
    if aval_of(value).ndim != 0:
        raise errors.ShapeError(f"full: fill_value must be a scalar, got shape "
                                f"{aval_of(value).shape}")
    if dtype is not None:
        value = ew.convert_element_type(value, dtypes.canonicalize(np.dtype(dtype)))
    return shape.broadcast_in_dim(value, shape_, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    del sharding
    aval = aval_of(as_operand(x))
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype)


def empty(shape_, dtype, *, out_sharding=None):
    """An array of `shape_` and `dtype` (zeros: XLA has no uninitialised memory to offer)."""
    del out_sharding
    return full(shape_, 0, dtype)


def complex(x, y):
    """x + 1j * y elementwise, for float x and y of one dtype."""
    x, y = as_operand(x), as_operand(y)
    dt = aval_of(x).dtype
    if not dtypes.is_float(dt) or aval_of(y).dtype != dt:
        raise errors.DTypeError(f"complex needs two float operands of one dtype, got "
                                f"{aval_of(x).str_short()} and {aval_of(y).str_short()}")
    cdt = np.result_type(dt, np.complex64)
    imag_unit = as_operand(np.asarray(1j, cdt))
    return ew.add(ew.convert_element_type(x, cdt),
                  ew.mul(ew.convert_element_type(y, cdt), imag_unit))
