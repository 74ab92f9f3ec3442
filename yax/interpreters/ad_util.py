"""Symbolic zeros and the two primitives every differentiation interpreter needs.

`Zero(aval)` stands for an all-zero tangent or cotangent without materialising it, so untouched
inputs cost nothing. `add_any` sums two tangents/cotangents of identical type (fan-out in the
transpose interpreter); `zeros_like` materialises a zero when a value is really needed. Both are
defined here, with all their rules, because the interpreters themselves emit them.
"""

from __future__ import annotations

import numpy as np

from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters import mlir
from yax.interpreters.batching import move_batch_axis
from yax.interpreters.mlir import hlo

# JAX's float0: the tangent type of integer and bool values (it carries no data).
float0 = np.dtype([("float0", np.void, 0)])


class Zero:
    """A symbolic zero of type `aval`."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def is_zero(x) -> bool:
    return type(x) is Zero


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of float/complex values share their type; others would be float0 (kept Zero)."""
    if not aval.weak_type:
        return aval
    # a shard_map body's value keeps the mesh axes it varies along
    return (aval.strip_weak_type() if getattr(aval, "vma", None)
            else ShapedArray(aval.shape, aval.dtype, False))


# --- zeros_like: materialise a zero of a given aval ---

def _zeros_abstract_eval(*, shape, dtype):
    return ShapedArray(shape, dtype)


def _zeros_lower(ctx, *, shape, dtype):
    return [mlir.constant(np.zeros(shape, dtype))]


def _zeros_jvp(primals, tangents, *, shape, dtype):
    return [bind(zeros_like_p, shape=shape, dtype=dtype)], [Zero(ShapedArray(shape, dtype))]


def _zeros_batch(args, dims, *, shape, dtype):
    return [bind(zeros_like_p, shape=shape, dtype=dtype)], [None]


zeros_like_p = Primitive("zeros", abstract_eval=_zeros_abstract_eval, lower=_zeros_lower,
                         jvp=_zeros_jvp, batch=_zeros_batch)


def zeros_like_aval(aval: ShapedArray):
    return bind(zeros_like_p, shape=aval.shape, dtype=aval.dtype)


def instantiate(x):
    """A real value for a possibly symbolic zero."""
    return zeros_like_aval(x.aval) if type(x) is Zero else x


# --- add_any: x + y of identical types, linear in both ---

def _add_any_abstract_eval(x, y):
    assert (x.shape, x.dtype) == (y.shape, y.dtype), (x, y)
    # weak when both summands are (JAX keeps the first's type): a sum of weakly typed
    # cotangents stays weak, so a gradient needs no cast back to its primal's weak type
    return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type and y.weak_type)


def _add_any_jvp(primals, tangents):
    x_dot, y_dot = tangents
    return [bind(add_any_p, *primals)], [add_tangents(x_dot, y_dot)]


def _add_any_transpose(cts, x, y):
    ct, = cts
    return [ct, ct]


def _add_any_batch(args, dims):
    x, y = args
    dx, dy = dims
    if dx == dy:
        return [bind(add_any_p, x, y)], [dx]
    return [bind(add_any_p, move_batch_axis(x, dx, 0, _size(x, y, dx, dy)),
                 move_batch_axis(y, dy, 0, _size(x, y, dx, dy)))], [0]


def _size(x, y, dx, dy) -> int:
    return x.shape[dx] if dx is not None else y.shape[dy]


add_any_p = Primitive("add_any", abstract_eval=_add_any_abstract_eval,
                      lower=lambda ctx, x, y: [hlo.add(x, y)], jvp=_add_any_jvp,
                      transpose=_add_any_transpose, batch=_add_any_batch)


def add_tangents(x, y):
    """Sum two tangents/cotangents, keeping symbolic zeros symbolic."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return bind(add_any_p, x, y)
