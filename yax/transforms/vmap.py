"""`vmap`: vectorise a function over a batch axis of its arguments.

`in_axes`/`out_axes` are ints (negative ones count from the end), None (not batched / broadcast
in the output), or pytree prefixes of the arguments/outputs giving one of those per leaf.
"""

from __future__ import annotations

import functools
import inspect

from yax import errors, tree_util
from yax.core.avals import aval_of_value
from yax.interpreters import ref_state
from yax.interpreters.batching import move_batch_axis, not_mapped, vmap_flat
from yax.interpreters.staging import _flat_arg_names
from yax.lax.reductions import reduce_sum
from yax.runtime.values import canonical_leaf


def _broadcast_prefix(prefix, tree, what: str) -> list:
    """One entry of `prefix` per leaf of `tree` (prefix leaves cover whole subtrees)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_util.tree_leaves(tree))
    prefix_leaves, prefix_tree = tree_util.tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise errors.YaxError(
            f"vmap {what} {prefix!r} does not match the structure of the arguments "
            f"{tree_util.tree_structure(tree)}: {e}. Give one axis (int or None) per argument, "
            f"or a single int for all.") from None
    out = []
    for axis, sub in zip(prefix_leaves, subtrees):
        out.extend([axis] * len(tree_util.tree_leaves(sub)))
    return out


def _normalize_axis(axis, ndim: int, path: str, what: str):
    if axis is None:
        return None
    if not isinstance(axis, int):
        raise TypeError(f"vmap {what} entries must be ints or None, got {axis!r} for {path}")
    if not -ndim <= axis < max(ndim, 1) or ndim == 0:
        raise errors.ShapeError(f"vmap {what}={axis} is out of range for {path}, which has rank "
                                f"{ndim}; use an axis in [{-ndim}, {ndim}) or None")
    return axis % ndim


def _paths(tree) -> list[str]:
    return [f"args{tree_util.keystr(p)}" for p, _ in tree_util.tree_flatten_with_path(tree)[0]]


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         sum_match: bool = False):
    """Vectorise `fun` over axis `in_axes` of its arguments, stacking results at `out_axes`.

    `spmd_axis_name` (jax's sharding of the batch axis over a mesh axis) must be None: yax's
    vmap does not shard; libraries such as flax.nnx pass None by default.

    `sum_match=True` (as jax 0.10.2): an output that depends on the batched inputs but has
    `out_axes=None` is summed over the batch axis instead of being an error.

    Example:
      >>> yax.vmap(lambda x: x @ x)(jnp.ones((5, 3)))   # five dot products
    """
    if spmd_axis_name is not None:
        raise NotImplementedError(
            f"vmap: spmd_axis_name={spmd_axis_name!r} shards the batch axis over a mesh axis, "
            f"which yax's vmap does not do; pass None (or shard with yax.shard_map)")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def batched(*args):
        leaves, in_tree = tree_util.tree_flatten(args)
        leaves = [x if isinstance(x, ref_state.Ref) else canonical_leaf(x) for x in leaves]
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise errors.YaxError(f"vmap in_axes {in_axes} has {len(in_axes)} entries but the "
                                  f"function got {len(args)} positional arguments; give one "
                                  f"entry per argument (None for unbatched ones)")
        axes = _broadcast_prefix(in_axes, args, "in_axes")
        paths = _paths(args)
        avals = [x._aval if isinstance(x, ref_state.Ref) else aval_of_value(x) for x in leaves]
        dims = [_normalize_axis(a, av.ndim, p, "in_axes")
                for a, av, p in zip(axes, avals, paths)]
        size = _axis_size(avals, dims, paths, axis_size)
        refs = _RefArgs(leaves, dims, fun, args)
        out_box = []

        def flat(*xs):
            out = fun(*tree_util.tree_unflatten(in_tree, refs.enter(xs)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_box.append((out, out_tree))
            return out_leaves + refs.leave()

        outs, out_dims = vmap_flat(flat, refs.values, dims, size, axis_name)
        out, out_tree = out_box[0]
        wanted = _broadcast_prefix(out_axes, out, "out_axes") + refs.dims
        moved = [_placed_output(o, d, w, size, sum_match)
                 for o, d, w in zip(outs, out_dims, wanted, strict=True)]
        return tree_util.tree_unflatten(out_tree, refs.write_back(moved))
    return batched


class _RefArgs:
    """Refs among vmap's arguments (see ref_state): a batched one enters as its value, boxed
    inside in a Ref of the batch trace, and its final value is an extra output written back;
    an unbatched one (in_axes None) is used as it is, so a vmapped write to it is an error."""

    def __init__(self, leaves, dims, fun, args):
        self.positions = [i for i, x in enumerate(leaves) if isinstance(x, ref_state.Ref)]
        if self.positions:
            code = getattr(inspect.unwrap(fun), "__code__", None)
            where = f"{code.co_filename}:{code.co_firstlineno}" if code else "unknown location"
            tree = tree_util.tree_structure((tuple(args), {}))
            names = [n for n, _ in _flat_arg_names((fun, tree, set()), len(leaves))]
            ref_state.check_no_duplicates(leaves, getattr(fun, "__name__", "fun"), where,
                                          "vmap", names)
        self.leaves = leaves
        self.batched = [i for i in self.positions if dims[i] is not None]
        self.dims = [dims[i] for i in self.batched]
        self.values = [ref_state.read(x) if i in self.batched else x
                       for i, x in enumerate(leaves)]
        self.boxes = []

    def enter(self, xs):
        if not self.positions:
            return xs
        xs = list(xs)
        for i in self.positions:
            if i in self.batched:
                xs[i] = ref_state.box_args([xs[i]], [True])[1][0]
            else:
                xs[i] = self.leaves[i]
            if i in self.batched:
                self.boxes.append(xs[i])
        return xs

    def leave(self) -> list:
        return [ref_state.read(b) for b in self.boxes]

    def write_back(self, moved):
        n = len(moved) - len(self.batched)
        for i, v in zip(self.batched, moved[n:], strict=True):
            ref_state.write(self.leaves[i], v)
        return moved[:n]


def _placed_output(o, d, w, size: int, sum_match: bool):
    """Output `o` (batch axis `d`) with its batch axis at `w`; `w` None: unbatched outputs as
    they are, batched ones summed over the batch axis with `sum_match`, else an error."""
    if w is None:
        if d is not_mapped:
            return o
        if sum_match:
            return reduce_sum(o, (d,))
        raise errors.YaxError("vmap out_axes=None for an output that depends on the batched "
                              "inputs; only unbatched outputs can use None (or pass "
                              "sum_match=True to sum it over the batch axis)")
    rank = len(getattr(o, "shape", ())) + (1 if d is not_mapped else 0)
    return move_batch_axis(o, d, w % rank, size)


def _axis_size(avals, dims, paths, axis_size) -> int:
    sizes = {p: av.shape[d] for av, d, p in zip(avals, dims, paths) if d is not None}
    if not sizes:
        if axis_size is None:
            raise errors.YaxError("vmap needs at least one batched argument (in_axes not all "
                                  "None), or an explicit axis_size=")
        return axis_size
    distinct = set(sizes.values())
    if axis_size is not None:
        distinct.add(axis_size)
    if len(distinct) > 1:
        listing = ", ".join(f"{p}: {s}" for p, s in sizes.items())
        raise errors.ShapeError(f"vmap got arguments with different sizes along the mapped axis: "
                                f"{listing}" + (f", axis_size={axis_size}" if axis_size else "")
                                + ". Every batched argument needs the same size there; use "
                                "in_axes=None for arguments that are shared by all examples.")
    return distinct.pop()
