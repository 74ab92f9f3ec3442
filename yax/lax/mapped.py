"""yax.lax.map: `f` over the leading axis of `xs`, as a scan without carry; with `batch_size`,
`batch_size` slices at a time are vectorised (vmap) inside each step."""

from __future__ import annotations

import operator

from yax import tree_util
from yax.interpreters.batching import move_batch_axis, vmap_flat
from yax.lax.scan import scan
from yax.lax.shape import concatenate, reshape
from yax.lax.slicing import slice_in_dim
from yax.runtime.values import as_operand

__all__ = ["map"]


def map(f, xs, *, batch_size=None):  # noqa: A001  (jax.lax.map shadows the builtin too)
    """`f` applied to each slice of `xs` along the leading axis, stacked.

    `batch_size` (JAX's meaning): the loop runs over groups of `batch_size` slices, `f` being
    vmapped over each group; a remainder that does not fill a group is one more vmapped call.
    More memory per step, fewer steps. None or 0: one slice per step.
    """
    if batch_size is not None:
        batch_size = operator.index(batch_size)
        if batch_size < 0:
            raise ValueError(f"lax.map: batch_size must be a non-negative int, got {batch_size}")
    if batch_size:
        return _batched_map(f, xs, batch_size)
    _, ys = scan(lambda carry, x: (carry, f(x)), None, xs)
    return ys


def _batched_map(f, xs, batch_size: int):
    leaves, tree = tree_util.tree_flatten(xs)
    leaves = [as_operand(x) for x in leaves]
    if not leaves:
        raise ValueError("lax.map: xs has no arrays to map over")
    n = leaves[0].shape[0]
    n_groups, rest = divmod(n, batch_size)
    parts = []
    if n_groups:
        grouped = [reshape(slice_in_dim(x, 0, n_groups * batch_size),
                           (n_groups, batch_size) + tuple(x.shape[1:])) for x in leaves]
        _, ys = scan(lambda carry, group: (carry, _vmapped(f, group)), None,
                     tree_util.tree_unflatten(tree, grouped))
        parts.append(tree_util.tree_map(
            lambda y: reshape(y, (n_groups * batch_size,) + tuple(y.shape[2:])), ys))
    if rest:
        tail = [slice_in_dim(x, n_groups * batch_size, n) for x in leaves]
        parts.append(_vmapped(f, tree_util.tree_unflatten(tree, tail)))
    if len(parts) == 1:
        return parts[0]
    return tree_util.tree_map(lambda a, b: concatenate([a, b], 0), *parts)


def _vmapped(f, xs):
    """`f` vmapped over the leading axis of every leaf of `xs`, outputs stacked on axis 0."""
    leaves, tree = tree_util.tree_flatten(xs)
    size = leaves[0].shape[0]
    out_box = []

    def flat(*args):
        out_leaves, out_tree = tree_util.tree_flatten(f(tree_util.tree_unflatten(tree, args)))
        out_box.append(out_tree)
        return [as_operand(o) for o in out_leaves]
    outs, dims = vmap_flat(flat, leaves, [0] * len(leaves), size)
    return tree_util.tree_unflatten(
        out_box[0], [move_batch_axis(o, d, 0, size) for o, d in zip(outs, dims)])
