"""Shape primitives: they move or replicate elements without computing on them.

broadcast_in_dim, reshape, transpose, squeeze, expand_dims, rev, concatenate, pad and iota.
All params are static (tuples of ints), so every output shape is known at trace time; the checks
below raise a ShapeError naming the operand's shape, the offending param and the fix.

In NumPy terms (x an operand):
    broadcast_in_dim(x, shape, dims)  np.broadcast_to(x reshaped so axis i sits at dims[i], shape)
    reshape(x, new_sizes, dimensions) np.transpose(x, dimensions).reshape(new_sizes)
    transpose(x, permutation)         np.transpose(x, permutation)
    squeeze(x, dimensions)            np.squeeze(x, dimensions)
    expand_dims(x, dimensions)        np.expand_dims(x, dimensions) (dims index the result)
    rev(x, dimensions)                np.flip(x, dimensions)
    concatenate(*xs, dimension)       np.concatenate(xs, dimension)
    pad(x, v, config)                 lo/hi edge padding (negative crops) and interior padding
    iota(dtype, shape, dimension)     the index along `dimension`, broadcast to `shape`
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, aval_of_value, is_symbolic_dim
from yax.core.primitive import Primitive
from yax.interpreters import batching as _batching
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._ad_rules import linear_jvp
from yax.primitives._checks import check_axes, same_dtypes
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import without_nan_check


def _check_shape(name: str, shape) -> None:
    if not isinstance(shape, tuple) or any((not isinstance(d, int) or d < 0)
                                           and not is_symbolic_dim(d) for d in shape):
        raise errors.ShapeError(f"{name}: shape {shape!r} must be a tuple of non-negative ints")


def _reshape_lower(ctx, x, **params):
    return [hlo.reshape(mlir.aval_type(ctx.avals_out[0]), x)]


# --- shared by the differentiation and batching rules ---------------------------------------------
# Every primitive here but iota is linear (pad jointly in its operand and padding value), so its JVP
# is the primitive applied to the tangents (`linear_jvp`) and its transpose routes the cotangent
# back to where each element came from. Batching puts the batch axis in front and shifts the axis
# params by one, so the rules of every section have the same shape.

_batching.register_axis_ops(broadcast_in_dim=lambda x, s, d: lax.broadcast_in_dim(x, s, d),
                            transpose=lambda x, perm: lax.transpose(x, perm))


def _shift(axes) -> tuple:
    """Axis params once a batch axis sits in front of the operand's axes."""
    return tuple(a + 1 for a in axes)


def _inverse(permutation) -> tuple:
    return tuple(int(i) for i in np.argsort(permutation))


def _front(args, dims):
    """The only operand with its batch axis moved to the front."""
    (x,), (bdim,) = args, dims
    return move_batch_axis(x, bdim, 0, axis_size_of(args, dims))


def _shape_of(x) -> tuple:
    return tuple(aval_of_value(x).shape)


# squeeze, expand_dims and rev: each is its own kind of inverse, and batching shifts `dimensions`
def _axes_batch(prim):
    """The batch rule of `prim` (it binds `prim`, so it is set with define once prim exists)."""
    def batch(args, dims, *, dimensions):
        return [prim.bind(_front(args, dims), dimensions=_shift(dimensions))], [0]
    return batch


# --- broadcast_in_dim(x, shape, broadcast_dimensions) ---------------------------------------------

def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    _check_shape("broadcast_in_dim", shape)
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise errors.ShapeError(
            f"broadcast_in_dim of {x.str_short()} to shape {shape}: broadcast_dimensions {dims} "
            f"must name one result axis per operand axis ({x.ndim} of them)")
    if any(not 0 <= d < len(shape) for d in dims) or list(dims) != sorted(set(dims)):
        raise errors.ShapeError(
            f"broadcast_in_dim of {x.str_short()} to shape {shape}: broadcast_dimensions {dims} "
            f"must be strictly increasing axes of the result (0 <= d < {len(shape)})")
    for i, d in enumerate(dims):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise errors.ShapeError(
                f"broadcast_in_dim of {x.str_short()} to shape {shape}: operand axis {i} (size "
                f"{x.shape[i]}) maps to result axis {d} (size {shape[d]}); sizes must be equal "
                f"or the operand's must be 1. Reshape the operand or fix broadcast_dimensions.")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions):
    return [hlo.broadcast_in_dim(mlir.aval_type(ctx.avals_out[0]), x,
                                 mlir.dense_i64(broadcast_dimensions))]


def _broadcast_in_dim_transpose(cts, x, *, shape, broadcast_dimensions):
    ct, = cts
    in_shape = x.aval.shape
    new_axes = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    summed = lax.reduce_sum(ct, tuple(sorted(new_axes + stretched)))
    return [lax.reshape(summed, in_shape)]


def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions):
    x = _front(args, dims)
    size = _shape_of(x)[0]
    return [lax.broadcast_in_dim(x, (size,) + shape, (0,) + _shift(broadcast_dimensions))], [0]


broadcast_in_dim_p = Primitive("broadcast_in_dim", abstract_eval=_broadcast_in_dim_abstract_eval,
                               lower=_broadcast_in_dim_lower,
                               transpose=_broadcast_in_dim_transpose,
                               batch=_broadcast_in_dim_batch)
linear_jvp(broadcast_in_dim_p)


# --- reshape(x, new_sizes, dimensions) ------------------------------------------------------------

def _check_permutation(name: str, x, perm) -> None:
    if tuple(sorted(perm)) != tuple(range(x.ndim)):
        raise errors.ShapeError(
            f"{name} of {x.str_short()}: {perm} is not a permutation of the operand's axes "
            f"{tuple(range(x.ndim))}")


def _reshape_abstract_eval(x, *, new_sizes, dimensions):
    _check_shape("reshape", new_sizes)
    if dimensions is not None:
        _check_permutation("reshape (dimensions)", x, dimensions)
    if math.prod(new_sizes) != x.size:
        raise errors.ShapeError(
            f"reshape of {x.str_short()} ({x.size} elements) to new_sizes {new_sizes} "
            f"({math.prod(new_sizes)} elements): the element counts must be equal")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_with_dims_lower(ctx, x, *, new_sizes, dimensions):
    if dimensions is not None:
        x = hlo.transpose(x, mlir.dense_i64(dimensions))
    return _reshape_lower(ctx, x)


def _reshape_transpose(cts, x, *, new_sizes, dimensions):
    ct, = cts
    if dimensions is None:
        return [lax.reshape(ct, x.aval.shape)]
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [lax.transpose(lax.reshape(ct, permuted), _inverse(dimensions))]


def _reshape_batch(args, dims, *, new_sizes, dimensions):
    x = _front(args, dims)
    perm = None if dimensions is None else (0,) + _shift(dimensions)
    return [lax.reshape(x, (_shape_of(x)[0],) + new_sizes, perm)], [0]


reshape_p = Primitive("reshape", abstract_eval=_reshape_abstract_eval,
                      lower=_reshape_with_dims_lower, transpose=_reshape_transpose,
                      batch=_reshape_batch)
linear_jvp(reshape_p)


# --- transpose(x, permutation) --------------------------------------------------------------------

def _transpose_abstract_eval(x, *, permutation):
    _check_permutation("transpose", x, permutation)
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_lower(ctx, x, *, permutation):
    return [hlo.transpose(x, mlir.dense_i64(permutation))]


def _transpose_batch(args, dims, *, permutation):
    return [lax.transpose(_front(args, dims), (0,) + _shift(permutation))], [0]


transpose_p = Primitive(
    "transpose", abstract_eval=_transpose_abstract_eval, lower=_transpose_lower,
    transpose=lambda cts, x, *, permutation: [lax.transpose(cts[0], _inverse(permutation))],
    batch=_transpose_batch)
linear_jvp(transpose_p)


# --- squeeze(x, dimensions) / expand_dims(x, dimensions) ------------------------------------------

def _squeeze_abstract_eval(x, *, dimensions):
    check_axes(f"squeeze of {x.str_short()}", dimensions, x.ndim)
    wrong = [d for d in dimensions if x.shape[d] != 1]
    if wrong:
        raise errors.ShapeError(
            f"squeeze of {x.str_short()}: dimensions {tuple(wrong)} have sizes "
            f"{tuple(x.shape[d] for d in wrong)}, but only size-1 axes can be removed")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


squeeze_p = Primitive(
    "squeeze", abstract_eval=_squeeze_abstract_eval, lower=_reshape_lower,
    transpose=lambda cts, x, *, dimensions: [lax.expand_dims(cts[0], dimensions)])
squeeze_p.define(batch=_axes_batch(squeeze_p))
linear_jvp(squeeze_p)


def _expand_dims_abstract_eval(x, *, dimensions):
    out_ndim = x.ndim + len(dimensions)
    check_axes(f"expand_dims of {x.str_short()} (axes index the result of rank {out_ndim})",
               dimensions, out_ndim)
    sizes = iter(x.shape)
    shape = tuple(1 if i in dimensions else next(sizes) for i in range(out_ndim))
    return ShapedArray(shape, x.dtype, x.weak_type)


expand_dims_p = Primitive(
    "expand_dims", abstract_eval=_expand_dims_abstract_eval, lower=_reshape_lower,
    transpose=lambda cts, x, *, dimensions: [lax.squeeze(cts[0], dimensions)])
expand_dims_p.define(batch=_axes_batch(expand_dims_p))
linear_jvp(expand_dims_p)


# --- rev(x, dimensions) ---------------------------------------------------------------------------

def _rev_abstract_eval(x, *, dimensions):
    check_axes(f"rev of {x.str_short()}", dimensions, x.ndim)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _rev_lower(ctx, x, *, dimensions):
    return [hlo.reverse(x, mlir.dense_i64(dimensions))]


rev_p = Primitive("rev", abstract_eval=_rev_abstract_eval, lower=_rev_lower,
                  transpose=lambda cts, x, *, dimensions: [lax.rev(cts[0], dimensions)])
rev_p.define(batch=_axes_batch(rev_p))
linear_jvp(rev_p)


# --- concatenate(*operands, dimension) ------------------------------------------------------------

def _concatenate_abstract_eval(*xs, dimension):
    if not xs:
        raise errors.ShapeError("concatenate needs at least one operand")
    same_dtypes("concatenate", xs)
    shown = ", ".join(x.str_short() for x in xs)
    first = xs[0]
    if first.ndim == 0:
        raise errors.ShapeError(f"concatenate needs operands of rank >= 1, got {shown}; add an "
                                f"axis with `lax.expand_dims` or `lax.broadcast` first")
    if any(x.ndim != first.ndim for x in xs):
        raise errors.ShapeError(f"concatenate needs operands of one rank, got {shown}")
    check_axes(f"concatenate of {shown}", (dimension,), first.ndim)
    rest = [tuple(s for i, s in enumerate(x.shape) if i != dimension) for x in xs]
    if any(r != rest[0] for r in rest):
        raise errors.ShapeError(
            f"concatenate along dimension {dimension} of {shown}: all other axes must have equal "
            f"sizes")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _concatenate_lower(ctx, *xs, dimension):
    return [mlir.on_wider_storage(lambda vs: hlo.concatenate(vs, dimension), xs, ctx.avals_in,
                                  ctx.avals_out[0])]


def _concatenate_transpose(cts, *xs, dimension):
    ct, = cts
    outs, start = [], 0
    for x in xs:
        size = x.aval.shape[dimension]
        outs.append(lax.slice_in_dim(ct, start, start + size, axis=dimension)
                    if is_undefined(x) else None)
        start += size
    return outs


def _concatenate_batch(args, dims, *, dimension):
    size = axis_size_of(args, dims)
    xs = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims, strict=True)]
    return [lax.concatenate(xs, dimension + 1)], [0]


concatenate_p = Primitive("concatenate", abstract_eval=_concatenate_abstract_eval,
                          lower=_concatenate_lower, transpose=_concatenate_transpose,
                          batch=_concatenate_batch)
linear_jvp(concatenate_p)


# --- pad(x, padding_value, padding_config) --------------------------------------------------------

def _pad_abstract_eval(x, padding_value, *, padding_config):
    if padding_value.ndim != 0:
        raise errors.ShapeError(f"pad of {x.str_short()}: padding_value must be a scalar, got "
                                f"{padding_value.str_short()}")
    same_dtypes("pad (operand and padding_value)", [x, padding_value])
    if len(padding_config) != x.ndim:
        raise errors.ShapeError(
            f"pad of {x.str_short()}: padding_config has {len(padding_config)} (lo, hi, interior) "
            f"triples, one per operand axis ({x.ndim}) is needed")
    shape = []
    for axis, ((lo, hi, interior), d) in enumerate(zip(padding_config, x.shape, strict=True)):
        if interior < 0:
            raise errors.ShapeError(f"pad of {x.str_short()}: interior padding {interior} on axis "
                                    f"{axis} must be >= 0")
        # max() only when interior padding exists: with a symbolic d (yax.export) `d - 1 < 0`
        # may be undecidable, and the term is zero anyway without interior padding
        size = lo + hi + d + (max(d - 1, 0) * interior if interior else 0)
        if size < 0:
            raise errors.ShapeError(
                f"pad of {x.str_short()}: padding {(lo, hi, interior)} on axis {axis} crops "
                f"more than the axis holds (result size {size}); use smaller negative lo/hi")
        shape.append(size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_lower(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return [mlir.on_wider_storage(
        lambda vs: hlo.pad(vs[0], vs[1], mlir.dense_i64(lo), mlir.dense_i64(hi),
                           mlir.dense_i64(interior)),
        (x, padding_value), ctx.avals_in, ctx.avals_out[0])]


def _unpad(ct, padding_config):
    """The entries of a pad's cotangent at the operand's positions, in the operand's shape."""
    if not padding_config:
        return ct
    # negating lo/hi removes the edge padding and restores (as zeros) what negative padding cropped
    edges = [(-lo, -hi, 0) for lo, hi, _ in padding_config]
    body = lax.pad(ct, 0, edges)
    strides = [interior + 1 for _, _, interior in padding_config]
    return lax.slice(body, (0,) * len(strides), _shape_of(body), strides)


def _pad_transpose(cts, x, padding_value, *, padding_config):
    ct, = cts
    unpadded = _unpad(ct, padding_config)
    ct_value = None
    if is_undefined(padding_value):
        axes = tuple(range(len(padding_config)))
        # every output entry not taken from the operand is a copy of the padding value
        ct_value = lax.sub(lax.reduce_sum(ct, axes), lax.reduce_sum(unpadded, axes))
    return [unpadded if is_undefined(x) else None, ct_value]


def _pad_batch(args, dims, *, padding_config):
    (x, value), (_, value_bdim) = args, dims
    size = axis_size_of(args, dims)
    x = move_batch_axis(x, dims[0], 0, size)
    config = ((0, 0, 0),) + padding_config
    if value_bdim is None:
        return [lax.pad(x, value, config)], [0]
    # one padding value per example: pad with zeros, then select each example's value where a
    # padded mask says the entry is padding
    out = lax.pad(x, np.zeros((), aval_of_value(x).dtype), config)
    out_shape = _shape_of(out)
    inner = lax.broadcast_in_dim(np.array(False), _shape_of(x)[1:], ())
    mask = lax.pad(inner, np.array(True), padding_config)
    mask = lax.broadcast_in_dim(mask, out_shape, tuple(range(1, len(out_shape))))
    value = lax.broadcast_in_dim(move_batch_axis(value, value_bdim, 0, size), out_shape, (0,))
    return [lax.select(mask, value, out)], [0]


pad_p = Primitive("pad", abstract_eval=_pad_abstract_eval, lower=_pad_lower,
                  transpose=_pad_transpose, batch=_pad_batch)
linear_jvp(pad_p)


# --- iota(dtype, shape, dimension) (no operands) --------------------------------------------------

def _iota_abstract_eval(*, dtype, shape, dimension):
    _check_shape("iota", shape)
    dt = np.dtype(dtype)
    if dtypes.is_bool(dt) or dt not in dtypes.SUPPORTED:
        raise errors.DTypeError(f"iota needs a numeric dtype, got {dt}")
    if not isinstance(dimension, int) or not 0 <= dimension < len(shape):
        raise errors.ShapeError(f"iota: dimension {dimension} is out of range for shape {shape}")
    return ShapedArray(shape, dt)


def _iota_lower(ctx, *, dtype, shape, dimension):
    return [hlo.iota(mlir.aval_type(ctx.avals_out[0]), dimension)]


# iota has no operands: the JVP and batching interpreters never call these (no tangent, no batch
# axis can reach it); they exist so the primitive has no silently missing rule.
def _iota_jvp(primals, tangents, *, dtype, shape, dimension):
    out = iota_p.bind(dtype=dtype, shape=shape, dimension=dimension)
    return [out], [Zero(ShapedArray(shape, np.dtype(dtype)))]


iota_p = Primitive("iota", abstract_eval=_iota_abstract_eval, lower=_iota_lower, jvp=_iota_jvp,
                   batch=lambda args, dims, **params: ([iota_p.bind(**params)], [None]))

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
for _moves_data in (broadcast_in_dim_p, reshape_p, transpose_p, squeeze_p, expand_dims_p, rev_p,
                    concatenate_p, pad_p):
    _moves_data.define(checkify=without_nan_check)
