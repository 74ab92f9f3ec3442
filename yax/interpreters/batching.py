"""Batching (vmap): each value is paired with the axis along which it is batched, or None.

A primitive's `batch(args, dims, **params)` rule receives the operands with their batch axes
(None: not batched, the same for every example) and returns the outputs with theirs. It runs with
the parent trace current. Values foreign to this trace are unbatched. `axis_size` and `axis_name`
of the innermost batch trace are available to rules through `current_axis()` (for collectives).
"""

from __future__ import annotations

import contextvars

from yax.core.avals import aval_of_value
from yax.core.ir import ClosedJaxpr
from yax.core.trace import Trace, Tracer, current_trace, run_in_trace, use_trace
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import trace_to_jaxpr
from yax.runtime.named_sharding import typed

not_mapped = None


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim: int):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        aval = aval_of_value(self.val)
        shape = aval.shape[:self.bdim] + aval.shape[self.bdim + 1:]
        sharding = getattr(aval, "sharding", None)
        if sharding is None:
            return aval.update(shape=shape)
        # the other dimensions keep their Explicit-axis sharding (the type the body sees)
        spec = tuple(sharding.spec) + (None,) * (aval.ndim - len(sharding.spec))
        return typed(aval.update(shape=shape), spec[:self.bdim] + spec[self.bdim + 1:],
                     sharding.mesh)

    def __repr__(self):
        batched = aval_of_value(self.val).str_long()
        return f"VmapTracer(aval={self.aval.str_long()}, batched={batched})"


class BatchTrace(Trace):
    name = "vmap (batching)"
    passes_custom_calls = True

    def __init__(self, parent, axis_size: int, axis_name=None):
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name

    def binds_axis(self, axis_name) -> bool:
        return self.axis_name == axis_name

    def new_tracer(self, val, bdim: int) -> BatchTracer:
        """A value of this trace batched at `bdim` (a subclass's trace makes its own tracers)."""
        return BatchTracer(self, val, bdim)

    def split(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.bdim
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return x, not_mapped

    def _names_this_axis(self, params) -> bool:
        """Collectives over this trace's axis act even on unbatched operands (psum(1, 'i'))."""
        name = params.get("axis_name", params.get("axes"))  # psum_invariant/pvary: `axes`
        if name is None or self.axis_name is None:
            return False
        return name == self.axis_name or (isinstance(name, tuple) and self.axis_name in name)

    def process_primitive(self, primitive, args, params) -> list:
        vals, dims = zip(*(self.split(a) for a in args)) if args else ((), ())
        with use_trace(self.parent):
            if all(d is not_mapped for d in dims) and not self._names_this_axis(params):
                outs = primitive.bind(*vals, **params)
                return list(outs) if primitive.multiple_results else [outs]
            token = _axis.set(self)
            try:
                outs, out_dims = primitive.batch(list(vals), list(dims), **params)
            finally:
                _axis.reset(token)
        return [self.new_tracer(o, d) if d is not not_mapped else o
                for o, d in zip(outs, out_dims, strict=True)]


# the batch trace whose rule is running, per thread and asyncio task (like the current trace)
_axis: contextvars.ContextVar[BatchTrace | None] = contextvars.ContextVar("yax_batch_axis",
                                                                          default=None)


def current_axis() -> BatchTrace:
    """The batch trace whose rule is running (its axis_size and axis_name)."""
    axis = _axis.get()
    if axis is None:
        raise IndexError("no vmap batching rule is running")
    return axis


def axis_size_of(vals, dims) -> int:
    for v, d in zip(vals, dims):
        if d is not not_mapped:
            return v.shape[d]
    return current_axis().axis_size


# The two shape operations batching itself needs (to move or materialise a batch axis). They are
# primitives, which sit above the interpreters, so the module defining them supplies them here
# when it is imported (yax/primitives/shape.py).
_axis_ops: dict = {}


def register_axis_ops(*, broadcast_in_dim, transpose) -> None:
    """Supply `broadcast_in_dim(x, shape, dims)` and `transpose(x, permutation)`."""
    _axis_ops["broadcast_in_dim"] = broadcast_in_dim
    _axis_ops["transpose"] = transpose


def move_batch_axis(x, src, dst: int, size: int):
    """Put `x`'s batch axis at `dst` (materialising it by broadcasting if `src` is None)."""
    shape = tuple(getattr(x, "shape", ()))
    if src is not_mapped:
        out_shape = shape[:dst] + (size,) + shape[dst:]
        dims = tuple(i for i in range(len(out_shape)) if i != dst)
        return _axis_ops["broadcast_in_dim"](x, out_shape, dims)
    if src == dst:
        return x
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    return _axis_ops["transpose"](x, tuple(perm))


def vmap_flat(fun, vals, dims, axis_size: int, axis_name=None) -> tuple[list, list]:
    """Run `fun` (flat in, flat out) on batched inputs; returns outputs and their batch axes."""
    trace = BatchTrace(current_trace(), axis_size, axis_name)
    ins = [BatchTracer(trace, v, d) if d is not not_mapped else v
           for v, d in zip(vals, dims, strict=True)]
    pairs = run_in_trace(trace, fun, ins, lambda outs: [trace.split(o) for o in outs])
    return [v for v, _ in pairs], [d for _, d in pairs]


def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, dims: list,
                out_dims_wanted: list | None = None, axis_name=None):
    """A jaxpr computing the batched program: inputs batched at `dims`; outputs batched at
    `out_dims_wanted` (default: 0 where batched, unbatched otherwise). Returns it and out dims."""
    in_avals = closed.in_avals
    box = []

    def fun(*args):
        outs, out_dims = vmap_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, xs),
                                   list(args), dims, axis_size, axis_name)
        wanted = out_dims_wanted or [0 if d is not not_mapped else None for d in out_dims]
        moved = [o if w is None and d is None else move_batch_axis(o, d, w, axis_size)
                 for o, d, w in zip(outs, out_dims, wanted, strict=True)]
        box.append(wanted)
        return moved

    batched_avals = [a if d is not_mapped else
                     a.update(shape=a.shape[:d] + (axis_size,) + a.shape[d:])
                     for a, d in zip(in_avals, dims, strict=True)]
    result = trace_to_jaxpr(fun, batched_avals, name="vmap")
    return result, box[0]
