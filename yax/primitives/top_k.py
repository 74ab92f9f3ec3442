"""The top_k primitive: the k largest entries along one axis and their positions (int32).

Equivalent loop for one 1-D slice `row` along `axis`:
    order = sorted(range(n), key=lambda i: (-total_order(row[i]), i))[:k]
    values, indices = [row[i] for i in order], order

Ties go to the lower index. Floats are ordered by their bits (NaN above +inf, -0.0 below 0.0),
which is what `chlo.top_k` does and so what jax.lax.top_k returns.

Lowering: `chlo.top_k` works on the last axis, so another axis is transposed there and back.
The JVP gathers the tangent at the returned indices; the batch axis just renumbers `axis`.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import chlo, hlo
from yax.primitives._checks import check_axes, dtype_kind_check
from yax.primitives._lax import lax
from yax.primitives.slicing import GatherDimensionNumbers

ir = mlir.ir


def _top_k_abstract_eval(x, *, k, axis):
    dtype_kind_check("top_k", x, "real_or_bool")
    if x.ndim == 0:
        raise errors.ShapeError(f"top_k needs an array of rank >= 1, got {x.str_short()}")
    check_axes("top_k", (axis,), x.ndim)
    if not isinstance(k, int) or not 0 <= k <= x.shape[axis]:
        raise errors.ShapeError(
            f"top_k of {x.str_short()}: k={k} must be an int between 0 and the size of axis "
            f"{axis} ({x.shape[axis]}); take fewer elements or pad the operand")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, np.dtype(np.int32))]


def _swap_last(ndim: int, axis: int) -> list:
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm


def _top_k_lower(ctx, x, *, k, axis):
    aval = ctx.avals_in[0]
    values_aval, indices_aval = ctx.avals_out
    if values_aval.size == 0:  # k == 0 or an empty batch: nothing for chlo.top_k to do
        return [mlir.full_like_aval(0, values_aval), mlir.full_like_aval(0, indices_aval)]
    perm = None if axis == aval.ndim - 1 else _swap_last(aval.ndim, axis)
    if perm is not None:  # the swap is its own inverse
        x = hlo.transpose(x, mlir.dense_i64(perm))
    results = list(chlo.top_k(x, k))
    if perm is not None:
        results = [hlo.transpose(r, mlir.dense_i64(perm)) for r in results]
    return results


# --- differentiation and batching rules ---------------------------------------------------------

def take_along(t, indices, axis: int):
    """t[..., indices[..., j, ...], ...] along `axis`: a gather whose other axes are batching
    axes pairing each row of `t` with the same row of `indices` (linear in t)."""
    ndim = len(indices.aval.shape)
    others = tuple(d for d in range(ndim) if d != axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                start_index_map=(axis,), operand_batching_dims=others,
                                start_indices_batching_dims=others)
    starts = lax.expand_dims(indices, (ndim,))
    return lax.gather(t, starts, dn, (1,) * ndim, indices_are_sorted=False,
                      unique_indices=False, mode="promise_in_bounds")


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    index_tangent = Zero(indices.aval.strip_weak_type())
    if type(t) is Zero or not dtypes.is_inexact(values.aval.dtype):
        return [values, indices], [Zero(values.aval.strip_weak_type()), index_tangent]
    return [values, indices], [take_along(t, indices, axis), index_tangent]


def _top_k_batch(args, dims, *, k, axis):
    (x,), (bdim,) = args, dims
    outs = top_k_p.bind(x, k=k, axis=axis + 1 if bdim <= axis else axis)
    return list(outs), [bdim, bdim]


top_k_p = Primitive("top_k", multiple_results=True, abstract_eval=_top_k_abstract_eval,
                    lower=_top_k_lower, jvp=_top_k_jvp, batch=_top_k_batch)
