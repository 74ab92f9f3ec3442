"""`remat` (checkpoint): a sub-program whose intermediate values reverse mode recomputes.

`remat(*consts, *args; jaxpr, policy, prevent_cse)` computes `jaxpr`. Its meaning lies in its
partial-evaluation rule: when some inputs are unknown (under `linearize`/`grad`, the tangents),
the known part runs now as usual, but instead of handing every intermediate the unknown part
needs (the residuals) to the backward pass, only the segment's known inputs and the values the
`policy` calls saveable are kept; the unknown part, staged as another `remat`, recomputes the
rest from them. `policy(primitive, *in_avals, **params) -> bool` decides per equation
(see yax.checkpoint_policies). With `prevent_cse`, the lowering puts an optimization barrier on
the operands so XLA cannot merge the recomputation with the original forward computation.

`name` (checkpoint_name) is the identity with a label that policies can select by.
"""

from __future__ import annotations

from yax.core.ir import ClosedJaxpr, Jaxpr, Var
from yax.core.primitive import Primitive
from yax.core.trace import bind, use_trace
from yax.interpreters import lowering
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.interpreters.batching import axis_size_of, batch_jaxpr, current_axis
from yax.interpreters.checkify import inline_checked
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_jaxpr
from yax.interpreters.mlir import hlo
from yax.interpreters.partial_eval import partial_eval_jaxpr
from yax.interpreters.rule_cache import cached
from yax.interpreters.staging import (
    closure_convert,
    dead_code_eliminated,
    has_effects,
    trace_to_jaxpr,
)
from yax.interpreters.transpose import is_undefined, transpose_jaxpr
from yax.primitives.call import run_closed_jaxpr
from yax.primitives.checkify_rules import without_nan_check


def _remat_abstract_eval(*avals, jaxpr, policy, prevent_cse):
    return list(jaxpr.out_avals)


def _remat_impl(*arrays, jaxpr, policy, prevent_cse):
    return run_closed_jaxpr(jaxpr, arrays)


def _remat_lower(ctx, *args, jaxpr, policy, prevent_cse):
    args = list(args)
    if prevent_cse and args:
        args = list(hlo.OptimizationBarrierOp(args).results)
    return lowering.call_function(ctx.module_ctx, jaxpr, "remat", args)


def _bind_remat(closed: ClosedJaxpr, args, policy, prevent_cse):
    """Bind `remat` on a closed jaxpr whose consts become leading operands."""
    jaxpr, consts = closure_convert(closed)
    return bind(remat_p, *consts, *args, jaxpr=jaxpr, policy=policy, prevent_cse=prevent_cse)


def _remat_jvp(primals, tangents, *, jaxpr, policy, prevent_cse):
    nonzero = [type(t) is not Zero for t in tangents]
    jvp_closed, out_nonzero = cached(("remat_jvp", jaxpr, tuple(nonzero)),
                                     lambda: jvp_jaxpr(jaxpr, nonzero, instantiate=False),
                                     lambda v: v[0].consts)
    outs = _bind_remat(jvp_closed, [*primals, *[t for t in tangents if type(t) is not Zero]],
                       policy, prevent_cse)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero(tangent_aval(a))
                      for nz, a in zip(out_nonzero, jaxpr.out_avals, strict=True)]


def _remat_transpose(cts, *args, jaxpr, policy, prevent_cse):
    linear = [is_undefined(a) for a in args]
    transposed = cached(("remat_transpose", jaxpr, tuple(linear)),
                        lambda: transpose_jaxpr(jaxpr, linear), lambda v: v.consts)
    outs = _bind_remat(transposed, [*[a for a in args if not is_undefined(a)], *cts],
                       policy, prevent_cse)
    it = iter(outs)
    return [next(it) if lin else None for lin in linear]


def _remat_batch(args, dims, *, jaxpr, policy, prevent_cse):
    size = axis_size_of(args, dims)
    axis_name = current_axis().axis_name  # collectives inside name it
    batched, out_dims = cached(("remat_batch", jaxpr, tuple(dims), size, axis_name),
                               lambda: batch_jaxpr(jaxpr, size, list(dims), axis_name=axis_name),
                               lambda v: v[0].consts)
    return _bind_remat(batched, args, policy, prevent_cse), out_dims


# --- partial evaluation: keep the inputs and the saveable values, recompute the rest -----------

def _remat_partial_eval(trace, args, params):
    jaxpr, policy, prevent_cse = params["jaxpr"], params["policy"], params["prevent_cse"]
    unknowns = [trace.is_unknown(a) for a in args]
    split = cached(("remat_pe", jaxpr, tuple(unknowns), policy),
                   lambda: _split(jaxpr, unknowns, policy), lambda v: v[3])
    known, n_known_out, recompute_and_unknown, body_consts, keep = split
    known_args = [a for a, u in zip(args, unknowns) if not u]
    with use_trace(trace.parent):
        known_outs = eval_jaxpr(known.jaxpr, known.consts, known_args)
    saved = known_outs[n_known_out:]
    # only what the backward program reads is kept for it (JAX's residual set)
    known_args, saved = ([x for x, k in zip(group, keep[i]) if k]
                         for i, group in enumerate((known_args, saved)))
    unknown_args = [a for a, u in zip(args, unknowns) if u]
    staged = trace.stage(remat_p, [*body_consts, *known_args, *saved, *unknown_args],
                         {"jaxpr": recompute_and_unknown, "policy": policy,
                          "prevent_cse": prevent_cse})
    known_iter, unknown_iter = iter(known_outs[:n_known_out]), iter(staged)
    out_unknowns = _out_unknowns(jaxpr, unknowns)
    return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


def _out_unknowns(jaxpr, unknowns):
    return cached(("remat_pe", jaxpr, tuple(unknowns), "out"),
                  lambda: partial_eval_jaxpr(jaxpr, unknowns)[2], lambda v: [])


def _split(closed: ClosedJaxpr, unknowns: list[bool], policy):
    """Returns (known', n_known_outs, recompute_and_unknown, its consts) where
      known':  known inputs -> (known outputs..., saved values...)
      recompute_and_unknown: (known inputs..., saved values..., unknown inputs...) -> unknown outs
    The second recomputes every residual the policy did not save."""
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, unknowns)
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - num_res
    residual_vars = kj.outvars[n_known_out:]
    recompute_eqns, saved_vars = _recompute_plan(kj, residual_vars, policy)
    saving_outs = [*kj.outvars[:n_known_out], *saved_vars]
    known_saving = ClosedJaxpr(Jaxpr(kj.constvars, kj.invars,
                                     dead_code_eliminated(kj.eqns, saving_outs), saving_outs),
                               known.consts)
    recompute = ClosedJaxpr(Jaxpr(kj.constvars, [*kj.invars, *saved_vars], recompute_eqns,
                                  residual_vars), known.consts)
    n_k, n_s = len(kj.invars), len(saved_vars)
    in_avals = [*known.in_avals, *[v.aval for v in saved_vars],
                *[a for a, u in zip(closed.in_avals, unknowns) if u]]

    def fun(*xs):
        residuals = eval_jaxpr(recompute.jaxpr, recompute.consts, xs[:n_k + n_s])
        return eval_jaxpr(unknown.jaxpr, unknown.consts, [*residuals, *xs[n_k + n_s:]])
    body, body_consts = closure_convert(trace_to_jaxpr(fun, in_avals, name="remat_backward"))
    body, keep = _without_unread_inputs(body, len(body_consts), n_k, n_s)
    return known_saving, n_known_out, body, body_consts, keep


def _without_unread_inputs(body: ClosedJaxpr, n_consts: int, n_k: int, n_s: int):
    """`body` without the known inputs and saved values it never reads (so they are not stored
    for the backward pass), and (keep_known, keep_saved) masks saying which remain."""
    j = body.jaxpr
    read = {a for e in j.eqns for a in e.inputs if isinstance(a, Var)}
    read.update(v for v in j.outvars if isinstance(v, Var))
    segment = j.invars[n_consts:n_consts + n_k + n_s]
    mask = [v in read for v in segment]
    if all(mask):
        return body, (mask[:n_k], mask[n_k:])
    invars = [*j.invars[:n_consts], *[v for v, m in zip(segment, mask) if m],
              *j.invars[n_consts + n_k + n_s:]]
    return (ClosedJaxpr(Jaxpr(j.constvars, invars, j.eqns, j.outvars), body.consts),
            (mask[:n_k], mask[n_k:]))


def _recompute_plan(jaxpr: Jaxpr, residual_vars, policy):
    """Walk back from the residuals: values made by saveable equations are saved (and the walk
    stops there); the other equations they depend on are recomputed."""
    producer = {v: e for e in jaxpr.eqns for v in e.outvars}
    chosen = _chosen_by_plan(policy, jaxpr, residual_vars)
    needed_eqns, saved, seen = set(), [], set()
    stack = [v for v in residual_vars if isinstance(v, Var)]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        eqn = producer.get(v)
        if eqn is None:  # an input or a const: available to the recomputation as is
            continue
        if v in chosen or _saveable(policy, eqn):
            saved.append(v)
            continue
        needed_eqns.add(id(eqn))
        stack.extend(a for a in eqn.inputs if isinstance(a, Var))
    eqns = [e for e in jaxpr.eqns if id(e) in needed_eqns]
    order = {v: i for i, e in enumerate(jaxpr.eqns) for v in e.outvars}
    saved.sort(key=order.__getitem__)
    return eqns, saved


def _chosen_by_plan(policy, jaxpr: Jaxpr, residual_vars) -> set:
    """What a whole-program policy (one with `choose_saved`, e.g. save_within_bytes) stores."""
    choose = getattr(policy, "choose_saved", None)
    if choose is None:
        return set()
    effects = {v for e in jaxpr.eqns if has_effects(e) for v in e.outvars}
    return set(choose(jaxpr, [v for v in residual_vars if isinstance(v, Var)], effects))


def _saveable(policy, eqn) -> bool:
    if has_effects(eqn):  # a side effect runs once: its results are saved, never recomputed
        return True
    if policy is None:
        return False
    return bool(policy(eqn.primitive, *[a.aval for a in eqn.inputs], **eqn.params))


# checkify's own result is not rematerialised: its rule inlines the sub-program
remat_p = Primitive("remat", multiple_results=True, abstract_eval=_remat_abstract_eval,
                    impl=_remat_impl, lower=_remat_lower, jvp=_remat_jvp,
                    transpose=_remat_transpose, batch=_remat_batch,
                    partial_eval=_remat_partial_eval, checkify=inline_checked)


# --- checkpoint_name: an identity that policies can select ------------------------------------

def _name_jvp(primals, tangents, *, name):
    return [bind(name_p, primals[0], name=name)], [tangents[0]]


def _name_batch(args, dims, *, name):
    return [bind(name_p, args[0], name=name)], [dims[0]]


name_p = Primitive("name", abstract_eval=lambda x, *, name: x,
                   lower=lambda ctx, x, *, name: [x], jvp=_name_jvp,
                   transpose=lambda cts, x, *, name: [cts[0]], batch=_name_batch)

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
name_p.define(checkify=without_nan_check)
