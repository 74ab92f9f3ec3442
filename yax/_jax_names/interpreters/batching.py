"""`jax.interpreters.batching`: vmap rules of primitives, the jax way.

    batching.primitive_batchers[my_p] = lambda args, dims, **params: (out, out_dim)

`dims` holds each operand's batch dimension, or `not_mapped` (None) for an unbatched one.
"""

from __future__ import annotations

from yax._jax_names.interpreters._registry import RuleRegistry, as_list
from yax.core.primitive import Primitive
from yax.interpreters.batching import (
    BatchTrace,
    BatchTracer,
    current_axis,
    move_batch_axis,
    not_mapped,
)

__all__ = ["BatchTrace", "BatchTracer", "bdim_at_front", "broadcast", "defbroadcasting",
           "defreducer", "axis_primitive_batchers", "defvectorized", "moveaxis", "not_mapped",
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


def bdim_at_front(x, bdim, size: int):
    """`x` with its batch dimension first (broadcast to `size` if it has none)."""
    return move_batch_axis(x, bdim, 0, size)


def broadcast(x, size: int, axis: int):
    """`size` copies of the unbatched `x`, stacked at `axis`."""
    return move_batch_axis(x, not_mapped, axis, size)


def defbroadcasting(primitive: Primitive) -> None:
    """An elementwise primitive of several operands of one shape: operands are batched by
    moving their batch dimensions to the front (broadcasting the unbatched ones)."""
    def rule(args, dims, **params):
        size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not not_mapped)
        moved = [move_batch_axis(a, d, 0, size) for a, d in zip(args, dims, strict=True)]
        out = primitive.bind(*moved, **params)
        return out, ([0] * len(out) if primitive.multiple_results else 0)
    primitive_batchers[primitive] = rule


def defreducer(primitive: Primitive, ident=None) -> None:
    """A reduction of one operand over the `axes` param: the batch dimension is moved to the
    front and the reduced axes shifted past it."""
    del ident  # the identity is for padded reductions, which yax does not batch this way

    def rule(args, dims, *, axes, **params):
        (x,), (d,) = args, dims
        x = move_batch_axis(x, d, 0, x.shape[d])
        out = primitive.bind(x, axes=tuple(a + 1 for a in axes), **params)
        return out, ([0] * len(out) if primitive.multiple_results else 0)
    primitive_batchers[primitive] = rule
