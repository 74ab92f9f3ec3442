"""`cond`: run one of several programs, chosen by an int32 index at run time.

Operands are `(index, *operands)`; the param `branches` is a tuple of const-free closed jaxprs
with identical input and output types. An index outside [0, n-1] is clamped, as in JAX (so a
negative index runs branch 0 and a large one the last). The transformation rules transform every
branch the same way so the branches keep one signature, and keep a single `cond` whenever the
index is known and unbatched.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from yax import errors
from yax.core import dtypes
from yax.core.ir import ClosedJaxpr, Jaxpr, Var
from yax.core.primitive import Primitive
from yax.core.trace import bind, use_trace
from yax.interpreters import ad_util, batching, checkify, lowering, mlir
from yax.interpreters import jvp as jvp_interp
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.mlir import hlo
from yax.interpreters.partial_eval import partial_eval_jaxpr
from yax.interpreters.rule_cache import cached
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.transpose import is_undefined, transpose_jaxpr_nonzero
from yax.primitives._lax import lax


def _types(avals) -> list:
    return [(a.shape, a.dtype) for a in avals]


def _sig(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _cond_abstract_eval(index, *avals, branches):
    if index.shape != () or index.dtype != dtypes.int32:
        raise errors.DTypeError(f"cond needs an int32 scalar index, got {index.str_short()}")
    if not branches:
        raise errors.ShapeError("cond needs at least one branch")
    for i, br in enumerate(branches):
        if _types(br.in_avals) != _types(avals):
            raise errors.InputMismatchError(
                f"cond branch {i}: operands {_sig(avals)} do not match its parameters "
                f"{_sig(br.in_avals)}")
        if _types(br.out_avals) != _types(branches[0].out_avals):
            raise errors.InputMismatchError(
                f"cond branch {i} returns {_sig(br.out_avals)} but branch 0 returns "
                f"{_sig(branches[0].out_avals)}")
    # the outputs are typed as branch 0's, weak types included (as JAX: its cond_p returns
    # branches[0].out_avals; the other branches' weak types may differ, nothing converts)
    return list(branches[0].out_avals)


def _cond_lower(ctx, index, *args, branches):
    mctx, n = ctx.module_ctx, len(branches)
    if n == 1:
        return lowering.lower_jaxpr_body(mctx, branches[0].jaxpr, [], list(args))
    # stablehlo.case runs the last branch for any out-of-range index; JAX clamps (negative -> 0)
    lo, hi = mlir.constant(np.int32(0)), mlir.constant(np.int32(n - 1))
    index = hlo.clamp(lo, index, hi)
    case = hlo.CaseOp([mlir.aval_type(a) for a in ctx.avals_out], index, n)
    for region, br in zip(case.regions, branches, strict=True):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            hlo.return_(lowering.lower_jaxpr_body(mctx, br.jaxpr, [], list(args)))
    return list(case.results)


def join_branch_consts(closed_list) -> tuple[tuple, list]:
    """Make the branches const-free with one shared signature: (all consts..., operands...).

    Each branch reads its own consts and ignores the other branches' ones (a value captured by
    several branches is passed once). Returns the branches and the const values to pass.
    """
    converted = [closure_convert(c) for c in closed_list]
    if not any(cs for _, cs in converted):
        return tuple(c for c, _ in converted), []
    consts, const_avals, slots = [], [], []
    for c, cs in converted:
        pos, used = [], set()
        for x, v in zip(cs, c.jaxpr.invars):
            k = next((k for k, y in enumerate(consts) if y is x and k not in used), None)
            if k is None:
                k = len(consts)
                consts.append(x)
                const_avals.append(v.aval)
            used.add(k)
            pos.append(k)
        slots.append(pos)
    branches = []
    for (c, cs), pos in zip(converted, slots):
        lead = [Var(a) for a in const_avals]
        for k, v in zip(pos, c.jaxpr.invars):
            lead[k] = v
        j = c.jaxpr
        branches.append(ClosedJaxpr(Jaxpr([], lead + j.invars[len(cs):], j.eqns, j.outvars), []))
    return tuple(branches), consts


# --- jvp: every branch differentiated with the same nonzero tangents --------------------------

def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nonzero = [type(t) is not ad_util.Zero for t in tangents[1:]]
    jvps, consts, out_nz = cached(("jvp", branches, tuple(nonzero)),
                                   lambda: _jvp_branches(branches, nonzero), lambda v: v[1])
    outs = bind(cond_p, index, *consts, *ops,
                *[t for t in tangents[1:] if type(t) is not ad_util.Zero], branches=jvps)
    n = len(branches[0].out_avals)
    t_iter = iter(outs[n:])
    t_out = [next(t_iter) if nz else ad_util.Zero(ad_util.tangent_aval(a))
             for nz, a in zip(out_nz, branches[0].out_avals, strict=True)]
    return outs[:n], t_out


def _jvp_branches(branches, nonzero):
    # each branch is differentiated once (a custom rule inside runs once per branch, as in jax);
    # a branch whose tangent is zero where another's is not gets zeros there afterwards
    firsts = [jvp_interp.jvp_jaxpr(b, nonzero, instantiate=False) for b in branches]
    out_nz = [any(col) for col in zip(*(nz for _, nz in firsts))]
    jvps, consts = join_branch_consts(
        [jvp if nz == out_nz else _with_zero_tangents(jvp, b.out_avals, nz, out_nz)
         for (jvp, nz), b in zip(firsts, branches, strict=True)])
    return jvps, consts, out_nz


def _with_zero_tangents(jvp, primal_avals, have, want):
    """`jvp` (primals..., tangents where `have`...) re-emitting its tangents where `want`, with
    zeros in the slots it lacked: a wrapper of the jaxpr, so nothing is differentiated again."""
    n = len(primal_avals)

    def fun(*xs):
        outs = eval_jaxpr(jvp.jaxpr, jvp.consts, xs)
        tangents = iter(outs[n:])
        return outs[:n] + [next(tangents) if h else ad_util.zeros_like_aval(
            ad_util.tangent_aval(a)) for a, h, w in zip(primal_avals, have, want, strict=True)
            if w]
    return trace_to_jaxpr(fun, jvp.in_avals, name="jvp")


# --- partial evaluation: a known index splits every branch the same way ------------------------

def _split_branches(branches, unknowns):
    """partial_eval_jaxpr of every branch with one out-unknown pattern (the union)."""
    splits = [partial_eval_jaxpr(b, unknowns) for b in branches]
    out_unknowns = [any(col) for col in zip(*(s[2] for s in splits))]
    return [s if s[2] == out_unknowns else partial_eval_jaxpr(b, unknowns, out_unknowns)
            for s, b in zip(splits, branches)], out_unknowns


def _known_with_all_residuals(known, num_res, res_avals, offset):
    """Branch `known` outputs its residuals at `offset` in the union of all branches' residuals
    and zeros in the other slots, so every known branch has the same outputs."""
    def fun(*xs):
        outs = eval_jaxpr(known.jaxpr, known.consts, xs)
        n_out = len(outs) - num_res
        res = [ad_util.zeros_like_aval(a.strip_weak_type()) for a in res_avals]
        res[offset:offset + num_res] = outs[n_out:]
        return outs[:n_out] + res
    return trace_to_jaxpr(fun, known.in_avals, name="cond_known")


def _unknown_with_all_residuals(unknown, num_res, res_avals, offset):
    """Branch `unknown` takes all branches' residuals and reads only its own."""
    j = unknown.jaxpr
    lead = [Var(a) for a in res_avals]
    lead[offset:offset + num_res] = j.invars[:num_res]
    return ClosedJaxpr(Jaxpr([], lead + j.invars[num_res:], j.eqns, j.outvars), unknown.consts)


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    index, ops = args[0], args[1:]
    if trace.is_unknown(index):
        return trace.stage(cond_p, args, params)
    unknowns = [trace.is_unknown(a) for a in ops]
    knowns, k_consts, staged, u_consts, out_unknowns, res_avals = cached(
        ("pe", branches, tuple(unknowns)), lambda: _pe_branches(branches, unknowns),
        lambda v: v[1] + v[3])
    with use_trace(trace.parent):
        known_outs = bind(cond_p, index, *k_consts, *[a for a, u in zip(ops, unknowns) if not u],
                          branches=knowns)
    n_known = len(known_outs) - len(res_avals)
    residuals = known_outs[n_known:]
    unknown_outs = []
    if any(out_unknowns):
        unknown_outs = trace.stage(
            cond_p, [index, *u_consts, *residuals, *[a for a, u in zip(ops, unknowns) if u]],
            {"branches": staged})
    known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


def _pe_branches(branches, unknowns):
    """Known and unknown branches with uniform signatures (all residuals in every branch)."""
    splits, out_unknowns = _split_branches(branches, unknowns)
    res_avals, offsets = [], []
    for known, _, _, num_res in splits:
        offsets.append(len(res_avals))
        res_avals += known.out_avals[len(known.out_avals) - num_res:]
    knowns, k_consts = join_branch_consts(
        [_known_with_all_residuals(k, r, res_avals, o) for (k, _, _, r), o in zip(splits, offsets)])
    staged, u_consts = join_branch_consts(
        [_unknown_with_all_residuals(u, r, res_avals, o)
         for (_, u, _, r), o in zip(splits, offsets)])
    return knowns, k_consts, staged, u_consts, out_unknowns, res_avals


# --- transpose: the index and the residual operands are not linear ------------------------------

def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise errors.NotImplementedRuleError("cond cannot be transposed in its index")
    linear = [is_undefined(a) for a in ops]
    transposed, consts, out_nz = cached(("transpose", branches, tuple(linear)),
                                        lambda: _transpose_branches(branches, linear),
                                        lambda v: v[1])
    outs = bind(cond_p, index, *consts, *[a for a in ops if not is_undefined(a)], *cts,
                branches=transposed)
    it, nz = iter(outs), iter(out_nz)
    return [None] + [(next(it) if next(nz) else None) if lin else None for lin in linear]


def _transpose_branches(branches, linear):
    """Every branch transposed, emitting the cotangents that some branch makes nonzero (a
    cotangent zero in every branch stays symbolic). As jax does, each branch is transposed
    twice, first to learn which cotangents it makes nonzero, so a custom_vjp bwd inside runs
    twice per branch, as under jax."""
    n_lin = sum(linear)
    firsts = [transpose_jaxpr_nonzero(b, linear, [False] * n_lin)[1] for b in branches]
    out_nz = [any(col) for col in zip(*firsts)] if firsts and n_lin else [False] * n_lin
    transposed, consts = join_branch_consts(
        [transpose_jaxpr_nonzero(b, linear, out_nz)[0] for b in branches])
    return transposed, consts, out_nz


# --- batching: one cond for an unbatched index, a select of all branches for a batched one ------

def _cond_batch(args, dims, *, branches):
    size = batching.axis_size_of(args, dims)
    axis_name = batching.current_axis().axis_name
    index, ops, op_dims = args[0], args[1:], list(dims[1:])
    key = (branches, size, tuple(op_dims), axis_name)
    if dims[0] is batching.not_mapped:
        batched, consts, wanted = cached(
            ("batch", *key), lambda: _batch_branches(branches, size, op_dims, axis_name),
            lambda v: v[1])
        return bind(cond_p, index, *consts, *ops, branches=batched), wanted
    # a batched index: every example may take another branch, so run them all and select
    n_out = len(branches[0].out_avals)
    all_batched = cached(
        ("batch_all", *key),
        lambda: [batching.batch_jaxpr(b, size, op_dims, [0] * n_out, axis_name=axis_name)[0]
                 for b in branches],
        lambda v: [c for bj in v for c in bj.consts])
    results = [eval_jaxpr(bj.jaxpr, bj.consts, ops) for bj in all_batched]
    index = lax.clamp(0, batching.move_batch_axis(index, dims[0], 0, size), len(branches) - 1)
    outs = []
    for cases in zip(*results):
        which = lax.broadcast_in_dim(index, tuple(cases[0].shape), (0,))
        outs.append(lax.select_n(which, *cases))
    return outs, [0] * n_out


def _batch_branches(branches, size, op_dims, axis_name):
    firsts = [batching.batch_jaxpr(b, size, op_dims, axis_name=axis_name)[1] for b in branches]
    wanted = [0 if any(d is not None for d in col) else None for col in zip(*firsts)]
    batched, consts = join_branch_consts(
        [batching.batch_jaxpr(b, size, op_dims, wanted, axis_name=axis_name)[0]
         for b in branches])
    return batched, consts, wanted


# checkify: every branch takes the error state after the predicate and returns it first
def _cond_checkify(error, index, *args, branches):
    rewritten = []
    for branch in branches:
        j, consts = checkify.checked_closed(branch, error.table, 0)
        rewritten.append(j if not consts else _reclosed(j, consts))
    joined, consts = join_branch_consts(rewritten)
    outs = bind(cond_p, index, *consts, *error.state, *args, branches=joined)
    return error.with_state(outs[:3]), list(outs[3:])


def _reclosed(const_free: ClosedJaxpr, consts) -> ClosedJaxpr:
    """A const-free jaxpr whose first invars stand for `consts`, closed over them again."""
    j = const_free.jaxpr
    n = len(consts)
    return ClosedJaxpr(Jaxpr(j.invars[:n], j.invars[n:], j.eqns, j.outvars), consts)


cond_p = Primitive("cond", multiple_results=True, abstract_eval=_cond_abstract_eval,
                   lower=_cond_lower, jvp=_cond_jvp, partial_eval=_cond_partial_eval,
                   transpose=_cond_transpose, batch=_cond_batch, checkify=_cond_checkify)
