"""lax.ragged_dot / ragged_dot_general: a matrix product whose lhs rows (or contracting
entries) are split into consecutive groups, each multiplied by its own rhs.

Computed densely with masks: every group's product is formed and each row keeps its group's
(O(g) times the work of one dot, where XLA's ragged-dot kernels skip it), so the derivatives
and vmap are those of dot_general, select and reductions. Rows past the last group are zero,
as in jax.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from yax.lax import elementwise as ew
from yax.lax.construction import full_like
from yax.lax.dot import dot_general
from yax.lax.reductions import cumsum, reduce_sum
from yax.lax.shape import broadcast_in_dim, broadcasted_iota, transpose
from yax.runtime.values import as_operand

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dot dimension numbers of a ragged dot, and which lhs dimension is ragged and which
    rhs dimension indexes the groups."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


_ROWS = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])      # [m,k] [g,k,n]
_CONTRACTING = RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])  # [m,k] [k,n]


def _group_masks(group_sizes, size: int, group_offset):
    """[g, size] booleans: entry i belongs to group j."""
    sizes = as_operand(group_sizes)
    if sizes.ndim != 1:
        raise ValueError(f"ragged_dot: group_sizes must be 1-D, got shape {sizes.shape}")
    sizes = ew.convert_element_type(sizes, np.int32)
    g = sizes.shape[0]
    ends = cumsum(sizes, axis=0)
    starts = ew.sub(ends, sizes)
    idx = broadcasted_iota(np.int32, (g, size), 1)
    mask = ew.bitwise_and(ew.ge(idx, broadcast_in_dim(starts, (g, size), (0,))),
                          ew.lt(idx, broadcast_in_dim(ends, (g, size), (0,))))
    if group_offset is not None:  # groups before the offset are not computed (zero rows)
        first = ew.convert_element_type(as_operand(group_offset).reshape(()), np.int32)
        gid = broadcasted_iota(np.int32, (g, size), 0)
        mask = ew.bitwise_and(mask, ew.ge(gid, broadcast_in_dim(first, (g, size), ())))
    return mask


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """Ragged dot with explicit dimension numbers. yax implements jax's two 2-D forms:
    a ragged lhs row dimension (`[m,k] x [g,k,n] -> [m,n]`, `ragged_dot`'s) and a ragged
    contracting dimension (`[m,k] x [k,n] -> [g,m,n]`, one product per group of k)."""
    if out_sharding is not None:
        raise ValueError("ragged_dot_general: out_sharding is not supported by yax")
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    dn = ragged_dot_dimension_numbers
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    if dn == _ROWS and lhs.ndim == 2 and rhs.ndim == 3:
        m = lhs.shape[0]
        per_group = dot_general(lhs, rhs, (((1,), (1,)), ((), ())), **kw)  # [m, g, n]
        mask = _group_masks(group_sizes, m, group_offset)                     # [g, m]
        keep = broadcast_in_dim(transpose(mask, (1, 0)), per_group.shape, (0, 1))
        picked = ew.select(keep, per_group, full_like(per_group, 0))
        return reduce_sum(picked, (1,))
    if dn == _CONTRACTING and lhs.ndim == 2 and rhs.ndim == 2:
        m, k = lhs.shape
        mask = _group_masks(group_sizes, k, group_offset)                     # [g, k]
        g = mask.shape[0]
        lhs_g = broadcast_in_dim(lhs, (g, m, k), (1, 2))
        lhs_g = ew.select(broadcast_in_dim(mask, (g, m, k), (0, 2)), lhs_g,
                          full_like(lhs_g, 0))
        return dot_general(lhs_g, rhs, (((2,), (0,)), ((), ())), **kw)       # [g, m, n]
    raise NotImplementedError(
        f"ragged_dot_general: yax implements the 2-D forms {_ROWS} and {_CONTRACTING} "
        f"(lhs {lhs.shape}, rhs {rhs.shape}); got {dn}")


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """`out[i] = lhs[i] @ rhs[j]` for each row i of lhs (m x k) in group j of the consecutive
    groups of sizes `group_sizes` (g,); rhs is g x k x n. Rows past the groups are zero."""
    return ragged_dot_general(lhs, rhs, group_sizes, _ROWS, precision=precision,
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)
