"""Named-axis collectives: psum, psum_invariant, pmax, pmin, all_gather, axis_index and pvary.

A collective names an axis bound by an enclosing `vmap(..., axis_name=name)` and acts across the
examples of that axis. For a value `x` that differs per example `i` of a vmap of size n:

    psum(x)[i]       == sum(x[k] for k in range(n))        # the same for every i
    pmax(x)[i]       == max(x[k] for k in range(n))        # pmin likewise
    all_gather(x)[i] == stack([x[k] for k in range(n)], axis)
    axis_index()[i]  == i
    pvary(x)[i]      == x                                  # x the same for every i: now batched

The `*_bind` functions below are what yax.lax calls (and what the rules call back into): they find
the innermost trace binding the name, and answer directly when `x` is certainly the same for every
example of that axis (a constant, or a value of a transformation outside it): a batching trace only
runs a primitive's batch rule when an operand is batched, so those cases never reach it. Lowering a
collective means its name was never bound: an error, not an XLA failure.

Inside a shard_map body with check_vma, jax's typed rules apply (see `checks_vma`): psum is
`psum_invariant` (transpose: `pvary`), an invariant operand is cast with `pvary` first
(transpose: a psum), so derivatives are those of the typed program; along vmap axes and with
check_vma=False, psum transposes to psum.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar
from yax.core.primitive import Primitive
from yax.core.trace import Tracer, current_trace, use_trace
from yax.interpreters import batching, mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo, ir
from yax.primitives import mesh_axes
from yax.primitives._checks import dtype_kind_check
from yax.primitives._lax import lax
from yax.runtime import values

# --- finding the trace that binds an axis name ---------------------------------------------------

def _unbound(axis_name) -> errors.YaxError:
    return errors.YaxError(f"unbound axis name {axis_name!r}: use it inside "
                           f"vmap(..., axis_name={axis_name!r})")


def find_axis_trace(axis_name) -> batching.BatchTrace:
    """The innermost active batching trace named `axis_name`, else the mesh axis of that name
    bound by an enclosing shard_map (`mesh_axes.MeshAxis`), else the unbound-name error."""
    if axis_name is None:
        raise errors.YaxError("a collective needs an axis name (got None): pass the axis_name "
                              "given to vmap(..., axis_name=...)")
    trace = current_trace()
    while trace is not None:
        if trace.binds_axis(axis_name):
            return trace
        trace = trace.parent
    mesh_axis = mesh_axes.find_mesh_axis(axis_name)
    if mesh_axis is not None:
        return mesh_axis
    raise _unbound(axis_name)


def axis_size(axis_name) -> int:
    return find_axis_trace(axis_name).axis_size


def _maybe_batched(x, trace) -> bool:
    """False when `x` is surely the same for every example of `trace`: a concrete value or a
    tracer of a transformation outside it. Inner tracers may hide a batched value; their own rules
    call the `*_bind` functions again one level out, where the answer is exact."""
    return isinstance(x, Tracer) and x._trace.level >= trace.level


def _as_value(x):
    return values.to_array(x) if type(x) is TypedScalar else x  # results are arrays


# A value that is the same for every example: summing n copies multiplies by n; max/min keep it.

def _psum_unbatched(x, size: int):
    return lax.mul(_as_value(x), size)


def _chooser_unbatched(x, size: int):
    return _as_value(x)


def checks_vma(trace) -> bool:
    """Whether the axis `trace` binds follows jax's typed rules (a shard_map body with
    check_vma): values know the mesh axes they vary along, psum is `psum_invariant` and
    transposes to `pvary`, and `pvary` transposes to a psum. Otherwise (vmap axes, shard_map
    with check_vma=False) the older rules: psum transposes to psum."""
    return getattr(trace, "check_vma", False)


def is_mesh_axis(trace) -> bool:
    """A shard_map's mesh axis (staged: mesh_axes.MeshAxis; eager: its batching trace), which
    knows its check_vma; vmap's axes do not."""
    return hasattr(trace, "check_vma")


def all_check_vma(axis_names) -> bool:
    return all(checks_vma(find_axis_trace(a)) for a in axis_names)


def psum_bind(x, axis_name):
    trace = find_axis_trace(axis_name)
    if not _maybe_batched(x, trace):
        return _psum_unbatched(x, trace.axis_size)
    if checks_vma(trace):
        return psum_invariant_bind(x, (axis_name,))
    return psum_p.bind(x, axis_name=axis_name)


def psum_invariant_bind(x, axes: tuple):
    """jax's psum inside a checked shard_map body: over mesh axes `x` does not vary along, a
    `pvary` first (the sum of n equal copies is n times the value); the result is invariant
    along `axes`."""
    traces = [find_axis_trace(a) for a in axes]
    if not any(_maybe_batched(x, t) for t in traces):  # a constant: n equal copies
        return _psum_unbatched(x, math.prod(t.axis_size for t in traces))
    x = as_varying(x, axes)
    return psum_invariant_p.bind(x, axes=tuple(axes))


def as_varying(x, axes: tuple):
    """`x` cast (`pvary`) to vary along those of the mesh axes `axes` it does not vary along yet,
    where they follow jax's typed rules; `x` itself otherwise."""
    have = mesh_axes.vma_of(x)
    missing = [a for a in axes if a not in have and checks_vma(find_axis_trace(a))]
    if not missing:
        return x
    return pvary_p.bind(_as_value(x), axes=mesh_axes.ordered(missing))


def pmax_bind(x, axis_name):
    trace = find_axis_trace(axis_name)
    if not _maybe_batched(x, trace):
        return _chooser_unbatched(x, 0)
    return pmax_p.bind(as_varying(x, (axis_name,)), axis_name=axis_name)


def pmin_bind(x, axis_name):
    trace = find_axis_trace(axis_name)
    if not _maybe_batched(x, trace):
        return _chooser_unbatched(x, 0)
    return pmin_p.bind(as_varying(x, (axis_name,)), axis_name=axis_name)


def all_gather_bind(x, axis_name, axis: int, tiled: bool):
    trace = find_axis_trace(axis_name)
    if not _maybe_batched(x, trace):
        shape = x.aval.shape
        out_shape = shape[:axis] + (trace.axis_size,) + shape[axis:]
        dims = tuple(i for i in range(len(out_shape)) if i != axis)
        return _merge_tiled(lax.broadcast_in_dim(x, out_shape, dims), axis, tiled)
    return all_gather_p.bind(as_varying(x, (axis_name,)), axis_name=axis_name, axis=axis,
                             tiled=tiled, axis_size=trace.axis_size)


def axis_index_bind(axis_name):
    """The example's position along `axis_name`: an iota batched along that axis.

    Built directly at the binding trace: with no operands, nothing would route a primitive
    application to that trace's batch rule."""
    trace = find_axis_trace(axis_name)
    if isinstance(trace, mesh_axes.MeshAxis):  # inside shard_map: the device's position
        return axis_index_p.bind(axis_name=axis_name)
    with use_trace(trace.parent):
        index = lax.iota(np.int32, trace.axis_size)
    return trace.new_tracer(index, 0)


def pvary_bind(x, axes: tuple):
    """`x` (the same on every device along the mesh axes `axes`) typed as varying along them:
    no data moves (under vmap semantics, the value is unchanged). In a shard_map body with
    check_vma=False it is `x` itself, as in jax; along vmap axes (where jax refuses it) yax
    keeps it as a typed identity."""
    traces = [find_axis_trace(name) for name in axes]  # the unbound-name error
    if not any(is_mesh_axis(t) for t in traces):
        return pvary_p.bind(_as_value(x), axes=tuple(axes))
    return as_varying(x, tuple(axes))


def _merge_tiled(x, axis: int, tiled: bool):
    """For tiled=True, fold the gathered axis into the operand's axis that follows it."""
    if not tiled:
        return x
    shape = x.aval.shape
    return lax.reshape(x, shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])


def _is_own_axis(axis_name) -> bool:
    """Inside a batch rule: does the collective act along the axis being batched right now?"""
    return batching.current_axis().axis_name == axis_name


def _unbound_lower(ctx, *args, axis_name, **params):
    raise _unbound(axis_name)


def _mesh_lowering(emit):
    """A lowering that emits `emit(ctx, mesh, *args, **params)` inside a shard_map region over
    a mesh with `axis_name`, and reports the unbound name elsewhere."""
    def lower(ctx, *args, axis_name, **params):
        mesh = mesh_axes.manual_mesh(ctx, axis_name)
        if mesh is None:
            raise _unbound(axis_name)
        return emit(ctx, mesh, *args, axis_name=axis_name, **params)
    return lower


def channel():
    return hlo.ChannelHandle.get(1, 1)  # as jax: one handle for every collective (see notes)


def groups_attr(ctx, mesh, axis_name):
    return mlir.i64_elements(mesh_axes.replica_groups(ctx, mesh, axis_name))


def reducer_region(op, dtype, combine) -> None:
    block = mlir.scalar_region(op, dtype, 2)
    with ir.InsertionPoint(block):
        hlo.ReturnOp([combine(*block.arguments)])


def _emit_all_reduce(combine):
    def emit(ctx, mesh, x, *, axis_name):
        aval = ctx.avals_out[0]
        op = hlo.AllReduceOp([mlir.aval_type(aval)], [x], groups_attr(ctx, mesh, axis_name),
                             channel_handle=channel(), use_global_device_ids=True)
        reducer_region(op, aval.dtype, combine)
        return [op.results[0]]
    return _mesh_lowering(emit)


def _emit_all_gather(ctx, mesh, x, *, axis_name, axis, tiled, axis_size):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if not tiled:  # gather along a new unit axis, then it is the tiled form
        shape = aval_in.shape[:axis] + (1,) + aval_in.shape[axis:]
        x = hlo.reshape(mlir.tensor_type(shape, aval_in.dtype), x)
    op = hlo.AllGatherOp([mlir.aval_type(aval_out)], [x], axis,
                         groups_attr(ctx, mesh, axis_name), channel_handle=channel(),
                         use_global_device_ids=True)
    return [op.results[0]]


def _emit_axis_index(ctx, mesh, *, axis_name):
    table = mlir.constant(mesh_axes.axis_coordinates(ctx, mesh, axis_name))
    pid = hlo.convert(mlir.tensor_type((), np.int32), hlo.PartitionIdOp().result)
    start = hlo.reshape(mlir.tensor_type((), np.int32), pid)
    one = hlo.dynamic_slice(table, [start], mlir.dense_i64([1]))
    return [hlo.reshape(mlir.tensor_type((), np.int32), one)]


# --- psum, pmax, pmin ----------------------------------------------------------------------------

def _allreduce_abstract_eval(name, kind):
    def rule(x, *, axis_name):
        dtype_kind_check(name, x, kind)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return rule


def _allreduce_batch(reduce, unbatched, rebind):
    """Along the batched axis: reduce over the batch dim (the result is the same for every
    example, so unbatched). Along another (outer) axis: keep the batch dim, reduce out there.
    (An unbatched operand only arrives here if the batching trace routes collectives naming its
    axis to their rules even then.)"""
    def batch(args, dims, *, axis_name):
        (x,), (bdim,) = args, dims
        if _is_own_axis(axis_name):
            if bdim is None:
                return [unbatched(x, batching.current_axis().axis_size)], [None]
            return [reduce(x, (bdim,))], [None]
        return [rebind(x, axis_name)], [bdim]
    return batch


def _psum_jvp(primals, tangents, *, axis_name):
    (x,), (x_dot,) = primals, tangents
    out = psum_bind(x, axis_name)
    if type(x_dot) is Zero:
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [psum_bind(x_dot, axis_name)]


def _psum_transpose(cts, x, *, axis_name):
    # every example's output is the sum of all inputs: each input receives every cotangent
    return [psum_bind(cts[0], axis_name)]


def _chooser_jvp(rebind):
    """Tangent of pmax/pmin: the chosen example's tangent, shared equally among ties (the
    reduce_max convention)."""
    def jvp(primals, tangents, *, axis_name):
        (x,), (x_dot,) = primals, tangents
        out = rebind(x, axis_name)
        if type(x_dot) is Zero:
            return [out], [Zero(out.aval.strip_weak_type())]
        hit = lax.convert_element_type(lax.eq(x, out), x_dot.aval.dtype)
        count = psum_bind(hit, axis_name)
        return [out], [lax.div(psum_bind(lax.mul(x_dot, hit), axis_name), count)]
    return jvp


psum_p = Primitive(
    "psum", abstract_eval=_allreduce_abstract_eval("psum", "numeric"),
    lower=_emit_all_reduce(lambda a, b: hlo.add(a, b)), jvp=_psum_jvp, transpose=_psum_transpose,
    batch=_allreduce_batch(lambda x, axes: lax.reduce_sum(x, axes), _psum_unbatched, psum_bind))

pmax_p = Primitive(
    "pmax", abstract_eval=_allreduce_abstract_eval("pmax", "real"),
    lower=_emit_all_reduce(lambda a, b: hlo.maximum(a, b)), jvp=_chooser_jvp(pmax_bind),
    batch=_allreduce_batch(lambda x, axes: lax.reduce_max(x, axes), _chooser_unbatched,
                           pmax_bind))

pmin_p = Primitive(
    "pmin", abstract_eval=_allreduce_abstract_eval("pmin", "real"),
    lower=_emit_all_reduce(lambda a, b: hlo.minimum(a, b)), jvp=_chooser_jvp(pmin_bind),
    batch=_allreduce_batch(lambda x, axes: lax.reduce_min(x, axes), _chooser_unbatched,
                           pmin_bind))


# --- psum_invariant: jax's psum where varying manual axes are checked ------------------------
# The same sum, over one or more mesh axes at once. Its operand varies along `axes` (psum_bind
# casts an invariant one first) and its result does not: one value, whose cotangent is one
# value too, so the transpose hands that cotangent to every device (`pvary`) instead of summing
# the devices' copies (psum's transpose under the older rules, n times as large).

def _psum_invariant_batch(args, dims, *, axes):
    (x,), (bdim,) = args, dims
    own = batching.current_axis().axis_name
    rest = tuple(a for a in axes if a != own)
    out_dim = bdim
    if own in axes:
        out_dim = None
        x = (_psum_unbatched(x, batching.current_axis().axis_size) if bdim is None
             else lax.reduce_sum(x, (bdim,)))
    if rest:  # the other axes, one trace further out
        x = psum_invariant_bind(x, rest)
    return [x], [out_dim]


def _psum_invariant_jvp(primals, tangents, *, axes):
    (x,), (x_dot,) = primals, tangents
    out = psum_invariant_p.bind(x, axes=axes)
    if type(x_dot) is Zero:
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [psum_invariant_bind(x_dot, axes)]


def _emit_psum_invariant(ctx, x, *, axes):
    aval = ctx.avals_out[0]
    for name in axes:  # one all-reduce per mesh axis (XLA combines them)
        mesh = mesh_axes.manual_mesh(ctx, name)
        if mesh is None:
            raise _unbound(name)
        op = hlo.AllReduceOp([mlir.aval_type(aval)], [x], groups_attr(ctx, mesh, name),
                             channel_handle=channel(), use_global_device_ids=True)
        reducer_region(op, aval.dtype, lambda a, b: hlo.add(a, b))
        x = op.results[0]
    return [x]


psum_invariant_p = Primitive(
    "psum_invariant", abstract_eval=lambda x, *, axes: _allreduce_abstract_eval(
        "psum", "numeric")(x, axis_name=axes),
    lower=_emit_psum_invariant, jvp=_psum_invariant_jvp,
    transpose=lambda cts, x, *, axes: [pvary_bind(cts[0], axes)],
    batch=_psum_invariant_batch)


# --- all_gather: stack (tiled: concatenate) every example's value along `axis` -------------------

def _all_gather_abstract_eval(x, *, axis_name, axis, tiled, axis_size):
    limit = x.ndim if tiled else x.ndim + 1
    if not 0 <= axis < limit:
        raise errors.ShapeError(f"all_gather axis={axis} is out of range for an operand "
                                f"{x.str_short()} (tiled={tiled}); use an axis in [0, {limit})")
    shape = x.shape
    if tiled:
        out = shape[:axis] + (axis_size * shape[axis],) + shape[axis + 1:]
    else:
        out = shape[:axis] + (axis_size,) + shape[axis:]
    return ShapedArray(out, x.dtype, x.weak_type)


def _all_gather_batch(args, dims, *, axis_name, axis, tiled, axis_size):
    (x,), (bdim,) = args, dims
    if _is_own_axis(axis_name):
        stacked = batching.move_batch_axis(x, bdim, axis, axis_size)
        return [_merge_tiled(stacked, axis, tiled)], [None]
    if bdim <= axis:  # the batch dim sits before the gathered position: shift that right
        return [all_gather_bind(x, axis_name, axis + 1, tiled)], [bdim]
    return [all_gather_bind(x, axis_name, axis, tiled)], [bdim if tiled else bdim + 1]


def _all_gather_jvp(primals, tangents, *, axis_name, axis, tiled, axis_size):
    (x,), (x_dot,) = primals, tangents
    out = all_gather_bind(x, axis_name, axis, tiled)
    if type(x_dot) is Zero:
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [all_gather_bind(x_dot, axis_name, axis, tiled)]


def _all_gather_transpose(cts, x, *, axis_name, axis, tiled, axis_size):
    # example i's input appears, at slot i, in every example's output: sum the cotangents over
    # examples, then each example takes its own slot
    summed = psum_bind(cts[0], axis_name)
    index = axis_index_bind(axis_name)
    if not tiled:
        return [lax.dynamic_index_in_dim(summed, index, axis, keepdims=False)]
    chunk = x.aval.shape[axis]
    return [lax.dynamic_slice_in_dim(summed, lax.mul(index, chunk), chunk, axis)]


all_gather_p = Primitive("all_gather", abstract_eval=_all_gather_abstract_eval,
                         lower=_mesh_lowering(_emit_all_gather), jvp=_all_gather_jvp,
                         transpose=_all_gather_transpose, batch=_all_gather_batch)


# --- axis_index: no operands, an int32 scalar that is the example's position ---------------------
# `axis_index_bind` builds its value directly at the binding trace; the primitive is what a staged
# program holds (and what a device-parallel lowering will implement).

def _axis_index_batch(args, dims, *, axis_name):
    size = batching.current_axis().axis_size
    if _is_own_axis(axis_name):
        return [lax.iota(np.int32, size)], [0]
    return [axis_index_bind(axis_name)], [None]


axis_index_p = Primitive("axis_index",
                         abstract_eval=lambda *, axis_name: ShapedArray((), dtypes.int32),
                         lower=_mesh_lowering(_emit_axis_index),
                         jvp=lambda primals, tangents, *, axis_name: (
                             [axis_index_bind(axis_name)], [Zero(ShapedArray((), dtypes.int32))]),
                         batch=_axis_index_batch)


# --- pvary: an invariant value as a varying one (`lax.pcast(x, name, to="varying")`) ---------
# No data moves: the value is unchanged, only its type varies along `axes`. It exists only
# where the types are checked, and is also what an operation inserts when its operands vary
# along different axes (mesh_axes.cast_operands). Its transpose sums the devices' cotangents
# over `axes` (a psum_invariant): the one invariant value fed them all.

def _pvary_batch(args, dims, *, axes):
    (x,), (bdim,) = args, dims
    # along an eager shard_map's own axis the cast is only a type (its tracer records it)
    rest = tuple(a for a in axes if a != batching.current_axis().axis_name)
    return [pvary_p.bind(x, axes=rest) if rest else x], [bdim]


def _pvary_jvp(primals, tangents, *, axes):
    (x,), (x_dot,) = primals, tangents
    out = pvary_p.bind(x, axes=axes)
    if type(x_dot) is Zero:
        return [out], [Zero(out.aval.strip_weak_type())]
    return [out], [pvary_p.bind(x_dot, axes=axes)]


def _pvary_transpose(cts, x, *, axes):
    ct = cts[0]
    if type(ct) is Zero:
        return [Zero(x.aval.strip_weak_type())]
    if not all_check_vma(axes):
        return [ct]  # along vmap axes: an identity (each example's value is its own)
    return [psum_invariant_bind(ct, axes)]


pvary_p = Primitive("pvary", abstract_eval=lambda x, *, axes: x,
                    lower=lambda ctx, x, *, axes: [x], jvp=_pvary_jvp,
                    transpose=_pvary_transpose, batch=_pvary_batch)
mesh_axes.pvary_p = pvary_p
