"""Smaller yax.lax functions, mostly compositions of other primitives, as jax.lax has them:
reduce with a user computation, cumlogsumexp, split/stack/unstack, full/full_like, complex,
tile, collapse, batch_matmul, broadcast_shapes/broadcast_like, axis_size, the compiler barriers
(optimization_barrier, reduce_precision), reduce_xor and scatter_sub.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.trace import Tracer, bind
from yax.lax import elementwise as ew
from yax.lax import reductions, shape, slicing
from yax.lax._util import as_operand, aval_of
from yax.lax.associative_scan import associative_scan
from yax.lax.conv import conv_dimension_numbers
from yax.lax.dot import dot_general
from yax.lax.top_k import top_k
from yax.primitives import collectives as coll
from yax.primitives.barriers import optimization_barrier_p, reduce_precision_p
from yax.primitives.bits import clz_p
from yax.runtime import backend

__all__ = ["reduce", "cumlogsumexp", "split", "stack", "unstack", "full", "full_like",
           "complex", "tile", "collapse", "batch_matmul", "broadcast_shapes", "broadcast_like",
           "axis_size", "optimization_barrier", "reduce_precision", "reduce_xor", "scatter_sub",
           "dtype", "empty", "DotDimensionNumbers", "PrecisionLike",
           "clz", "approx_max_k", "approx_min_k", "index_take", "platform_dependent",
           "composite", "conv_general_permutations"]


# --- reduce with a user computation -------------------------------------------------------------

_MONOIDS = {ew.add: reductions.reduce_sum, ew.mul: reductions.reduce_prod,
            ew.max: reductions.reduce_max, ew.min: reductions.reduce_min}


def _pairwise_reduce(combine, leaves):
    """Fold axis 0 of every leaf with `combine` in log2(n) rounds of pairwise combination."""
    while aval_of(leaves[0]).shape[0] > 1:
        n = aval_of(leaves[0]).shape[0]
        half = n // 2
        a = [slicing.slice_in_dim(x, 0, 2 * half, 2, axis=0) for x in leaves]
        b = [slicing.slice_in_dim(x, 1, 2 * half, 2, axis=0) for x in leaves]
        folded = combine(a, b)
        if n % 2:
            folded = [shape.concatenate([f, slicing.slice_in_dim(x, n - 1, n, axis=0)], 0)
                      for f, x in zip(folded, leaves, strict=True)]
        leaves = folded
    return [shape.squeeze(x, (0,)) for x in leaves]


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` over `dimensions` with `computation` (a pytree of operands reduced
    together, e.g. a (value, index) pair for an argmax).

    Args:
      operands: an array or a pytree of arrays of one shape.
      init_values: scalars, a pytree like operands: the identity of `computation`.
      computation: an associative, commutative function of two pytrees like init_values
        returning one; lax.add/mul/max/min with their identities become the fused reductions.
      dimensions: the axes to reduce.
    Returns:
      a pytree like operands, with `dimensions` removed.

    Differs from XLA: a user computation is applied as log2(n) rounds of whole-array calls (so
    it may be any traceable function, and every transformation applies), not as a region.
    """
    dimensions = tuple(int(d) for d in dimensions)
    leaves, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if init_tree != tree:
        raise errors.ShapeError(f"reduce: init_values ({init_tree}) must be a pytree like "
                                f"operands ({tree})")
    leaves = [as_operand(x) for x in leaves]
    monoid = _MONOIDS.get(computation)
    if monoid is not None and len(leaves) == 1 and _is_identity(inits[0], computation,
                                                                 aval_of(leaves[0]).dtype):
        return tree_util.tree_unflatten(tree, [monoid(leaves[0], dimensions)])
    return tree_util.tree_unflatten(tree, _general_reduce(leaves, inits, tree, computation,
                                                          dimensions))


def _is_identity(init, computation, dt) -> bool:
    """Whether `init` is a known constant equal to the identity of a built-in monoid."""
    if isinstance(init, Tracer):
        return False  # its value is unknown at trace time
    try:
        value = np.asarray(init)
    except Exception:
        return False
    if value.shape != ():
        return False
    identity = {ew.add: 0, ew.mul: 1, ew.max: dtypes.lowest(dt), ew.min: dtypes.highest(dt)}
    return bool(value == identity[computation])


def _general_reduce(leaves, inits, tree, computation, dimensions):
    nd = aval_of(leaves[0]).ndim
    kept = [d for d in range(nd) if d not in dimensions]
    moved = []
    for x in leaves:
        x = shape.transpose(x, tuple(dimensions) + tuple(kept))
        s = aval_of(x).shape
        moved.append(shape.reshape(x, (math.prod(s[:len(dimensions)]),) + s[len(dimensions):]))
    kept_shape = aval_of(moved[0]).shape[1:]

    def combine(a, b):
        out = computation(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return [as_operand(v) for v in tree_util.tree_leaves(out)]

    init_arrays = [shape.broadcast_in_dim(ew.convert_element_type(as_operand(i),
                                                                  aval_of(x).dtype),
                                          kept_shape, ()) for i, x in zip(inits, moved,
                                                                          strict=True)]
    if aval_of(moved[0]).shape[0] == 0:
        return init_arrays
    total = _pairwise_reduce(combine, moved)
    return combine(init_arrays, total)


# --- cumulative log-sum-exp ---------------------------------------------------------------------

def _logaddexp(a, b):
    big = ew.max(a, b)
    finite = ew.is_finite(big)
    shift = ew.select(finite, big, ew.sub(a, a))  # -inf/inf/nan: no shift (avoids inf - inf)
    summed = ew.add(ew.exp(ew.sub(a, shift)), ew.exp(ew.sub(b, shift)))
    return ew.select(finite, ew.add(ew.log(summed), shift), big)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """log(cumsum(exp(operand))) along `axis`, computed stably (reverse: from the end)."""
    operand = as_operand(operand)
    if not dtypes.is_float(aval_of(operand).dtype):
        raise errors.DTypeError(f"cumlogsumexp needs a float operand, got "
                                f"{aval_of(operand).str_short()}")
    return associative_scan(_logaddexp, operand, reverse=reverse, axis=axis)


# --- splitting and stacking ---------------------------------------------------------------------

def split(operand, sizes, axis: int = 0):
    """Split `operand` along `axis` into pieces of the given sizes (which sum to its size)."""
    operand = as_operand(operand)
    aval = aval_of(operand)
    axis = operator.index(axis) % builtins.max(aval.ndim, 1)
    sizes = [operator.index(s) for s in sizes]
    if sum(sizes) != aval.shape[axis] or any(s < 0 for s in sizes):
        raise errors.ShapeError(f"split: sizes {sizes} must be non-negative and sum to the size "
                                f"of axis {axis} of {aval.str_short()}")
    starts = np.cumsum([0] + sizes)
    return [slicing.slice_in_dim(operand, int(lo), int(hi), axis=axis)
            for lo, hi in zip(starts[:-1], starts[1:], strict=True)]


def stack(operands, axis: int = 0):
    """Stack arrays of one shape along a new axis `axis`."""
    operands = [as_operand(x) for x in operands]
    if not operands:
        raise errors.ShapeError("stack needs at least one operand")
    ndim = aval_of(operands[0]).ndim
    axis = operator.index(axis) % (ndim + 1)
    return shape.concatenate([shape.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis: int = 0):
    """The slices of `x` along `axis`, as a tuple of arrays of rank x.ndim - 1."""
    x = as_operand(x)
    aval = aval_of(x)
    if aval.ndim == 0:
        raise errors.ShapeError("unstack needs an array of rank >= 1")
    axis = operator.index(axis) % aval.ndim
    return tuple(slicing.index_in_dim(x, i, axis=axis, keepdims=False)
                 for i in range(aval.shape[axis]))


# --- construction -------------------------------------------------------------------------------

def full(shape_, fill_value, dtype=None, *, sharding=None):
    """An array of `shape_` filled with `fill_value` (its dtype unless `dtype` is given)."""
    del sharding
    shape_ = (shape_,) if isinstance(shape_, int) else tuple(int(s) for s in shape_)
    value = as_operand(fill_value)
    if aval_of(value).ndim != 0:
        raise errors.ShapeError(f"full: fill_value must be a scalar, got shape "
                                f"{aval_of(value).shape}")
    if dtype is not None:
        value = ew.convert_element_type(value, dtypes.canonicalize(np.dtype(dtype)))
    return shape.broadcast_in_dim(value, shape_, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    del sharding
    aval = aval_of(as_operand(x))
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype)


def empty(shape_, dtype, *, out_sharding=None):
    """An array of `shape_` and `dtype` (zeros: XLA has no uninitialised memory to offer)."""
    del out_sharding
    return full(shape_, 0, dtype)


def complex(x, y):
    """x + 1j * y elementwise, for float x and y of one dtype."""
    x, y = as_operand(x), as_operand(y)
    dt = aval_of(x).dtype
    if not dtypes.is_float(dt) or aval_of(y).dtype != dt:
        raise errors.DTypeError(f"complex needs two float operands of one dtype, got "
                                f"{aval_of(x).str_short()} and {aval_of(y).str_short()}")
    cdt = np.result_type(dt, np.complex64)
    imag_unit = as_operand(np.asarray(1j, cdt))
    return ew.add(ew.convert_element_type(x, cdt),
                  ew.mul(ew.convert_element_type(y, cdt), imag_unit))


def tile(operand, reps):
    """Repeat `operand` reps[i] times along axis i (len(reps) == operand.ndim)."""
    operand = as_operand(operand)
    aval = aval_of(operand)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != aval.ndim:
        raise errors.ShapeError(f"tile: reps {reps} must have one entry per axis of "
                                f"{aval.str_short()}")
    interleaved = tuple(v for r, s in zip(reps, aval.shape, strict=True) for v in (r, s))
    dims = tuple(range(1, 2 * aval.ndim, 2))
    out = shape.broadcast_in_dim(operand, interleaved, dims)
    return shape.reshape(out, tuple(r * s for r, s in zip(reps, aval.shape, strict=True)))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """Merge axes start_dimension .. stop_dimension - 1 of `operand` into one."""
    operand = as_operand(operand)
    s = aval_of(operand).shape
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(s))
    return shape.reshape(operand, s[:lo] + (math.prod(s[lo:hi]),) + s[hi:])


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products of matching leading batch dims: [..., m, k] @ [..., k, n]."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim < 2 or la.ndim != ra.ndim or la.shape[:-2] != ra.shape[:-2]:
        raise errors.ShapeError(f"batch_matmul needs operands of rank >= 2 with equal batch "
                                f"dims, got {la.str_short()} and {ra.str_short()}")
    batch = tuple(range(la.ndim - 2))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)),
                       precision=precision)


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the given shapes, as a tuple."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise errors.ShapeError(f"broadcast_shapes: incompatible shapes {shapes}") from None


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy style) to the shape of `like_arr`."""
    arr, like = as_operand(arr), aval_of(as_operand(like_arr))
    a = aval_of(arr)
    target = broadcast_shapes(a.shape, like.shape)
    dims = tuple(range(len(target) - a.ndim, len(target)))
    return shape.broadcast_in_dim(arr, target, dims)


def axis_size(axis_name):
    """The size of the named mapped axis (bound by vmap(..., axis_name=...)); for a tuple of
    names, the product of their sizes."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return math.prod(coll.axis_size(n) for n in names)


def dtype(x):
    """The canonical dtype of `x` (an array, scalar or dtype-like), as jax.lax.dtype."""
    if hasattr(x, "dtype") and not isinstance(x, type):
        return dtypes.canonicalize(np.dtype(x.dtype))
    if isinstance(x, (bool, int, float, builtins.complex)):
        return dtypes.canonicalize(dtypes.scalar_type_of(x)[0])
    return dtypes.canonicalize(np.dtype(x))


# --- compiler barriers --------------------------------------------------------------------------

def optimization_barrier(operand, /):
    """`operand` (a pytree) unchanged, behind a barrier XLA does not move computation across."""
    leaves, tree = tree_util.tree_flatten(operand)
    outs = bind(optimization_barrier_p, *(as_operand(x) for x in leaves))
    return tree_util.tree_unflatten(tree, list(outs))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Round floats to `exponent_bits`/`mantissa_bits` (keeping the dtype): e.g. (8, 7) gives
    bfloat16's values in a float32 array."""
    return bind(reduce_precision_p, as_operand(operand), exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))


# --- reductions and scatters built from others --------------------------------------------------

def reduce_xor(operand, axes):
    """The bitwise xor of integer (or bool) `operand` over `axes`."""
    operand = as_operand(operand)
    if not (dtypes.is_int(aval_of(operand).dtype) or aval_of(operand).dtype == np.bool_):
        raise errors.DTypeError(f"reduce_xor needs integer or bool input, got "
                                f"{aval_of(operand).str_short()}")
    return reduce(operand, np.zeros((), aval_of(operand).dtype), ew.bitwise_xor, axes)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with `updates` subtracted at the scattered positions (scatter_add of -updates)."""
    return slicing.scatter_add(operand, scatter_indices, ew.neg(as_operand(updates)),
                               dimension_numbers, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)


# --- more of jax.lax's small names --------------------------------------------------------------

# Typing aliases, as jax.lax exports them.
DotDimensionNumbers = tuple
PrecisionLike = object


def clz(x):
    """The number of leading zero bits of each element of an integer array."""
    return bind(clz_p, as_operand(x))


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The k largest entries along `reduction_dimension` and their indices. Differs from JAX:
    exact (recall 1, whatever recall_target), computed by lax.top_k."""
    del recall_target, reduction_input_size_override, aggregate_to_topk
    return top_k(operand, k, axis=reduction_dimension)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The k smallest entries along `reduction_dimension` and their indices (exact)."""
    del recall_target, reduction_input_size_override, aggregate_to_topk
    values, indices = top_k(ew.neg(as_operand(operand)), k, axis=reduction_dimension)
    return ew.neg(values), indices


def index_take(src, idxs, axes):
    """src indexed by the columns of idxs (N, len(axes)) along `axes` (NumPy advanced
    indexing: the N results come first when the axes are not adjacent)."""
    src, idxs = as_operand(src), as_operand(idxs)
    src_shape, (n, k) = aval_of(src).shape, aval_of(idxs).shape
    axes = tuple(operator.index(a) % len(src_shape) for a in axes)
    dt = aval_of(idxs).dtype
    # negative indices count from the end, as in NumPy indexing (larger ones are clamped)
    bounds = shape.broadcast_in_dim(as_operand(np.array([src_shape[a] for a in axes], dt)),
                                    (n, k), (1,))
    zeros = shape.broadcast_in_dim(as_operand(np.zeros((), dt)), (n, k), ())
    idxs = ew.select(ew.lt(idxs, zeros), ew.add(idxs, bounds), idxs)
    kept = len(src_shape) - k
    dnums = slicing.GatherDimensionNumbers(offset_dims=tuple(range(1, kept + 1)),
                                           collapsed_slice_dims=tuple(sorted(axes)),
                                           start_index_map=axes)
    out = slicing.gather(src, idxs, dnums,
                         tuple(1 if d in axes else size for d, size in enumerate(src_shape)))
    first = min(axes)
    if sorted(axes) != list(range(first, first + k)) or first == 0:
        return out
    # adjacent axes: NumPy puts the N results where the axes were
    return shape.transpose(out, (*range(1, first + 1), 0, *range(first + 1, kept + 1)))


def platform_dependent(*args, default=None, **per_platform):
    """Call the function for the platform yax runs on (per_platform["cpu"], ...) or `default`.
    Differs from JAX: chosen at trace time from the default backend, not by the compiler."""
    fun = per_platform.get(backend.platform(), default)
    if fun is None:
        raise errors.InvalidArgumentError(
            f"platform_dependent: no function for platform {backend.platform()!r} and no default")
    return fun(*args)


def composite(decomposition, name: str, version: int = 0):
    """Mark `decomposition` as a named composite. yax calls the decomposition (XLA would inline
    it anyway); the name and version are kept on the wrapper."""
    import functools

    @functools.wraps(decomposition)
    def wrapper(*args, **kwargs):
        return decomposition(*args, **kwargs)
    wrapper.composite_name, wrapper.composite_version = name, version
    return wrapper


def conv_general_permutations(dimension_numbers):
    """(lhs_perm, rhs_perm, out_perm) of layout strings, e.g. ('NHWC', 'HWIO', 'NHWC')."""
    lhs, rhs, _ = dimension_numbers
    dn = conv_dimension_numbers((1,) * len(lhs), (1,) * len(rhs), dimension_numbers)
    return tuple(dn.lhs_spec), tuple(dn.rhs_spec), tuple(dn.out_spec)
