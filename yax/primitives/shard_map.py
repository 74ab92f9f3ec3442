"""`shard_map_p`: a per-device program over a mesh, as one primitive with all its rules.

Params: `jaxpr` (const-free, on the per-device avals), `mesh`, `in_specs`/`out_specs` (one
PartitionSpec per operand/result), `check_vma`, `name`. Operands and results are global arrays;
the body sees each device's block. It lowers to `sdy.manual_computation` over all mesh axes.

The body has vmap semantics over the devices (each device is one example, collectives act across
them), which gives the transformation rules:
  - jvp: shard_map of the body's jvp; tangents use their primals' specs;
  - partial evaluation: outputs computable from known inputs run as a shard_map of their own;
    the rest is staged as a shard_map over all inputs (the known part is recomputed inside it);
  - transpose: the body is first split by partial evaluation (its part on the non-linear
    inputs runs forwards inside the transposed body), then its linear part transposed with the
    collectives' rules. With check_vma the body is typed (each value knows the mesh axes it
    varies along, and casts where operands differ are `pvary` equations), so nothing more is
    needed: an invariant output's cotangent is one value, an invariant input's comes back
    summed. Without (jax's older rules), an output replicated over mesh axes R has 1/|R| of
    its cotangent on each device's copy, and the cotangent of an input replicated over axes Q
    is the psum over Q of the per-device cotangents;
  - batching: the batch dimension is added, unsplit, to the specs.
"""

from __future__ import annotations

import math

from jaxlib.mlir import ir

from yax import errors
from yax.compile.when_eager import CompiledVariants
from yax.core.primitive import Primitive
from yax.core.trace import bind, use_trace
from yax.interpreters import ad_util, batching, eager, lowering, mlir
from yax.interpreters import jvp as jvp_interp
from yax.interpreters import sharding_lowering as sl
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.partial_eval import partial_eval_jaxpr
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.transpose import is_undefined, transpose_jaxpr
from yax.primitives import collectives as coll
from yax.primitives import mesh_axes
from yax.primitives._lax import lax
from yax.runtime import sharding_bridge, transfer
from yax.runtime.array import Array
from yax.runtime.named_sharding import NamedSharding, type_sharding
from yax.runtime.partition_spec import PartitionSpec

# --- shapes ----------------------------------------------------------------------------------

def dim_axes(mesh, spec, ndim: int) -> list[tuple]:
    return NamedSharding(mesh, spec).dim_axes(ndim)


def local_shape(mesh, spec, shape) -> tuple:
    return tuple(s // math.prod(mesh.shape[a] for a in axes)
                 for s, axes in zip(shape, dim_axes(mesh, spec, len(shape))))


def global_shape(mesh, spec, shape) -> tuple:
    return tuple(s * math.prod(mesh.shape[a] for a in axes)
                 for s, axes in zip(shape, dim_axes(mesh, spec, len(shape))))


def replicated_axes(mesh, spec) -> tuple:
    """Mesh axes a value with this spec is the same along (the spec does not name them)."""
    used = set(spec.axis_names())
    return tuple(a for a in mesh.axis_names if a not in used)


def _abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, check_vma, name):
    for i, (a, spec, want) in enumerate(zip(avals, in_specs, jaxpr.in_avals, strict=True)):
        got = local_shape(mesh, spec, a.shape)
        if got != tuple(want.shape) or a.dtype != want.dtype:
            raise errors.InputMismatchError(
                f"shard_map {name}: operand {i} {a.str_short()} split as {spec} gives blocks "
                f"{got}, but the traced body expects {want.str_short()}")
    return global_out_avals(jaxpr, mesh, out_specs)


def global_out_avals(jaxpr, mesh, out_specs) -> list:
    """The whole outputs' types: the blocks laid out by the out specs, typed with the specs'
    Explicit mesh axes (`f32[6@i]`), as jax's."""
    outs = []
    for a, spec in zip(jaxpr.out_avals, out_specs, strict=True):
        a = mesh_axes.plain(a)  # outside the body no value varies along a manual axis
        shape = global_shape(mesh, spec, a.shape)
        outs.append(a.update(shape=shape, sharding=type_sharding(NamedSharding(mesh, spec),
                                                                 len(shape))))
    return outs


# --- lowering --------------------------------------------------------------------------------

def _lower(ctx, *args, jaxpr, mesh, in_specs, out_specs, check_vma, name):
    mctx = ctx.module_ctx
    stack = mctx.__dict__.setdefault("manual_meshes", [])
    if mesh.size == 1:  # blocks are whole arrays: the body inline (no partitioner runs)
        stack.append(mesh)
        try:
            return lowering.lower_jaxpr_body(mctx, jaxpr.jaxpr, [], list(args))
        finally:
            stack.pop()
    ins = [sl.tensor_sharding(mctx, mesh, dim_axes(mesh, s, a.ndim))
           for s, a in zip(in_specs, ctx.avals_in, strict=True)]
    outs = [sl.tensor_sharding(mctx, mesh, dim_axes(mesh, s, a.ndim))
            for s, a in zip(out_specs, ctx.avals_out, strict=True)]
    op = sl.sdy.ManualComputationOp([mlir.aval_type(a) for a in ctx.avals_out], list(args),
                                    sl.per_value(ins), sl.per_value(outs),
                                    sl.manual_axes(mesh.axis_names))
    block = ir.Block.create_at_start(op.body, [mlir.aval_type(a) for a in jaxpr.in_avals])
    stack.append(mesh)
    try:
        with ir.InsertionPoint(block):
            results = lowering.lower_jaxpr_body(mctx, jaxpr.jaxpr, [], list(block.arguments))
            sl.sdy.ReturnOp(results)
    finally:
        stack.pop()
    return list(op.results)


# --- eager: one compiled program per application -----------------------------------------------

_compiled = CompiledVariants("shard_map")


def _impl(*arrays, **params):
    key = tuple(sorted(params.items(), key=lambda kv: kv[0]))
    outs = _compiled.get_or_make(key, lambda: _binder(params))(*arrays)
    eager.check_outputs(shard_map_p, outs)  # debug_nans/debug_infs
    return [_as_out_spec(o, params["mesh"], spec) for o, spec in
            zip(outs, params["out_specs"], strict=True)]


def _as_out_spec(out, mesh, spec):
    """An eager result carries the sharding its out_spec names, spec length included, as in
    JAX (XLA reports P('x', None) as P('x'); the blocks are the same)."""
    want = NamedSharding(mesh, spec)
    have = sharding_bridge.sharding_of_array(out)
    if have == want or not want.is_equivalent_to(have, out.ndim):
        return out
    return Array(transfer.relabel(out._buf, want, out.shape, out.dtype), out.aval)


def _binder(params: dict):
    def shard_map(*args):
        return shard_map_p.bind(*args, **params)
    return shard_map


# --- helpers for the rules ---------------------------------------------------------------------

def trace_body(fun, local_avals, mesh, name: str, in_vma=None, check_vma: bool = False):
    """Trace `fun` (flat in, flat out) on per-device avals with the mesh axes bound; returns a
    const-free jaxpr and the captured values to pass as leading (replicated) operands.

    With `check_vma`, the body is traced under jax's typed rules: input k varies along the
    mesh axes `in_vma[k]` (default: the types `local_avals` carry), every value is typed with
    the axes it varies along (`f32[3]{V:i}`), an operation on operands varying along different
    axes casts them to the union first (an implicit `pvary`), and psum is `psum_invariant`."""
    if check_vma:
        vmas = in_vma if in_vma is not None else [a.vma for a in local_avals]
        avals = [mesh_axes.typed(a, mesh, v) for a, v in zip(local_avals, vmas, strict=True)]
    else:
        avals = [mesh_axes.plain(a) for a in local_avals]
    with mesh_axes.bind_mesh_axes(mesh, check_vma=check_vma):
        closed = trace_to_jaxpr(fun, avals, name=name)
    return closure_convert(closed)


def bind_shard_map(args, *, jaxpr, consts, mesh, in_specs, out_specs, check_vma, name):
    in_specs = (PartitionSpec(),) * len(consts) + tuple(in_specs)
    return bind(shard_map_p, *consts, *args, jaxpr=jaxpr, mesh=mesh, in_specs=in_specs,
                out_specs=tuple(out_specs), check_vma=check_vma, name=name)


def _run_body(closed):
    return lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, xs)


# --- jvp -------------------------------------------------------------------------------------

def _jvp(primals, tangents, *, jaxpr, mesh, in_specs, out_specs, check_vma, name):
    nonzero = [type(t) is not ad_util.Zero for t in tangents]
    with mesh_axes.bind_mesh_axes(mesh, check_vma=check_vma):
        jvp_closed, out_nonzero = jvp_interp.jvp_jaxpr(jaxpr, nonzero, instantiate=False)
    body, consts = closure_convert(jvp_closed)
    t_specs = [s for s, nz in zip(in_specs, nonzero) if nz]
    t_out_specs = [s for s, nz in zip(out_specs, out_nonzero) if nz]
    outs = bind_shard_map([*primals, *[t for t in tangents if type(t) is not ad_util.Zero]],
                          jaxpr=body, consts=consts, mesh=mesh,
                          in_specs=list(in_specs) + t_specs,
                          out_specs=list(out_specs) + t_out_specs, check_vma=check_vma,
                          name=f"jvp_{name}")
    n = len(out_specs)
    it = iter(outs[n:])
    t_out = [next(it) if nz else ad_util.Zero(ad_util.tangent_aval(a))
             for nz, a in zip(out_nonzero, global_out_avals(jaxpr, mesh, out_specs))]
    return outs[:n], t_out


# --- partial evaluation ------------------------------------------------------------------------

def _partial_eval(trace, args, params):
    jaxpr, mesh, in_specs, out_specs = (params["jaxpr"], params["mesh"], params["in_specs"],
                                        params["out_specs"])
    unknowns = [trace.is_unknown(a) for a in args]
    check_vma = params["check_vma"]
    with mesh_axes.bind_mesh_axes(mesh, check_vma=check_vma):
        known, _unknown, out_unknowns, num_res = partial_eval_jaxpr(jaxpr, unknowns)
    n_known_out = len(known.out_avals) - num_res
    known_in = [a for a, u in zip(args, unknowns) if not u]
    known_specs = [s for s, u in zip(in_specs, unknowns) if not u]
    known_out_specs = [s for s, u in zip(out_specs, out_unknowns) if not u]
    run_known = _run_body(known)
    k_body, k_consts = trace_body(lambda *xs: run_known(*xs)[:n_known_out], known.in_avals,
                                  mesh, "known", check_vma=check_vma)
    common = dict(mesh=mesh, check_vma=params["check_vma"])
    with use_trace(trace.parent):
        known_outs = bind_shard_map(known_in, jaxpr=k_body, consts=k_consts, in_specs=known_specs,
                                    out_specs=known_out_specs, name=f"{params['name']}_known",
                                    **common)
    run_all = _run_body(jaxpr)
    u_body, u_consts = trace_body(
        lambda *xs: [o for o, u in zip(run_all(*xs), out_unknowns) if u], jaxpr.in_avals, mesh,
        "unknown", check_vma=check_vma)
    u_out_specs = [s for s, u in zip(out_specs, out_unknowns) if u]
    staged = trace.stage(shard_map_p, [*u_consts, *args],
                         {"jaxpr": u_body, "mesh": mesh,
                          "in_specs": (PartitionSpec(),) * len(u_consts) + tuple(in_specs),
                          "out_specs": tuple(u_out_specs), "check_vma": params["check_vma"],
                          "name": f"{params['name']}_unknown"})
    k_it, u_it = iter(known_outs), iter(staged)
    return [next(u_it) if u else next(k_it) for u in out_unknowns]


# --- transpose -------------------------------------------------------------------------------

def _linear_part(jaxpr, linear, mesh, check_vma):
    """The body split into a known program (non-linear inputs -> residuals) and the transpose
    of the rest. The partial-evaluation rule above stages a body that recomputes the known part,
    so it may hold, say, a scan carrying primal and tangent values together; transposing that
    whole would treat the primal carry as linear. Returns (run_known, run_transposed,
    n_known_out, out_unknowns)."""
    n_lin = sum(linear)
    with mesh_axes.bind_mesh_axes(mesh, check_vma=check_vma):
        known, unknown, out_unknowns, num_res = partial_eval_jaxpr(jaxpr, linear)
        transposed = transpose_jaxpr(unknown, [False] * num_res + [True] * n_lin)
    return (_run_body(known), _run_body(transposed), len(known.out_avals) - num_res,
            out_unknowns)


def _transpose(cts, *args, jaxpr, mesh, in_specs, out_specs, check_vma, name):
    """Under check_vma the body's types say it all: an invariant output's cotangent is one value
    and an invariant input's comes back summed (its pvary casts transpose to psums). Without,
    the older rules: each device's copy of an output replicated over R takes 1/|R| of its
    cotangent, and an input replicated over Q sums its cotangents over Q."""
    linear = [is_undefined(a) for a in args]
    run_known, run_t, n_known_out, out_unknowns = _linear_part(jaxpr, linear, mesh, check_vma)
    out_scale = [1 if check_vma else math.prod(mesh.shape[a] for a in replicated_axes(mesh, s))
                 for s in out_specs]
    lin_sum_axes = [replicated_axes(mesh, s) for s, lin in zip(in_specs, linear) if lin]
    n_nonlin = sum(not lin for lin in linear)

    def body(*xs):
        nonlin, ct = list(xs[:n_nonlin]), list(xs[n_nonlin:])
        ct = [c if k == 1 else lax.div(c, lax.convert_element_type(k, c.aval.dtype))
              for c, k, u in zip(ct, out_scale, out_unknowns, strict=True) if u]
        residuals = run_known(*nonlin)[n_known_out:]
        grads = run_t(*residuals, *ct)
        out = []
        for g, axes in zip(grads, lin_sum_axes, strict=True):
            if check_vma:  # summed already; a cotangent still varying would be a typing gap
                axes = [a for a in axes if a in mesh_axes.vma_of(g)]
            for a in axes:
                g = coll.psum_bind(g, a)
            out.append(g)
        return out

    nonlin_avals = [a for a, lin in zip(jaxpr.in_avals, linear) if not lin]
    t_body, t_consts = trace_body(body, nonlin_avals + list(jaxpr.out_avals), mesh, "transpose",
                                  check_vma=check_vma)
    cts = [ad_util.zeros_like_aval(a) if type(c) is ad_util.Zero else c
           for c, a in zip(cts, global_out_avals(jaxpr, mesh, out_specs), strict=True)]
    outs = bind_shard_map([a for a in args if not is_undefined(a)] + list(cts), jaxpr=t_body,
                          consts=t_consts, mesh=mesh,
                          in_specs=[s for s, lin in zip(in_specs, linear) if not lin]
                          + list(out_specs),
                          out_specs=[s for s, lin in zip(in_specs, linear) if lin],
                          check_vma=check_vma, name=f"transpose_{name}")
    it = iter(outs)
    return [next(it) if lin else None for lin in linear]


# --- batching --------------------------------------------------------------------------------

def _with_batch_dim(spec, dim: int):
    parts = list(spec) + [None] * max(0, dim - len(spec))
    return PartitionSpec(*(parts[:dim] + [None] + parts[dim:]))


def _batch(args, dims, *, jaxpr, mesh, in_specs, out_specs, check_vma, name):
    size = batching.axis_size_of(args, dims)
    axis_name = batching.current_axis().axis_name
    args = [a if d is batching.not_mapped else batching.move_batch_axis(a, d, 0, size)
            for a, d in zip(args, dims)]
    in_dims = [batching.not_mapped if d is batching.not_mapped else 0 for d in dims]
    with mesh_axes.bind_mesh_axes(mesh, check_vma=check_vma):
        batched, out_dims = batching.batch_jaxpr(jaxpr, size, in_dims, axis_name=axis_name)
    body, consts = closure_convert(batched)
    new_in = [s if d is batching.not_mapped else _with_batch_dim(s, 0)
              for s, d in zip(in_specs, in_dims)]
    new_out = [s if d is None else _with_batch_dim(s, d) for s, d in zip(out_specs, out_dims)]
    outs = bind_shard_map(args, jaxpr=body, consts=consts, mesh=mesh, in_specs=new_in,
                          out_specs=new_out, check_vma=check_vma, name=f"vmap_{name}")
    return outs, list(out_dims)


shard_map_p = Primitive("shard_map", multiple_results=True, abstract_eval=_abstract_eval,
                        lower=_lower, impl=_impl, jvp=_jvp, partial_eval=_partial_eval,
                        transpose=_transpose, batch=_batch)
