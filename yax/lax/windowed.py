"""yax.lax windowed reductions: `reduce_window` (jax.lax's signature) and one function per monoid.

`reduce_window(x, init, computation, ...)` recognises `computation` as lax.add, lax.mul, lax.max
or lax.min (or the yax.numpy equivalents) and binds the matching reduce_window_<monoid>
primitive. An `init_value` other than the monoid's identity is combined once into every window
(padding and dilation holes never count), which is what XLA's reduce_window computes, e.g. a
max-pool with init 0 is `max(0, max-pool)`.

Pooling as flax writes it:
    max_pool = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')
    avg_pool = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID') / 4
"""

from __future__ import annotations

import sys

import numpy as np

from yax import errors
from yax.core.avals import TypedScalar
from yax.core.trace import Tracer, bind
from yax.lax import elementwise as ew
from yax.lax._util import is_python_scalar, python_scalar_as
from yax.lax.conv import padtype_to_pads
from yax.primitives import windowed as win
from yax.primitives.reductions import _identity
from yax.runtime.values import as_operand, aval_of

__all__ = ["reduce_window", "reduce_window_sum", "reduce_window_prod", "reduce_window_max",
           "reduce_window_min", "reduce_window_shape_tuple"]

# monoid name -> (lax function, name of the same operation in yax.numpy)
_COMPUTATIONS = {"sum": (ew.add, "add"), "prod": (ew.mul, "multiply"),
                 "max": (ew.max, "maximum"), "min": (ew.min, "minimum")}


def _ints(name: str, what: str, values, ndim: int, default: int) -> tuple:
    if values is None:
        return (default,) * ndim
    try:
        out = tuple(int(v) for v in values)
    except TypeError:
        raise errors.ShapeError(f"{name}: {what} must be a sequence of ints, got "
                                f"{values!r}") from None
    if len(out) != ndim:
        raise errors.ShapeError(f"{name}: {what}={out} has {len(out)} entries; the operand has "
                                f"rank {ndim}, so one per axis is needed")
    return out


def _canonical_params(name, shape, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation) -> dict:
    ndim = len(shape)
    window = _ints(name, "window_dimensions", window_dimensions, ndim, 1)
    strides = _ints(name, "window_strides", window_strides, ndim, 1)
    base = _ints(name, "base_dilation", base_dilation, ndim, 1)
    dilation = _ints(name, "window_dilation", window_dilation, ndim, 1)
    if isinstance(padding, str):
        # as jax: the string is resolved against the undilated operand and the dilated window
        dilated = tuple(0 if k == 0 else (k - 1) * d + 1 for k, d in zip(window, dilation))
        pads = padtype_to_pads(shape, dilated, strides, padding)
    else:
        pads = list(padding)
    pads = tuple((int(lo), int(hi)) for lo, hi in pads)
    return dict(window_dimensions=window, window_strides=strides, padding=pads,
                base_dilation=base, window_dilation=dilation)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The result shape of a windowed reduction with explicit (lo, hi) `padding` pairs."""
    params = _canonical_params("reduce_window_shape_tuple", tuple(operand_shape),
                               window_dimensions, window_strides, padding, base_dilation,
                               window_dilation)
    return win.window_out_shape(tuple(operand_shape), **params)


def _monoid(monoid: str):
    prim = win.window_primitives[f"reduce_window_{monoid}"]

    def op(operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None,
           window_dilation=None):
        operand = as_operand(operand)
        params = _canonical_params(prim.name, aval_of(operand).shape, window_dimensions,
                                   window_strides, padding, base_dilation, window_dilation)
        return bind(prim, operand, **params)
    op.__name__ = prim.name
    op.__doc__ = (f"The {monoid} of every window of `operand` (see `reduce_window`); padding "
                  f"and dilation holes hold the identity of {monoid}.")
    return op


reduce_window_sum, reduce_window_prod, reduce_window_max, reduce_window_min = (
    _monoid(m) for m in ("sum", "prod", "max", "min"))
_MONOID_OPS = {"sum": reduce_window_sum, "prod": reduce_window_prod, "max": reduce_window_max,
               "min": reduce_window_min}


def _which_monoid(computation) -> str:
    numpy_module = sys.modules.get("yax.numpy")  # read, not imported: numpy sits above lax
    for monoid, (lax_fn, numpy_name) in _COMPUTATIONS.items():
        if computation is lax_fn or (numpy_module is not None
                                     and computation is getattr(numpy_module, numpy_name, None)):
            return monoid
    raise errors.YaxError(
        f"reduce_window: computation {getattr(computation, '__name__', computation)!r} is not "
        f"supported; yax reduces windows with lax.add, lax.mul, lax.max or lax.min (or "
        f"jnp.add/multiply/maximum/minimum). Write other reductions from those, e.g. a mean as "
        f"reduce_window(x, 0., lax.add, ...) / window_size.")


def _init_operand(init_value, dtype):
    """The init value as an operand of `dtype`, plus its concrete NumPy value (None if traced)."""
    if is_python_scalar(init_value):
        return python_scalar_as(init_value, dtype, "reduce_window"), np.asarray(init_value, dtype)
    init = as_operand(init_value)
    aval = aval_of(init)
    if aval.ndim != 0 or aval.dtype != dtype:
        raise errors.DTypeError(f"reduce_window: init_value must be a scalar of the operand's "
                                f"dtype {np.dtype(dtype).name}, got {aval.str_short()}")
    return init, _concrete_value(init)


def _concrete_value(x):
    """x's value as NumPy data, or None when it is only known at run time."""
    if isinstance(x, TypedScalar):
        return x.value
    if isinstance(x, Tracer):
        x = x.to_concrete_or_none()
        return None if x is None else _concrete_value(x)
    return np.asarray(x)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce every window of `operand` with `computation`, starting from `init_value`.

    Args:
      operand: an array.
      init_value: a scalar; padding and dilation holes do not count, the init value is
        combined into each window once.
      computation: lax.add, lax.mul, lax.max or lax.min (or the yax.numpy equivalents).
      window_dimensions: window size per axis.
      window_strides: step between windows per axis (default 1).
      padding: 'VALID', 'SAME', 'SAME_LOWER' or a sequence of (lo, hi) pairs.
      base_dilation, window_dilation: dilation of the operand and of the window (default 1).
    Returns:
      An array with one element per window.

    Example (2x2 max-pool of NHWC images):
        lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')
    """
    if isinstance(operand, (tuple, list, dict)):
        raise errors.YaxError("reduce_window: yax reduces one array at a time; call it once per "
                              "operand instead of passing a pytree of operands")
    monoid = _which_monoid(computation)
    operand = as_operand(operand)
    dtype = aval_of(operand).dtype
    out = _MONOID_OPS[monoid](operand, window_dimensions, window_strides, padding,
                              base_dilation, window_dilation)
    init, concrete = _init_operand(init_value, dtype)
    identity = _identity(win.IDENTITIES[f"reduce_window_{monoid}"], dtype)
    if concrete is not None and (concrete == identity or (concrete != concrete
                                                           and identity != identity)):
        return out
    return _COMPUTATIONS[monoid][0](out, init)
