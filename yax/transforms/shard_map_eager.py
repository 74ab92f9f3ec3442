"""Eager shard_map: the body runs at once, on every device's block, outside any jit.

Called on concrete arrays with no transformation around it, `shard_map(f)` runs `f` the way its
staged form means it: vmap over the devices. Each mesh axis is one batching trace (outer to
inner in mesh order) named by the axis, so ordinary primitives apply blockwise through their
batching rules and collectives act across the blocks through theirs. A value batched along a
mesh axis *varies* along it (its type shows `{V:i}`); one that is not is the same on every
device along it. `print(x)` of such a value shows each device's block, as jax does:

    On cpu:0 at mesh coordinates (i,) = (0,):
    [0. 1. 2.]

An input enters batched only along the mesh axes its in spec names; an output leaves through
its out spec (an axis the spec names but the value does not vary along is a copy per device;
one the value varies along that the spec omits is the out-spec error of check_vma).
"""

from __future__ import annotations

import math

import numpy as np

from yax.core.avals import aval_of_value
from yax.core.ir import ClosedJaxpr, Jaxpr
from yax.core.trace import Tracer, current_trace, run_in_trace, use_trace
from yax.interpreters import batching
from yax.lax import shape as lax_shape
from yax.primitives import mesh_axes
from yax.runtime.named_sharding import NamedSharding
from yax.runtime.partition_spec import PartitionSpec
from yax.transforms import tracing


class ManualAxisType:
    """Which mesh axes a value inside shard_map varies over (`typeof(x).manual_axis_type`);
    yax models `varying` only (jax's unreduced/reduced types are always empty here)."""

    __slots__ = ("varying", "unreduced", "reduced")

    def __init__(self, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        self.varying = frozenset(varying)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    def __repr__(self):
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")


class VaryingTypeOf(tracing.TypeOf):
    """`typeof` of a value inside an eager shard_map body: the block's type and its varying
    mesh axes (equal to, and hashed as, the plain abstract value)."""

    __slots__ = ("manual_axis_type", "_suffix")

    def __init__(self, aval, sharding, mesh, varying):
        super().__init__(aval, sharding)
        self.manual_axis_type = ManualAxisType(varying=varying)
        self._suffix = mesh_axes.vma_suffix(mesh, varying)

    def __str__(self):
        return super().__str__() + self._suffix

    def str_short(self) -> str:
        return super().str_short() + self._suffix


class ShardMapTracer(batching.BatchTracer):
    """A block value along the mesh axis of its trace: batched at `bdim`, or (bdim None) the
    same on every device along that axis. Its val is a tracer of the next outer mesh axis, or
    concrete for the outermost. Every value of the body is one, so that it prints per device
    and types with its varying axes, as jax's. `varies`: its type says it varies along the
    axis (always so when batched; also after all_gather, whose blocks are equal but typed
    varying, as jax's)."""

    __slots__ = ("varies",)

    def __init__(self, trace, val, bdim, varies: bool | None = None):
        super().__init__(trace, val, bdim)
        self.varies = bdim is not None if varies is None else (varies or bdim is not None)

    @property
    def aval(self):
        aval = aval_of_value(self.val) if self.bdim is None else super().aval
        if not self._trace.group.check_vma:
            return aval
        # typed with its varying axes, so that operations and collectives on it (and on the
        # tracers of transformations inside the body, which take their primals' types) follow
        # jax's typed rules
        return mesh_axes.typed(aval, self._trace.mesh, self.varying())

    def varying(self) -> frozenset:
        names, x = set(), self
        while isinstance(x, ShardMapTracer):
            if x.varies:
                names.add(x._trace.axis_name)
            x = x.val
        return frozenset(names)

    def to_concrete_or_none(self):
        """A value the same on every device has one concrete value (jax allows `if x:`)."""
        x = self
        while isinstance(x, ShardMapTracer) and x.bdim is None:
            x = x.val
        return None if isinstance(x, Tracer) else x

    def typeof(self):
        aval, mesh = mesh_axes.plain(self.aval), self._trace.mesh
        sharding = NamedSharding(mesh, PartitionSpec(*(None,) * aval.ndim))
        varying = self.varying() if self._trace.group.check_vma else frozenset()
        return VaryingTypeOf(aval, sharding, mesh, varying)

    def __str__(self):
        return blocks_str(self, self._trace.group)

    __repr__ = __str__


class ShardMapTrace(batching.BatchTrace):
    """One mesh axis of an eager shard_map body (vmap over the devices along it)."""

    name = "shard_map"

    def __init__(self, parent, group, axis_name):
        super().__init__(parent, group.mesh.shape[axis_name], axis_name)
        self.group = group
        self.mesh = group.mesh
        self.check_vma = group.check_vma  # collectives along this axis follow jax's typed rules

    def new_tracer(self, val, bdim: int) -> ShardMapTracer:
        return ShardMapTracer(self, val, bdim)

    def process_primitive(self, primitive, args, params) -> list:
        outs = super().process_primitive(primitive, args, params)
        mine = frozenset({self.axis_name})
        ins = frozenset().union(*(mine for a in args if isinstance(a, ShardMapTracer)
                                  and a._trace is self and a.varies))
        if _has_subprogram(params):  # no rule for a whole program: what batching found
            varies = None
        else:
            # along this trace's axis only (a collective over another axis says nothing here)
            varies = self.axis_name in mesh_axes.out_varying(primitive.name, params, ins, mine)
        return [ShardMapTracer(self, o.val, o.bdim, varies)
                if isinstance(o, ShardMapTracer) and o._trace is self
                else ShardMapTracer(self, o, None, varies) for o in outs]


def _has_subprogram(params) -> bool:
    def program(v):
        return isinstance(v, (ClosedJaxpr, Jaxpr)) or (
            isinstance(v, tuple) and any(isinstance(e, (ClosedJaxpr, Jaxpr)) for e in v))
    return any(program(v) for v in params.values())


class _Group:
    """The traces of one eager shard_map application, outer to inner."""

    def __init__(self, mesh, check_vma: bool):
        self.mesh = mesh
        self.check_vma = check_vma  # without the check, types carry no varying axes (as jax)
        self.traces: list[ShardMapTrace] = []


def blocks_str(x, group) -> str:
    """Each device's block of `x`, as jax prints a value inside an eager shard_map."""
    mesh = group.mesh
    full = np.asarray(_materialize(x, group))
    names = f"({', '.join(map(str, mesh.axis_names))},)"
    return "\n".join(f"On {device} at mesh coordinates {names} = {idx}:\n{full[idx]}\n"
                     for idx, device in np.ndenumerate(mesh.devices))


def _materialize(x, group):
    """`x` as a concrete array of shape (*mesh.shape, *block)."""
    for trace in reversed(group.traces):
        val, bdim = trace.split(x)
        with use_trace(trace.parent):
            x = batching.move_batch_axis(val, bdim, 0, trace.axis_size)
    return x


# --- global arrays <-> stacked blocks --------------------------------------------------------

def _dim_axes(mesh, spec, ndim: int) -> list[tuple]:
    return NamedSharding(mesh, spec).dim_axes(ndim)


def to_blocks(x, mesh, spec):
    """A global array as its blocks stacked along the mesh axes the spec names (mesh order,
    leading), then the block's dimensions. Returns the stacked array and those axes."""
    dims = _dim_axes(mesh, spec, x.ndim)
    split_shape, where, k = [], {}, 0
    for size, axes in zip(x.shape, dims, strict=True):
        for a in axes:
            where[a] = k
            split_shape.append(mesh.shape[a])
            k += 1
        split_shape.append(size // math.prod(mesh.shape[a] for a in axes))
        k += 1
    named = [a for a in mesh.axis_names if a in where]
    block_dims = [i for i in range(k) if i not in where.values()]
    y = lax_shape.reshape(x, tuple(split_shape))
    perm = tuple(where[a] for a in named) + tuple(block_dims)
    return lax_shape.transpose(y, perm), named


def from_blocks(y, varying: list, mesh, spec, block_shape):
    """The global array an out spec makes of stacked blocks `y` (leading dims: the mesh axes
    in `varying`, mesh order). Axes the spec names but `y` does not vary along are copies;
    axes it varies along but the spec omits keep device 0's block along them."""
    dims = _dim_axes(mesh, spec, len(block_shape))
    named = [a for a in mesh.axis_names if any(a in axes for axes in dims)]
    index = tuple(slice(None) if a in named else 0 for a in varying)
    if any(i == 0 for i in index):
        y = y[index]
    have = [a for a in varying if a in named]
    full = tuple(mesh.shape[a] for a in named) + tuple(block_shape)
    pos = {a: i for i, a in enumerate(named)}
    keep = tuple(pos[a] for a in have) + tuple(range(len(named), len(full)))
    y = lax_shape.broadcast_in_dim(y, full, keep)
    perm, out_shape = [], []
    for d, (size, axes) in enumerate(zip(block_shape, dims, strict=True)):
        perm.extend(pos[a] for a in axes)
        perm.append(len(named) + d)
        out_shape.append(size * math.prod(mesh.shape[a] for a in axes))
    y = lax_shape.transpose(y, tuple(perm))
    return lax_shape.reshape(y, tuple(out_shape))


# --- running the body ------------------------------------------------------------------------

def run(flat_fun, mesh, leaves, in_specs, check_vma: bool = True):
    """Run `flat_fun` (flat in, flat out) on every device's blocks of `leaves`. Returns, per
    output, the stacked blocks, the mesh axes it varies over (mesh order, the leading dims) and
    the block's shape."""
    group = _Group(mesh, check_vma)
    stacked = [to_blocks(x, mesh, spec) for x, spec in zip(leaves, in_specs, strict=True)]
    # the mesh's typing rules for the body (its axes are found as the batching traces below)
    with mesh_axes.bind_mesh_axes(mesh, check_vma=check_vma):
        return _nest(flat_fun, group, list(mesh.axis_names), [s for s, _ in stacked],
                     [set(n) for _, n in stacked])


def _nest(fun, group, names, vals, mapped):
    if not names:
        outs = fun(*vals)
        return [(o, [], tuple(o.shape)) for o in outs]
    name = names[0]
    trace = ShardMapTrace(current_trace(), group, name)
    group.traces.append(trace)
    ins = [trace.new_tracer(v, 0 if name in m else None) for v, m in zip(vals, mapped)]

    def finish(outs):
        done = []
        for o, inner, block in outs:
            varies = isinstance(o, ShardMapTracer) and o._trace is trace and o.varies
            val, bdim = trace.split(o)
            if bdim is batching.not_mapped and not varies:
                done.append((val, inner, block))
                continue
            with use_trace(trace.parent):
                val = batching.move_batch_axis(val, bdim, 0, trace.axis_size)
            done.append((val, [name, *inner], block))
        return done
    try:
        return run_in_trace(trace, lambda *xs: _nest(fun, group, names[1:], list(xs), mapped),
                            ins, finish)
    finally:
        group.traces.pop()
