"""yax.lax reductions with a user computation: `reduce` (a monoid it recognises becomes the
matching reduce_* primitive; any other computation folds pairwise in log2(n) rounds),
cumlogsumexp (an associative scan of logaddexp) and reduce_xor.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.trace import Tracer
from yax.lax import elementwise as ew
from yax.lax import reductions, shape, slicing
from yax.lax._util import out_sharding_param
from yax.lax.associative_scan import associative_scan
from yax.runtime.values import as_operand, aval_of

__all__ = ["reduce", "cumlogsumexp", "reduce_xor"]


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


@out_sharding_param("reduce")
def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduce `operands` over `dimensions` with `computation` (a pytree of operands reduced
    together, e.g. a (value, index) pair for an argmax).

    Args:
      operands: an array or a pytree of arrays of one shape.
      init_values: scalars, a pytree like operands: the identity of `computation`.
      computation: an associative, commutative function of two pytrees like init_values
        returning one; lax.add/mul/max/min with their identities become the fused reductions.
      dimensions: the axes to reduce.
      out_sharding: the results' sharding (see _util.out_sharding_of).
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


def reduce_xor(operand, axes):
    """The bitwise xor of integer (or bool) `operand` over `axes`."""
    operand = as_operand(operand)
    if not (dtypes.is_int(aval_of(operand).dtype) or aval_of(operand).dtype == np.bool_):
        raise errors.DTypeError(f"reduce_xor needs integer or bool input, got "
                                f"{aval_of(operand).str_short()}")
    return reduce(operand, np.zeros((), aval_of(operand).dtype), ew.bitwise_xor, axes)
