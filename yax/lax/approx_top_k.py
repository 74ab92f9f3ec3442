"""yax.lax.approx_max_k and approx_min_k: exact here (lax.top_k), whatever the recall target.
"""

from __future__ import annotations

from yax.lax import elementwise as ew
from yax.lax.top_k import top_k
from yax.runtime.values import as_operand

__all__ = ["approx_max_k", "approx_min_k"]


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
