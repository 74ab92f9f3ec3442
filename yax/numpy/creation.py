"""yax.numpy array creation: `array`, `zeros`, `full`, `arange`, `linspace`, `eye`, ...

Constants are built with NumPy on the host and moved to the device in one transfer. Inside `jit`
such a result is a concrete Array, which the staging trace captures as a constant (as in JAX).
Values that depend on a traced argument (`full_like(tracer, ...)`, `array([tracer, ...])`) are
built from lax operations, and so are `zeros`/`ones`/`full` of a non-scalar shape under a
transformation: a `broadcast_in_dim` of the fill value, as JAX stages them (a jaxpr prints the
same; XLA broadcasts a scalar instead of reading a constant of the whole shape).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax._resource_errors import check_allocation
from yax.core import dtypes
from yax.core.avals import TypedScalar, dims_of, is_symbolic_dim
from yax.core.trace import Tracer, is_eager
from yax.lax._util import out_sharding_param
from yax.lax.barriers import optimization_barrier
from yax.lax.elementwise import _convert_keep_weak, convert_element_type
from yax.lax.shape import broadcast_in_dim, concatenate, iota, reshape
from yax.numpy._promote import broadcast_to_shape, shape_of
from yax.primitives.dim_as_value import dimension_as_value
from yax.runtime.array import Array, is_concrete
from yax.runtime.values import array_from_numpy, to_array
from yax.transforms.api import device_put

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "eye", "identity", "copy", "tri"]

_SCALARS = (bool, int, float, complex)


def _canonical_dtype(dtype, default=None) -> np.dtype:
    if dtype is None:
        return dtypes.canonicalize(default if default is not None else dtypes.default_float())
    return dtypes.canonicalize(dtypes.dtype(dtype), warn=True)


def _shape_tuple(shape, name: str) -> tuple:
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__") and not isinstance(
            shape, (tuple, list)):
        shape = (shape,)
    try:
        dims = tuple(int(d.__index__()) for d in shape)
    except (errors.ConcretizationError, errors.TracerIntegerConversionError):
        raise
    except errors.ExportError:  # symbolic dimensions (yax.export): built by broadcasting
        return dims_of(shape)
    except (TypeError, AttributeError) as err:
        raise TypeError(f"{name}: shape must be an int or a tuple of ints, got {shape!r}") from err
    if any(d < 0 for d in dims):
        raise ValueError(f"{name}: negative dimensions are not allowed, got {dims}")
    return dims


def _const(value: np.ndarray, dt, weak: bool = False) -> Array:
    """One host-to-device transfer of NumPy data already in the canonical dtype `dt`."""
    return array_from_numpy(np.asarray(value, dtype=dt), weak_type=weak)


def _leaves(obj) -> list:
    if isinstance(obj, (list, tuple)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _leaf_type(x) -> tuple[np.dtype, bool]:
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, _SCALARS) and not isinstance(x, np.generic):
        return dtypes.scalar_type_of(x)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return np.dtype(x.dtype), False  # a duck-typed array (ShapeDtypeStruct): strongly typed
    # np.float64 subclasses float, but NumPy scalars are strongly typed
    return dtypes.canonicalize(np.asarray(x).dtype), False


def _check_int_range(leaves, dt) -> None:
    """Python ints that do not fit the result dtype are an error, not a silent wrap-around."""
    if not dtypes.is_int(dt):
        return
    info = dtypes.iinfo(dt)
    for x in leaves:
        if isinstance(x, int) and not isinstance(x, bool) and not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} is too large to convert to {dt}")


@out_sharding_param("array")
def array(object, dtype=None, copy: bool = True, order: str | None = "K", ndmin: int = 0, *,
          device=None, out_sharding=None):
    """Make an Array from an Array, tracer, NumPy array, scalar or nested lists/tuples of them.

    Args:
      object: the data. Lists may mix scalars, Arrays and (inside a transformation) tracers.
      dtype: the result dtype; by default JAX's promotion of the leaves' dtypes.
      copy: whether an Array comes back in a buffer of its own (as jax: a donated copy leaves
        the original alive); asarray does not copy.
      ndmin: minimum rank; leading axes of size 1 are added.
      device: a device (from `yax.devices()`) or a sharding to place the result on, as
        `yax.device_put` does (None: the default placement).
      out_sharding: the result's sharding (a PartitionSpec over the current mesh, or a
        NamedSharding); over Explicit mesh axes it is the result's type (`f32[8@X]`).

    Example:
      >>> jnp.array([1, 2.5])
      Array([1. , 2.5], dtype=float32)
    """
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"array: only C order is supported, got order={order!r}")
    if type(object) is TypedScalar:  # an inline constant from a lax/numpy wrapper
        object = to_array(object)
    if is_symbolic_dim(object):  # a symbolic dimension of yax.export, used as a value
        object = dimension_as_value(object)
    if isinstance(object, (Array, Tracer)):
        out = object if dtype is None else _astype(object, _canonical_dtype(dtype))
        if copy and out is object and type(object) is Array:
            out = _new_buffer(object)
    elif isinstance(object, (list, tuple)) and any(isinstance(x, Tracer)
                                                 for x in _leaves(object)):
        out = _stack_nested(object, dtype)
    else:
        out = _array_from_host(object, dtype)
    if ndmin > out.ndim:
        out = reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return placed(out, device)


def _new_buffer(x: Array) -> Array:
    """A copy of `x` in a buffer of its own, as jax's `copy=True`: donating one to a jitted
    function must not delete the other."""
    return optimization_barrier(x)


def placed(out, device):
    """`out` put on `device` (a device or a sharding) as `device_put` does; None: unchanged.
    Under a transformation the value stays where the program puts it, as for device_put."""
    return out if device is None else device_put(out, device)


def _array_from_host(object, dtype) -> Array:
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    leaves = _leaves(object)
    if object is None or any(x is None for x in leaves):  # jax's error, not an object array
        raise ValueError(f"None is not a valid value for jnp.array\n  at "
                         f"{errors.format_location(errors.user_location())}")
    if dtype is not None:
        dt = _canonical_dtype(dtype)
        weak = False
    elif isinstance(object, (list, tuple)):
        dt = dtypes.result_type(*(_leaf_type(x) for x in leaves))[0] if leaves else \
            dtypes.canonicalize(dtypes.default_float())
        weak = False
    else:
        dt, weak = _leaf_type(object)
        dt = dtypes.canonicalize(dt)
    _check_int_range(leaves, dt)
    if isinstance(object, (list, tuple)):
        object = _to_host(object)
    return _const(np.asarray(object).astype(dt, copy=False), dt, weak)


def _to_host(obj):
    if isinstance(obj, (list, tuple)):
        return [_to_host(o) for o in obj]
    return np.asarray(obj) if is_concrete(obj) else obj


def _stack_nested(obj, dtype):
    """`array` of nested lists holding tracers: convert the leaves, then stack level by level."""
    dt = _canonical_dtype(dtype) if dtype is not None else \
        dtypes.result_type(*(_leaf_type(x) for x in _leaves(obj)))[0]

    def build(o):
        if isinstance(o, (list, tuple)):
            if not o:
                raise ValueError("array: empty lists cannot be mixed with traced values")
            return _stack([_with_leading_axis(build(x)) for x in o])
        return _astype(o if isinstance(o, (Array, Tracer)) else array(o), dt)
    return build(obj)


def _with_leading_axis(a):
    """`a` with a new leading axis of 1, each element right after it is built: JAX's order
    and its `broadcast_in_dim` (a staged `jnp.array([...])` prints as JAX's)."""
    shape = tuple(shape_of(a))
    return broadcast_in_dim(a, (1, *shape), tuple(range(1, len(shape) + 1)))


def _stack(parts):
    """Arrays of one shape and dtype, each with a leading axis of 1, joined along it."""
    shapes = {tuple(a.shape) for a in parts}
    if len(shapes) > 1:
        raise errors.ShapeError(f"stack: all arrays need one shape, got "
                                f"{' and '.join(str(a.shape[1:]) for a in parts)}")
    return concatenate(parts, 0)


def _astype(x, dt):
    return convert_element_type(x, dt)


def asarray(a, dtype=None, order: str | None = None, *, copy: bool | None = None, device=None,
            out_sharding=None):
    """As `array`, without copying (Arrays are returned as they are when dtype matches);
    `device` and `out_sharding` as in `array`."""
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device,
                 out_sharding=out_sharding)


def copy(a, order: str | None = None):
    """A copy of `a` (Arrays are immutable, so this is `asarray`)."""
    return array(a, copy=True, order=order)


@out_sharding_param("zeros")
def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (default dtype: the default float type); `device` and `out_sharding`
    as in `array`.

    Example:
      >>> jnp.zeros((2, 3), jnp.int32).shape
      (2, 3)
    """
    dt, shape = _canonical_dtype(dtype), _shape_tuple(shape, "zeros")
    if any(map(is_symbolic_dim, shape)):
        return _broadcast_fill(0, shape, dt, False)
    check_allocation(shape, dt, "jnp.zeros")
    return placed(_filled(shape, 0, dt), device)


def ones(shape, dtype=None):
    """An array of ones (default dtype: the default float type)."""
    dt, shape = _canonical_dtype(dtype), _shape_tuple(shape, "ones")
    if any(map(is_symbolic_dim, shape)):
        return _broadcast_fill(1, shape, dt, False)
    check_allocation(shape, dt, "jnp.ones")
    return _filled(shape, 1, dt)


def _filled(shape: tuple, value, dt, weak: bool = False):
    """`shape` filled with the Python scalar `value`: eagerly one host transfer; under a
    transformation (and for a non-scalar shape) JAX's `broadcast_in_dim` of a scalar literal."""
    if shape and not is_eager():
        return broadcast_in_dim(TypedScalar(np.asarray(value, dt).item(), dt, weak), shape, ())
    return _const(np.full(shape, value, dt), dt, weak)


def empty(shape, dtype=None):
    """Like `zeros` (XLA has no uninitialised memory)."""
    return zeros(shape, dtype)


def _fill_type(fill_value, dtype) -> tuple[np.dtype, bool]:
    if dtype is not None:
        return _canonical_dtype(dtype), False
    dt, weak = _leaf_type(fill_value)
    return dtypes.canonicalize(dt), weak


def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value` (a scalar or an array broadcast to shape).

    The dtype defaults to that of `fill_value` (a Python scalar gives a weakly typed result).
    """
    shape = _shape_tuple(shape, "full")
    dt, weak = _fill_type(fill_value, dtype)
    if isinstance(fill_value, Tracer) or any(map(is_symbolic_dim, shape)):
        return _broadcast_fill(fill_value, shape, dt, weak)
    check_allocation(shape, dt, "jnp.full")
    if shape and not is_eager() and isinstance(fill_value, (*_SCALARS, np.generic)):
        return _filled(shape, fill_value, dt, weak)
    return _const(np.broadcast_to(np.asarray(fill_value).astype(dt), shape), dt, weak)


def _broadcast_fill(fill_value, shape, dt, weak):
    """A traced fill (or any fill of a traced-shape request) built with broadcast_in_dim."""
    if isinstance(fill_value, _SCALARS) and not isinstance(fill_value, np.generic):
        fill = TypedScalar(fill_value, dt, weak)
    else:
        fill = _convert_keep_weak(asarray(fill_value), dt, weak)
    if shape_of(fill) == tuple(shape) and not isinstance(fill, TypedScalar):
        return fill
    return broadcast_to_shape(fill, shape)


def _shape_of(a) -> tuple:
    aval = getattr(a, "aval", None)
    if aval is not None:
        return aval.shape
    shape = getattr(a, "shape", None)  # ShapeDtypeStruct and other duck-typed arrays
    return tuple(shape) if isinstance(shape, tuple) else np.shape(a)


def full_like(a, fill_value, dtype=None, shape=None):
    """An array like `a` (its shape and dtype unless given) filled with `fill_value`."""
    shape = tuple(_shape_of(a)) if shape is None else _shape_tuple(shape, "full_like")
    if dtype is not None:
        dt, weak = _canonical_dtype(dtype), False
    else:
        dt, weak = _leaf_type(a)
        dt = dtypes.canonicalize(dt)
    traced = isinstance(a, Tracer) or isinstance(fill_value, Tracer)
    if traced and shape != ():
        # depends on a traced value: build in the program, never as a captured constant
        return _broadcast_fill(fill_value, shape, dt, weak)
    if isinstance(fill_value, Tracer):
        return _broadcast_fill(fill_value, shape, dt, weak)
    return _const(np.broadcast_to(np.asarray(fill_value).astype(dt), shape), dt, weak)


def zeros_like(a, dtype=None, shape=None):
    """Zeros with the shape and dtype of `a` (unless given)."""
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    """Ones with the shape and dtype of `a` (unless given)."""
    return full_like(a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    """Like `zeros_like` (XLA has no uninitialised memory)."""
    return zeros_like(a, dtype, shape)


def _static_scalar(x, name: str, what: str):
    if isinstance(x, Tracer):
        raise errors.ConcretizationError(
            f"{name}: the {what} must be a concrete value, but it is traced "
            f"({x.aval.str_short()}). Its value decides the result's shape, so it must be known "
            f"when tracing: mark the argument static, e.g. `jit(f, static_argnums=...)`, or pass "
            f"a Python number.")
    if isinstance(x, Array):
        if x.ndim:
            raise ValueError(f"{name}: the {what} must be a scalar, got shape {x.shape}")
        return x.item()
    if isinstance(x, (list, tuple)):  # jax: TypeError for sequences, ValueError for arrays
        raise TypeError(f"{name}: the {what} must be a scalar or None, got a {type(x).__name__}")
    if x is not None and not is_symbolic_dim(x) and np.ndim(x) != 0:
        raise ValueError(f"{name}: the {what} must be a scalar, got {x!r}")  # jax: ValueError
    return x


@out_sharding_param("arange")
def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in [start, stop) with `step` (bounds must be static); `device` and
    `out_sharding` as in `array`.

    Example:
      >>> jnp.arange(3)
      Array([0, 1, 2], dtype=int32)
    """
    start = _static_scalar(start, "arange", "start")
    stop = _static_scalar(stop, "arange", "stop")
    step = _static_scalar(step, "arange", "step")
    given = [x for x in (start, stop, step) if x is not None]
    if is_symbolic_dim(start) and stop is None and step is None:  # arange(b) in yax.export
        dt = dtypes.default_int() if dtype is None else _canonical_dtype(dtype)
        return iota(dt, start)
    if dtype is None:
        dt = dtypes.result_type(*(_leaf_type(x) for x in given))[0]
    else:
        dt = _canonical_dtype(dtype)
    # ml_dtypes' narrow types count badly in their own arithmetic (float8_e8m0fnu has no 0):
    # count in a wide type, then convert (the values jax gives)
    count_dt = None if dt in dtypes.NARROW_INTS + dtypes.NARROW_FLOATS else dt
    if stop is None and step is None:
        value = np.arange(start, dtype=count_dt)
    else:
        value = np.arange(start, stop, step, dtype=count_dt)
    return placed(_const(value.astype(dt, copy=False), dt), device)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere.

    Example:
      >>> jnp.eye(2, dtype=jnp.int32)
      Array([[1, 0],
             [0, 1]], dtype=int32)
    """
    dt = _canonical_dtype(dtype)
    n = int(_static_scalar(N, "eye", "N"))
    m = n if M is None else int(_static_scalar(M, "eye", "M"))
    return _const(np.eye(n, m, int(_static_scalar(k, "eye", "k")), dtype=dt), dt)


def identity(n: int, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    """Ones at and below the k-th diagonal, zeros above."""
    dt = _canonical_dtype(dtype)
    return _const(np.tri(N, M, k, dtype=dt), dt)
