"""yax.dtypes: the public names of jax.dtypes, over yax's dtype lattice (yax/core/dtypes.py) and
the NumPy-style helpers of yax.numpy (yax/numpy/dtypes_api.py).

    yax.dtypes.canonicalize_dtype(np.float64)   # float32 unless x64 is enabled
    yax.dtypes.issubdtype(yax.dtypes.bfloat16, np.floating)   # True
"""

from __future__ import annotations

import numpy as np

from yax.core import dtypes as _core
from yax.errors import TypePromotionError
from yax.interpreters.ad_util import float0
from yax.numpy import dtypes_api as _api
from yax.numpy.dtypes_api import result_type as _result_type

__all__ = ["bfloat16", "canonicalize_dtype", "finfo", "iinfo", "issubdtype", "result_type",
           "float0", "scalar_type_of", "itemsize_bits", "TypePromotionError", "extended",
           "prng_key"]

bfloat16 = _core.bfloat16.type


def _dtype_of(x):
    """A dtype from a dtype, a scalar type (np.float32, yax.dtypes.bfloat16) or an array."""
    if isinstance(x, type):
        return np.dtype(x)
    return getattr(x, "dtype", x)


def finfo(dtype):
    """Machine limits of a floating dtype (bfloat16 included); accepts types and arrays."""
    return _api.finfo(_dtype_of(dtype))


def iinfo(dtype):
    """Machine limits of an integer dtype; accepts types and arrays."""
    return _api.iinfo(_dtype_of(dtype))


def issubdtype(arg1, arg2) -> bool:
    """NumPy's issubdtype with bfloat16 under floating; the extended categories (`extended`,
    `prng_key`) contain the dtype of typed keys (`key<fry>`) and no NumPy dtype."""
    if getattr(arg1, "extended", False) is True:  # a typed key's dtype: its category class
        arg1 = arg1.type
    if isinstance(arg2, type) and issubclass(arg2, extended):
        return isinstance(arg1, type) and issubclass(arg1, arg2)
    if isinstance(arg1, type) and issubclass(arg1, extended):
        return False
    return _api.issubdtype(arg1, arg2)


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False):
    """The dtype yax computes `dtype` in: 64-bit types narrow to 32 bits unless x64 is enabled."""
    return _core.canonicalize(np.dtype(dtype))


def result_type(*args, return_weak_type_flag: bool = False):
    """JAX's promotion of the arguments' dtypes (Python scalars weakly typed); with
    `return_weak_type_flag`, also whether the result is weakly typed."""
    dtype = _result_type(*args)
    if not return_weak_type_flag:
        return dtype
    weak = bool(args) and all(_core.is_python_scalar(a) or getattr(
        getattr(a, "aval", None), "weak_type", False) for a in args)
    return dtype, weak


def scalar_type_of(x) -> type:
    """The Python scalar type (bool, int, float, complex) matching `x`'s dtype."""
    dt = np.dtype(getattr(x, "dtype", None) or np.result_type(x))
    if dt == np.bool_:
        return bool
    if np.issubdtype(dt, np.integer) or _core.is_int(dt):  # ml_dtypes' int4, ... too
        return int
    if _core.is_float(dt) or np.issubdtype(dt, np.floating):
        return float
    if np.issubdtype(dt, np.complexfloating):
        return complex
    raise TypeError(f"scalar_type_of: no Python scalar type for {dt}")


def itemsize_bits(dtype) -> int:
    """The size of one element of `dtype` in bits (bool counts as 8, int4 as 4, as JAX)."""
    return _core.bit_width(dtype)


class extended(np.generic):
    """The abstract category of JAX's extended dtypes: in yax, the dtype of typed PRNG keys."""


class prng_key(extended):
    """JAX's category of typed PRNG key dtypes: `issubdtype(yax.random.key(0).dtype,
    dtypes.prng_key)` is True, and False for raw uint32 keys (as in jax)."""
