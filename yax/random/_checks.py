"""Argument checks shared by the yax.random functions.

They run in Python before any kernel is called, so a misuse is reported at the user's line with
the shapes involved, whether the call is eager or inside `jit`/`vmap`/`scan`.
"""

from __future__ import annotations

import operator

import numpy as np

from yax import errors
from yax import numpy as jnp
from yax.core import dtypes
from yax.core.trace import Tracer, is_eager
from yax.random.typed_keys import PRNGKeyArray
from yax.runtime import values
from yax.runtime.array import Array
from yax.runtime.values import canonical_scalar


class RandomArgumentError(errors.YaxError, ValueError):
    """A yax.random function got an argument value it cannot use (an unknown `mode` or
    `method`, more samples without replacement than the population, ...)."""


KEY_HINT = ("A PRNG key is a typed key made by yax.random.key(seed) or a raw uint32 array of "
            "shape (2,) made by yax.random.PRNGKey(seed) (or split/fold_in of either).")


def _describe(x) -> str:
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.str_short()
    return f"{np.result_type(x)}{list(np.shape(x))}"


def as_key(name: str, key, *, allow_batched: bool = False):
    """Check that `key` is a single uint32[2] key (or a batch of them), raw or typed (a
    `PRNGKeyArray`, which is unwrapped), and return its data as an Array or tracer."""
    if isinstance(key, PRNGKeyArray):
        key = key._data
    if not isinstance(key, (Array, Tracer)):
        if not isinstance(key, (np.ndarray, np.generic, list, tuple)):
            raise errors.DTypeError(
                f"yax.random.{name}: expected a PRNG key, got {type(key).__name__}. {KEY_HINT}")
        key = jnp.asarray(np.asarray(key))
    aval = key.aval
    if aval.dtype != np.uint32:
        raise errors.DTypeError(
            f"yax.random.{name}: a PRNG key must have dtype uint32, got {aval.str_short()}. "
            f"{KEY_HINT}")
    if allow_batched:
        if aval.ndim == 0 or aval.shape[-1] != 2:
            raise errors.ShapeError(
                f"yax.random.{name}: key data must have a last axis of size 2, got "
                f"{aval.str_short()}. {KEY_HINT}")
    elif aval.shape != (2,):
        hint = (" For a batch of keys use yax.vmap over the leading axis."
                if aval.ndim > 1 and aval.shape[-1] == 2 else "")
        raise errors.ShapeError(
            f"yax.random.{name} takes a single key of shape (2,), got {aval.str_short()}.{hint} "
            f"{KEY_HINT}")
    return key


def _static_dim(name: str, arg: str, d) -> int:
    if isinstance(d, Tracer):
        raise errors.ConcretizationError(
            f"yax.random.{name}: `{arg}` must be static (Python ints), but it holds a traced "
            f"value {d.aval.str_short()}. Shapes fix the size of the result, so they cannot "
            f"depend on traced values: pass a Python tuple, or mark the argument static with "
            f"`jit(..., static_argnums=...)`.")
    try:
        d = operator.index(d)
    except TypeError:
        raise errors.ShapeError(
            f"yax.random.{name}: `{arg}` must hold integers, got {d!r} of type "
            f"{type(d).__name__}.") from None
    if d < 0:
        raise errors.ShapeError(f"yax.random.{name}: `{arg}` has a negative dimension {d}.")
    return d


def static_shape(name: str, shape, arg: str = "shape") -> tuple:
    """`shape` as a tuple of non-negative Python ints (an int means a 1-d shape)."""
    if isinstance(shape, Tracer) and shape.aval.ndim == 0:
        shape = (shape,)
    elif isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        items = tuple(shape)
    except TypeError:
        raise errors.ShapeError(
            f"yax.random.{name}: `{arg}` must be a tuple of integers, got {shape!r}.") from None
    return tuple(_static_dim(name, arg, d) for d in items)


def broadcast_shapes(*shapes) -> tuple:
    """NumPy broadcasting of static shapes."""
    shapes = [tuple(s) for s in shapes if s]
    if len(shapes) <= 1:  # the common scalar-parameter case, without NumPy's overhead
        return shapes[0] if shapes else ()
    return tuple(np.broadcast_shapes(*shapes))


def check_shape(name: str, shape: tuple, *param_shapes) -> None:
    """Parameter shapes must broadcast to exactly `shape`."""
    if not any(param_shapes):
        return
    try:
        result = broadcast_shapes(shape, *param_shapes)
    except ValueError:
        result = None
    if result != tuple(shape):
        shown = ", ".join(str(tuple(s)) for s in param_shapes)
        raise errors.ShapeError(
            f"yax.random.{name}: parameter shapes {shown} must broadcast to the requested "
            f"shape {tuple(shape)}; either pass shape=None to use their broadcast shape or "
            f"a shape they broadcast to.")


def float_dtype(name: str, dtype, *, allow_complex: bool = False) -> np.dtype:
    """The requested float dtype (default: float64 with x64 on, else float32), canonicalised."""
    dt = dtypes.default_float() if dtype is None else np.dtype(dtypes.dtype(dtype))
    ok = dtypes.is_inexact(dt) if allow_complex else dtypes.is_float(dt)
    if not ok:
        kind = "a float or complex" if allow_complex else "a float"
        raise errors.DTypeError(f"yax.random.{name}: dtype must be {kind} dtype, got {dt}.")
    return dtypes.canonicalize(dt, warn=True)


def int_dtype(name: str, dtype) -> np.dtype:
    """The requested integer dtype (default: int64 with x64 on, else int32), canonicalised."""
    dt = dtypes.default_int() if dtype is None else np.dtype(dtypes.dtype(dtype))
    if not dtypes.is_int(dt):
        raise errors.DTypeError(f"yax.random.{name}: dtype must be an integer dtype, got {dt}.")
    return dtypes.canonicalize(dt, warn=True)


def check_mode(name: str, mode, allowed: tuple) -> None:
    """`mode` (a static string option) must be one of `allowed`."""
    if mode not in allowed:
        raise RandomArgumentError(
            f"yax.random.{name}: mode must be one of {allowed}, got {mode!r}.")


def shape_of(x) -> tuple:
    """The shape of an Array, tracer, NumPy value or Python scalar."""
    aval = getattr(x, "aval", None)
    return tuple(aval.shape) if aval is not None else tuple(np.shape(x))


def param_shape(name: str, shape, *params) -> tuple:
    """The sample shape of a distribution with array parameters: `shape` if given (checked to
    broadcast with the parameters' shapes), else the parameters' broadcast shape."""
    param_shapes = [shape_of(p) for p in params]
    if shape is None:
        return broadcast_shapes(*param_shapes)
    shape = static_shape(name, shape)
    check_shape(name, shape, *param_shapes)
    return shape


def dtype_of(x) -> np.dtype:
    """The dtype `x` has as a yax value (Python scalars take the default types)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype
    return dtypes.canonicalize(dtypes.dtype(x) if dtypes.is_python_scalar(x)
                               else np.result_type(x))


def operand(name: str, x):
    """Eagerly, Python scalars become (cached, weakly typed) 0-d Arrays, so a kernel called
    with them takes jit's fast path. Under a transformation they stay Python scalars, i.e.
    literals of the staged program, as in jax (XLA may then fold constant subexpressions such
    as log(a - 1/3), and jax's draws under jit depend on that folding)."""
    if not dtypes.is_python_scalar(x):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        info = dtypes.iinfo(dtypes.default_int())
        if not info.min <= x <= info.max:
            raise errors.DTypeError(
                f"yax.random.{name}: the Python int {x} does not fit the default "
                f"{info.dtype}; enable x64 mode or pass an array of a wider dtype.")
    if not is_eager():
        return x
    return values.to_array(canonical_scalar(x))
