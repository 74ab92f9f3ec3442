"""`jax.interpreters.batching`: vmap rules of primitives, the jax way.

    batching.primitive_batchers[my_p] = lambda args, dims, **params: (out, out_dim)

`dims` holds each operand's batch dimension, or `not_mapped` (None) for an unbatched one.
"""

from __future__ import annotations

from yax._jax_names.interpreters._registry import RuleRegistry, as_list
from yax.core.primitive import Primitive
from yax.interpreters.batching import BatchTracer, current_axis, move_batch_axis, not_mapped

__all__ = ["BatchTracer", "axis_primitive_batchers", "defvectorized", "moveaxis", "not_mapped",
           "primitive_batchers"]


def _adapt_batch(primitive: Primitive, rule):
    def batch(args, dims, **params):
        out, out_dims = rule(tuple(args), tuple(dims), **params)
        return as_list(primitive, out), as_list(primitive, out_dims)
    return batch


def _adapt_axis_batch(primitive: Primitive, rule):
    def batch(args, dims, **params):
        axis = current_axis()
        out, out_dims = rule(axis.axis_size, axis.axis_name, None, list(args), list(dims),
                             **params)
        return as_list(primitive, out), as_list(primitive, out_dims)
    return batch


primitive_batchers = RuleRegistry("batch", _adapt_batch)
# rules that also need the batch axis: rule(axis_size, axis_name, trace_type, args, dims, ...)
axis_primitive_batchers = RuleRegistry("batch", _adapt_axis_batch)


def moveaxis(x, src, dst: int, size: int):
    """`x` with its batch dimension moved from `src` (or broadcast, if not_mapped) to `dst`."""
    return move_batch_axis(x, src, dst, size)


def defvectorized(primitive: Primitive) -> None:
    """An elementwise primitive of one operand: it batches by applying it to the batch."""
    primitive_batchers[primitive] = lambda args, dims, **params: (
        primitive.bind(*args, **params), dims[0])
