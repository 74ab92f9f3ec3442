"""yax.lax reductions: reduce_<op> over axes, argmax/argmin, and cumulative reductions."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.trace import bind
from yax.lax import complex_order
from yax.primitives import reductions as red
from yax.runtime.values import as_operand, to_array

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
           "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"]


def _ndim(x) -> int:
    return x.aval.ndim if hasattr(x, "aval") else x.ndim


def _canonical_axes(name: str, axes, ndim: int) -> tuple:
    out = []
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise errors.ShapeError(f"{name}: axis {ax} is out of range for an array of rank "
                                    f"{ndim}")
        out.append(ax % ndim)
    return tuple(out)


_ORDERED = ("reduce_max", "reduce_min")


def _reduction(prim):
    def op(operand, axes):
        operand = as_operand(operand)
        axes = _canonical_axes(prim.name, tuple(axes), _ndim(operand))
        if not axes:  # nothing to reduce: no equation at all
            return operand if hasattr(operand, "aval") else to_array(operand)
        if prim.name in _ORDERED and dtypes.is_complex(operand.aval.dtype):
            return complex_order.reduce_extremum(prim.name, operand, axes)  # as jax: lexicographic
        return bind(prim, operand, axes=axes)
    op.__name__ = prim.name
    op.primitive = prim  # lets yax.numpy bind directly when nothing needs converting
    op.__doc__ = (f"`{prim.name}` of `operand` over `axes` (a sequence of ints); the reduced axes "
                  f"disappear from the result's shape.")
    return op


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or = (
    _reduction(red.reduce_primitives[n])
    for n in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or"))


def _arg(prim):
    def op(operand, axis, index_dtype):
        operand = as_operand(operand)
        (axis,) = _canonical_axes(prim.name, (axis,), _ndim(operand))
        index_dtype = dtypes.canonicalize(np.dtype(index_dtype))
        return bind(prim, operand, axes=(axis,), index_dtype=index_dtype)
    op.__name__ = prim.name
    op.__doc__ = (f"Index of the first {prim.name[3:]} along `axis` (NaN counts as the "
                  f"{prim.name[3:]}, as in NumPy), as `index_dtype`.")
    return op


argmax, argmin = _arg(red.argmax_p), _arg(red.argmin_p)


def _cumulative(prim):
    def op(operand, axis=0, reverse=False):
        operand = as_operand(operand)
        (axis,) = _canonical_axes(prim.name, (axis,), max(_ndim(operand), 1))
        return bind(prim, operand, axis=axis, reverse=bool(reverse))
    op.__name__ = prim.name
    op.__doc__ = (f"Running `{prim.name}` along `axis`: element i combines elements 0..i (i..n-1 "
                  f"with `reverse=True`).")
    return op


cumsum, cumprod, cummax, cummin = (_cumulative(red.cumulative_primitives[n])
                                   for n in ("cumsum", "cumprod", "cummax", "cummin"))
