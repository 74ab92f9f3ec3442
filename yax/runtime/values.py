"""Turning user values into operands: the one place that makes Arrays from Python scalars and
NumPy data, and that reads a value's aval.

Every floor above the runtime converts values through here (eager evaluation, argument
handling of jit/grad/vmap, the numpy and lax wrappers), so a Python scalar becomes the same
weakly typed Array, and NumPy data is narrowed the same way, wherever it enters yax.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar, aval_of_value
from yax.core.trace import Tracer
from yax.runtime import backend, guards, transfer
from yax.runtime.array import Array, is_concrete


def aval_of(x) -> ShapedArray:
    """The aval of an operand: its own (Arrays, tracers, typed scalars), or that of a value."""
    aval = getattr(x, "aval", None)
    return aval if aval is not None else aval_of_value(x)


_scalar_arrays: dict = {}


def clear_scalar_arrays() -> None:
    """Forget the device copies of Python-scalar constants (`yax.clear_caches`)."""
    _scalar_arrays.clear()


def to_array(x) -> Array:
    if is_concrete(x):
        return x
    if type(x) is TypedScalar:
        device = backend.device_override()  # `yax.default_device` may change it
        if x.array is not None and device is None:
            return x.array
        # small cache: loops that reuse the same constants skip the host-to-device copy
        key = (x.value.tobytes(), x.aval, device)
        hit = _scalar_arrays.get(key)
        if hit is None:
            if len(_scalar_arrays) > 4096:
                _scalar_arrays.clear()
            hit = _scalar_arrays[key] = array_from_numpy(x.value, weak_type=x.aval.weak_type,
                                                         device=device)
        if device is None:
            x.array = hit
        return hit
    if isinstance(x, Tracer):
        raise errors.UnexpectedTracerError(
            f"a traced value {x.aval.str_short()} cannot become a concrete Array here")
    if dtypes.is_python_scalar(x):
        dt, weak = dtypes.scalar_type_of(x)
        return array_from_numpy(np.asarray(x, dtype=dtypes.canonicalize(dt)), weak_type=weak)
    return array_from_numpy(np.asarray(x))


def array_from_numpy(value, *, weak_type: bool = False, device=None) -> Array:
    """Copy NumPy data to the device (narrowing 64-bit types when x64 is off, with a warning)."""
    value = np.asarray(value)
    dt = dtypes.canonicalize(value.dtype, warn=True)
    if dt != value.dtype:
        value = value.astype(dt)
    device = device or backend.default_device()
    aval = ShapedArray(value.shape, dt, weak_type)
    guards.check("host_to_device", lambda: f"aval={aval.str_short()}, device={device}")
    return Array(transfer.device_put(value, device), aval)


def leaf_aval(x, path: str = "") -> ShapedArray:
    if type(x) is Array or isinstance(x, Tracer):
        return x.aval
    if dtypes.is_python_scalar(x):
        dt, weak = dtypes.scalar_type_of(x)
        return ShapedArray((), dtypes.canonicalize(dt), weak)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), dtypes.canonicalize(x.dtype, warn=True))
    if hasattr(x, "__array__") and hasattr(x, "dtype") and hasattr(x, "shape"):
        return ShapedArray(x.shape, dtypes.canonicalize(x.dtype, warn=True))
    if hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "weak_type"):
        # a ShapeDtypeStruct: a type without data, for eval_shape and jit(...).lower
        return ShapedArray(tuple(x.shape), dtypes.canonicalize(x.dtype), bool(x.weak_type))
    where = f" at {path}" if path else ""
    raise TypeError(f"argument{where} of type {type(x).__name__} is not an array; pass arrays, "
                    f"scalars or pytrees of them, or mark the argument static "
                    f"(static_argnums/static_argnames)")


def canonical_leaf(x):
    """Arrays and tracers pass through; NumPy data and Python scalars become Arrays (weak for
    Python scalars), so transformations only ever see values with avals."""
    if type(x) is Array or isinstance(x, Tracer):
        return x
    if dtypes.is_python_scalar(x):
        return to_array(x)
    return array_from_numpy(np.asarray(x))


def canonical_scalar(x) -> TypedScalar:
    dt, weak = dtypes.scalar_type_of(x)
    return TypedScalar.of(x, dtypes.canonicalize(dt), weak)


def as_operand(x):
    """Arrays and tracers pass through; Python scalars become typed scalars; NumPy data becomes
    an Array (so every operand a rule sees has an aval)."""
    if hasattr(x, "aval"):
        return x
    if dtypes.is_python_scalar(x):
        return canonical_scalar(x)
    return array_from_numpy(np.asarray(x))
