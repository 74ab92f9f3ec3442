"""Collectives that exchange blocks between examples/devices: ppermute, psum_scatter, all_to_all.

As the other collectives (primitives/collectives.py) they name an axis bound by
`vmap(axis_name=...)` or by `shard_map`'s mesh, and have vmap semantics (each device is one
example). For a value `x` that differs per example `i` of an axis of size n:

    ppermute(x, perm)[d]               == x[s] for each (s, d) in perm; zeros where no s sends
    psum_scatter(x, dim)[i]            == sum_k x[k][..., i, ...]       (dim removed)
    psum_scatter(x, dim, tiled)[i]     == sum_k x[k][..., block i, ...]
    all_to_all(x, split, concat)[i]    == stack_k x[k][..., i at split, ...] at concat
                                          (tiled: blocks instead of single slices)

Transposes: ppermute <-> the inverse permutation; psum_scatter <-> all_gather; all_to_all <->
all_to_all with split and concat swapped.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.primitive import Primitive
from yax.core.trace import use_trace
from yax.interpreters import batching, mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo
from yax.primitives import collectives as coll
from yax.primitives import mesh_axes
from yax.primitives._lax import lax


def _as_batched(x, trace):
    """A value the same for every example, as a batched value of `trace` (batch dim 0)."""
    x = coll._as_value(x)
    if isinstance(trace, mesh_axes.MeshAxis):
        return x  # staged as is: every device holds it
    with use_trace(trace.parent):
        shape = x.aval.shape
        full = lax.broadcast_in_dim(x, (trace.axis_size,) + shape, tuple(range(1, len(shape) + 1)))
    return trace.new_tracer(full, 0)


def _linear_jvp(rebind):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = rebind(x, **params)
        if type(t) is Zero:
            return [out], [Zero(out.aval.strip_weak_type())]
        return [out], [rebind(t, **params)]
    return jvp


# --- ppermute ------------------------------------------------------------------------------

def _check_perm(perm, size: int, axis_name):
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if any(not 0 <= v < size for v in srcs + dsts):
        raise errors.YaxError(f"ppermute perm {perm} has an index outside [0, {size}) for axis "
                              f"{axis_name!r} of size {size}")
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise errors.YaxError(f"ppermute perm {perm} sends from or to one index twice; each "
                              f"source and each destination may appear at most once")
    return perm


def ppermute_bind(x, axis_name, perm):
    trace = coll.find_axis_trace(axis_name)
    perm = _check_perm(perm, trace.axis_size, axis_name)
    if not coll._maybe_batched(x, trace):
        if sorted(d for _, d in perm) == list(range(trace.axis_size)):
            return coll._as_value(x)  # every example receives an equal value
        x = _as_batched(x, trace)
    x = coll.as_varying(x, (axis_name,))  # jax's pvary of an invariant operand
    return ppermute_p.bind(x, axis_name=axis_name, perm=perm)


def _ppermute_batch(args, dims, *, axis_name, perm):
    (x,), (bdim,) = args, dims
    if not coll._is_own_axis(axis_name):
        return [ppermute_bind(x, axis_name, perm)], [bdim]
    size = batching.current_axis().axis_size
    x = batching.move_batch_axis(x, bdim, 0, size)
    source = dict((d, s) for s, d in perm)
    zero = lax.mul(lax.slice_in_dim(x, 0, 1, axis=0), 0)
    parts = [lax.slice_in_dim(x, source[d], source[d] + 1, axis=0) if d in source else zero
             for d in range(size)]
    return [lax.concatenate(parts, 0)], [0]


def _emit_ppermute(ctx, mesh, x, *, axis_name, perm):
    groups = mesh_axes.replica_groups(ctx, mesh, axis_name)
    pairs = np.array([(g[s], g[d]) for g in groups for s, d in perm], dtype=np.int64)
    pairs = pairs.reshape(-1, 2)
    op = hlo.CollectivePermuteOp(x, mlir.i64_elements(pairs), channel_handle=coll.channel())
    return [op.result]


ppermute_p = Primitive(
    "ppermute",
    abstract_eval=lambda x, *, axis_name, perm: ShapedArray(x.shape, x.dtype, x.weak_type),
    lower=coll._mesh_lowering(_emit_ppermute),
    jvp=_linear_jvp(lambda x, *, axis_name, perm: ppermute_bind(x, axis_name, perm)),
    transpose=lambda cts, x, *, axis_name, perm: [
        ppermute_bind(cts[0], axis_name, tuple((d, s) for s, d in perm))],
    batch=_ppermute_batch)


# --- psum_scatter ----------------------------------------------------------------------------

def _scatter_out_shape(shape, dim: int, tiled: bool, size: int, what="psum_scatter"):
    if not 0 <= dim < len(shape):
        raise errors.ShapeError(f"{what} scatter_dimension={dim} is out of range for an operand "
                                f"of shape {shape}")
    if tiled:
        if shape[dim] % size:
            raise errors.ShapeError(f"{what}(tiled=True): dimension {dim} of the operand "
                                    f"{shape} must be divisible by the axis size {size}")
        return shape[:dim] + (shape[dim] // size,) + shape[dim + 1:]
    if shape[dim] != size:
        raise errors.ShapeError(f"{what}: dimension {dim} of the operand {shape} must equal the "
                                f"axis size {size} (or pass tiled=True to split it in blocks)")
    return shape[:dim] + shape[dim + 1:]


def psum_scatter_bind(x, axis_name, scatter_dimension: int, tiled: bool):
    trace = coll.find_axis_trace(axis_name)
    # checked here: a batching trace runs the batch rule, never the abstract evaluation
    _scatter_out_shape(tuple(aval_of_value(x).shape), scatter_dimension, tiled,
                       trace.axis_size)
    if not coll._maybe_batched(x, trace):
        x = _as_batched(x, trace)
    x = coll.as_varying(x, (axis_name,))  # jax's pvary of an invariant operand
    return psum_scatter_p.bind(x, axis_name=axis_name, scatter_dimension=scatter_dimension,
                               tiled=tiled, axis_size=trace.axis_size)


def _psum_scatter_abstract_eval(x, *, axis_name, scatter_dimension, tiled, axis_size):
    return ShapedArray(_scatter_out_shape(x.shape, scatter_dimension, tiled, axis_size),
                       x.dtype, x.weak_type)


def _psum_scatter_batch(args, dims, *, axis_name, scatter_dimension, tiled, axis_size):
    (x,), (bdim,) = args, dims
    if not coll._is_own_axis(axis_name):
        dim = scatter_dimension + (1 if bdim <= scatter_dimension else 0)
        out = psum_scatter_bind(x, axis_name, dim, tiled)
        removed = not tiled and dim < bdim
        return [out], [bdim - 1 if removed else bdim]
    summed = lax.reduce_sum(x, (bdim,))  # the same total for every example
    shape = summed.aval.shape
    d = scatter_dimension
    if tiled:  # split the dimension into (examples, block): the examples' axis is the batch
        summed = lax.reshape(summed, shape[:d] + (axis_size, shape[d] // axis_size)
                             + shape[d + 1:])
    return [summed], [d]


def _psum_scatter_transpose(cts, x, *, axis_name, scatter_dimension, tiled, axis_size):
    return [coll.all_gather_bind(cts[0], axis_name, scatter_dimension, tiled)]


def _emit_psum_scatter(ctx, mesh, x, *, axis_name, scatter_dimension, tiled, axis_size):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    shape = aval_in.shape
    d = scatter_dimension
    tiled_shape = shape[:d] + (shape[d] // axis_size,) + shape[d + 1:]
    op = hlo.ReduceScatterOp(mlir.tensor_type(tiled_shape, aval_in.dtype), x, d,
                             coll.groups_attr(ctx, mesh, axis_name),
                             channel_handle=coll.channel(), use_global_device_ids=True)
    coll.reducer_region(op, aval_in.dtype, lambda a, b: hlo.add(a, b))
    out = op.result
    if not tiled:
        out = hlo.reshape(mlir.aval_type(aval_out), out)
    return [out]


psum_scatter_p = Primitive("psum_scatter", abstract_eval=_psum_scatter_abstract_eval,
                           lower=coll._mesh_lowering(_emit_psum_scatter),
                           jvp=_linear_jvp(
                               lambda x, *, axis_name, scatter_dimension, tiled, axis_size:
                               psum_scatter_bind(x, axis_name, scatter_dimension, tiled)),
                           transpose=_psum_scatter_transpose, batch=_psum_scatter_batch)


# --- all_to_all ------------------------------------------------------------------------------

def _all_to_all_shape(shape, split: int, concat: int, tiled: bool, size: int):
    rank = len(shape)
    if not (0 <= split < rank and 0 <= concat < rank):
        raise errors.ShapeError(f"all_to_all split_axis={split} / concat_axis={concat} out of "
                                f"range for an operand of shape {shape}")
    if tiled:
        if shape[split] % size:
            raise errors.ShapeError(f"all_to_all(tiled=True): dimension {split} of {shape} must "
                                    f"be divisible by the axis size {size}")
        out = list(shape)
        out[split] //= size
        out[concat] *= size
        return tuple(out)
    if shape[split] != size:
        raise errors.ShapeError(f"all_to_all: dimension {split} of {shape} must equal the axis "
                                f"size {size} (or pass tiled=True)")
    rest = shape[:split] + shape[split + 1:]
    return rest[:concat] + (size,) + rest[concat:]


def all_to_all_bind(x, axis_name, split_axis: int, concat_axis: int, tiled: bool):
    trace = coll.find_axis_trace(axis_name)
    _all_to_all_shape(tuple(aval_of_value(x).shape), split_axis, concat_axis, tiled,
                      trace.axis_size)
    if not coll._maybe_batched(x, trace):
        x = _as_batched(x, trace)
    x = coll.as_varying(x, (axis_name,))  # jax's pvary of an invariant operand
    return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis,
                             concat_axis=concat_axis, tiled=tiled, axis_size=trace.axis_size)


def _all_to_all_abstract_eval(x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    return ShapedArray(_all_to_all_shape(x.shape, split_axis, concat_axis, tiled, axis_size),
                       x.dtype, x.weak_type)


def _as_tiled(split_axis, concat_axis):
    """The untiled all_to_all as a tiled one on the operand with a unit axis inserted:
    returns (insert position, tiled split axis, tiled concat axis)."""
    if concat_axis <= split_axis:
        return concat_axis, split_axis + 1, concat_axis
    return concat_axis + 1, split_axis, concat_axis + 1


def _all_to_all_batch(args, dims, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    (x,), (bdim,) = args, dims
    if not coll._is_own_axis(axis_name):
        s = split_axis + (1 if bdim <= split_axis else 0)
        c = concat_axis + (1 if bdim <= concat_axis else 0)
        return [all_to_all_bind(x, axis_name, s, c, tiled)], [bdim]
    n, sp, c = axis_size, split_axis, concat_axis
    x = batching.move_batch_axis(x, bdim, 0, n)  # axis 0: the sender k
    local = x.aval.shape[1:]
    if not tiled:
        # receiver i is the split axis; the output's local axes are the others, with the
        # senders inserted at `concat_axis`
        rest = [1 + j for j in range(len(local)) if j != sp]
        order = [1 + sp] + rest[:c] + [0] + rest[c:]
        return [lax.transpose(x, tuple(order))], [0]
    block = local[sp] // n
    x = lax.reshape(x, (n,) + local[:sp] + (n, block) + local[sp + 1:])

    def position(j):  # where local axis j sits now (the split axis: its block part)
        return 1 + j if j < sp else 2 + j if j > sp else 2 + sp
    order = [1 + sp]
    for j in range(len(local)):
        order += [0, position(j)] if j == c else [position(j)]
    y = lax.transpose(x, tuple(order))
    out_local = list(local)
    out_local[sp] = block
    out_local[c] *= n
    return [lax.reshape(y, (n,) + tuple(out_local))], [0]


def _all_to_all_transpose(cts, x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    if tiled:
        return [all_to_all_bind(cts[0], axis_name, concat_axis, split_axis, True)]
    # untiled: output = input with the split axis removed and an n-axis inserted at concat
    return [all_to_all_bind(cts[0], axis_name, concat_axis, split_axis, False)]


def _emit_all_to_all(ctx, mesh, x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    groups = coll.groups_attr(ctx, mesh, axis_name)
    if tiled:
        op = hlo.AllToAllOp([x], split_axis, concat_axis, axis_size, groups,
                            channel_handle=coll.channel())
        return [op.results[0]]
    at, s, c = _as_tiled(split_axis, concat_axis)
    shape = aval_in.shape[:at] + (1,) + aval_in.shape[at:]
    x = hlo.reshape(mlir.tensor_type(shape, aval_in.dtype), x)
    op = hlo.AllToAllOp([x], s, c, axis_size, groups, channel_handle=coll.channel())
    return [hlo.reshape(mlir.aval_type(aval_out), op.results[0])]


all_to_all_p = Primitive("all_to_all", abstract_eval=_all_to_all_abstract_eval,
                         lower=coll._mesh_lowering(_emit_all_to_all),
                         jvp=_linear_jvp(
                             lambda x, *, axis_name, split_axis, concat_axis, tiled, axis_size:
                             all_to_all_bind(x, axis_name, split_axis, concat_axis, tiled)),
                         transpose=_all_to_all_transpose, batch=_all_to_all_batch)
