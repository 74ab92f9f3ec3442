"""yax.lax.top_k: the k largest entries along an axis (the last by default) and their indices."""

from __future__ import annotations

import operator

from yax import errors
from yax.core.trace import bind
from yax.primitives.top_k import top_k_p
from yax.runtime.values import as_operand, aval_of

__all__ = ["top_k"]


def top_k(operand, k: int, *, axis: int = -1):
    """The `k` largest entries of `operand` along `axis`, in descending order, and their int32
    positions; ties go to the lower index, NaN counts as the largest (as jax.lax.top_k).

    Args:
      operand: a real or bool array of rank >= 1.
      k: how many entries to keep (0 <= k <= operand.shape[axis]); a static int.
      axis: the axis to select along (negative counts from the end).
    Returns:
      (values, indices), both of operand's shape with `axis` resized to k.

    Example: `values, idx = lax.top_k(scores, 5)` picks the 5 best scores of each row.
    """
    operand = as_operand(operand)
    ndim = aval_of(operand).ndim
    try:
        k = operator.index(k)
    except TypeError:
        raise errors.ShapeError(f"top_k: k must be a static Python int, got {k!r}; under jit "
                                f"pass it as a static argument") from None
    if ndim == 0:
        raise errors.ShapeError(f"top_k needs an array of rank >= 1, got "
                                f"{aval_of(operand).str_short()}")
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(f"top_k: axis {axis} is out of range for an array of rank {ndim}")
    values, indices = bind(top_k_p, operand, k=k, axis=int(axis) % ndim)
    return values, indices
