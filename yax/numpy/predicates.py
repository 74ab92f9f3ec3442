"""yax.numpy predicates: isreal, iscomplex, isrealobj, iscomplexobj, array_equal, array_equiv,
isscalar and iterable.
"""

from __future__ import annotations

import numpy as np

from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.trace import Tracer
from yax.numpy import creation, reductions, ufuncs
from yax.numpy._arguments import arr
from yax.runtime.array import Array

__all__ = ["isreal", "iscomplex", "iscomplexobj", "isrealobj", "array_equal", "array_equiv",
           "isscalar", "iterable"]


def isreal(x):
    """Elementwise: the imaginary part is zero (always true for real dtypes)."""
    x = arr("isreal", x)
    if dtypes.is_complex(x.dtype):
        return ufuncs.imag(x) == 0
    return creation.ones(x.shape, np.bool_)


def iscomplex(x):
    """Elementwise: the imaginary part is nonzero (always false for real dtypes)."""
    x = arr("iscomplex", x)
    if dtypes.is_complex(x.dtype):
        return ufuncs.imag(x) != 0
    return creation.zeros(x.shape, np.bool_)


def iscomplexobj(x) -> bool:
    """True if `x` has a complex dtype (a Python bool, decided from the type alone)."""
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return np.issubdtype(np.dtype(dt), np.complexfloating)


def isrealobj(x) -> bool:
    """True if `x` does not have a complex dtype."""
    return not iscomplexobj(x)


def array_equal(a1, a2, equal_nan: bool = False):
    """True (a bool Array) if both have one shape and equal elements."""
    a, b = arr("array_equal", a1), arr("array_equal", a2)
    if a.shape != b.shape:
        return creation.asarray(False)
    eq = a == b
    if equal_nan and (dtypes.is_inexact(a.dtype) or dtypes.is_inexact(b.dtype)):
        eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b)))
    return reductions.all(eq)


def array_equiv(a1, a2):
    """True (a bool Array) if the arrays broadcast together and are equal everywhere."""
    a, b = arr("array_equiv", a1), arr("array_equiv", a2)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return creation.asarray(False)
    return reductions.all(a == b)


def isscalar(element) -> bool:
    """True for Python and NumPy scalars and 0-d arrays (as in JAX)."""
    if isinstance(element, (Array, Tracer)):
        return element.ndim == 0
    if isinstance(element, TypedScalar):
        return True
    if isinstance(element, (np.ndarray,)):
        return element.ndim == 0
    return np.isscalar(element) and not isinstance(element, (str, bytes))


def iterable(y) -> bool:
    """True if `iter(y)` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True
