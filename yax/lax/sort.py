"""yax.lax sorting: `sort` of one array or of several sorted together, and `sort_key_val`."""

from __future__ import annotations

from yax import errors
from yax.core.trace import bind
from yax.lax import complex_order
from yax.primitives.sort import sort_p
from yax.runtime.values import as_operand

__all__ = ["sort", "sort_key_val"]


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort along `dimension`.

    Args:
      operand: an array, or a sequence of same-shape arrays sorted together.
      dimension: the axis to sort along (negative counts from the end).
      is_stable: keep the input order of equal keys.
      num_keys: with several operands, order lexicographically by the first `num_keys`.
    Returns:
      The sorted array, or a tuple of sorted arrays if `operand` was a sequence.

    Example: `sort((keys, values))` reorders `values` the way it sorts `keys`.
    """
    single = not isinstance(operand, (tuple, list))
    operands = [as_operand(x) for x in ([operand] if single else operand)]
    if not operands:
        raise errors.ShapeError("sort needs at least one operand")
    ndim = operands[0].aval.ndim if hasattr(operands[0], "aval") else operands[0].ndim
    if ndim and not -ndim <= dimension < ndim:
        raise errors.ShapeError(f"sort: dimension {dimension} is out of range for an array of "
                                f"rank {ndim}")
    dimension = int(dimension) % ndim if ndim else int(dimension)
    # complex keys sort by real part, then imaginary part (as jax): two real keys each
    operands, num_keys, extra = complex_order.sort_operands(
        [x if hasattr(x, "aval") else as_operand(x) for x in operands], int(num_keys))
    outs = bind(sort_p, *operands, dimension=dimension, is_stable=bool(is_stable),
                num_keys=num_keys)[extra:]
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sort `keys` along `dimension` and apply the same permutation to `values`."""
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
