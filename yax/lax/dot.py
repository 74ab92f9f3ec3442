"""yax.lax contractions: `dot_general` and the matrix/vector `dot`."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import aval_of_value
from yax.core.trace import bind
from yax.lax._util import out_sharding_of, typed_result, with_out_sharding
from yax.primitives.dot import PRECISIONS, dot_general_p
from yax.runtime.values import as_operand, aval_of

__all__ = ["batch_matmul", "dot", "dot_general", "Precision"]


class Precision:
    """Names of XLA's matmul precisions (pass them, or the strings, as `precision`)."""
    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


def canonicalize_precision(precision):
    """None, one precision, or an (lhs, rhs) pair -> None or a pair of names."""
    if precision is None:
        return None
    pair = tuple(precision) if isinstance(precision, (tuple, list)) else (precision, precision)
    names = tuple(str(getattr(p, "name", p)).upper() for p in pair)
    if len(names) != 2 or any(n not in PRECISIONS for n in names):
        raise errors.DTypeError(f"precision must be None, one of {PRECISIONS} or a pair of them, "
                                f"got {precision!r}")
    return names


def _preferred(preferred_element_type):
    if preferred_element_type is None:
        return None
    return dtypes.canonicalize(np.dtype(preferred_element_type))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """Contract `lhs` and `rhs` over paired dims, batching over others.

    Args:
      dimension_numbers: ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)).
    Returns:
      An array of shape batch dims + lhs free dims + rhs free dims.

    `out_sharding` (a PartitionSpec over the current mesh, or a NamedSharding) is the
    result's sharding and type: needed when both operands shard a contracting dimension.

    Example: `dot_general(a, b, (((2,), (1,)), ((0,), (0,))))` is a batched matmul.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dnums = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
             (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    sharding = out_sharding_of("dot_general", out_sharding)
    ndim = aval_of_value(lhs).ndim + aval_of_value(rhs).ndim - 2 * len(lc) - len(lb)
    with typed_result("dot_general", sharding, ndim):
        out = bind(dot_general_p, lhs, rhs, dimension_numbers=dnums,
                   precision=canonicalize_precision(precision),
                   preferred_element_type=_preferred(preferred_element_type))
    return with_out_sharding(out, sharding)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product of rank-1 or rank-2 operands: contracts lhs's last axis with
    rhs's first (vector . vector, matrix @ vector, matrix @ matrix)."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise errors.ShapeError(f"dot needs rank-1 or rank-2 operands, got {la.str_short()} and "
                                f"{ra.str_short()}; use dot_general for other ranks")
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)


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
