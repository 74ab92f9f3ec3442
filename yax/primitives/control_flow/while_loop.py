"""`while`: a loop whose trip count is decided at run time, as one primitive.

Operands are (*cond_consts, *body_consts, *init); params `cond_jaxpr` and `body_jaxpr` are
const-free closed jaxprs taking (cond_consts..., carry...) and (body_consts..., carry...). Meaning:

    carry = init
    while cond_jaxpr(*cond_consts, *carry):
        carry = body_jaxpr(*body_consts, *carry)
    return carry

Forward mode and batching transform the sub-programs and keep one loop. Reverse mode is refused:
the number of iterations is unknown when the backward pass is built.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from yax import errors
from yax.core import dtypes
from yax.core.ir import ClosedJaxpr, Jaxpr, Var
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.errors import WhileLoopReverseModeError  # noqa: F401  (re-exported)
from yax.interpreters import ad_util, batching, checkify, lowering, mlir
from yax.interpreters import jvp as jvp_interp
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.mlir import hlo
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.primitives._lax import lax
from yax.primitives.callbacks import check_no_effects
from yax.runtime.values import aval_of


def _split(args, cond_nconsts, body_nconsts):
    n = cond_nconsts + body_nconsts
    return list(args[:cond_nconsts]), list(args[cond_nconsts:n]), list(args[n:])


def _same_types(got, want) -> bool:
    return len(got) == len(want) and all(
        a.shape == b.shape and a.dtype == b.dtype for a, b in zip(got, want))


def _types_str(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = _split(avals, cond_nconsts, body_nconsts)
    if not _same_types(cond_jaxpr.in_avals, cconsts + carry):
        raise errors.InputMismatchError(
            f"while: cond takes {_types_str(cond_jaxpr.in_avals)} but gets "
            f"{_types_str(cconsts + carry)} (its consts, then the carry)")
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise errors.DTypeError(f"while: cond must return one bool[] scalar, not "
                                f"{_types_str(pred)}")
    check_no_effects(cond_jaxpr, "the condition of while_loop (cond_fun)")
    if not _same_types(body_jaxpr.in_avals, bconsts + carry):
        raise errors.InputMismatchError(
            f"while: body takes {_types_str(body_jaxpr.in_avals)} but gets "
            f"{_types_str(bconsts + carry)} (its consts, then the carry)")
    if not _same_types(body_jaxpr.out_avals, carry):
        raise errors.InputMismatchError(
            f"while: body returns {_types_str(body_jaxpr.out_avals)} but the carry is "
            f"{_types_str(carry)}; they must match exactly")
    return list(carry)


def _while_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # Consts ride along in the carry unchanged: the regions then read only their own
    # arguments, which every StableHLO consumer accepts.
    types = [mlir.aval_type(a) for a in ctx.avals_in]
    op = hlo.WhileOp(types, list(args))
    n = cond_nconsts + body_nconsts
    cond_block = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        a = list(cond_block.arguments)
        pred = lowering.lower_jaxpr_body(ctx.module_ctx, cond_jaxpr.jaxpr, [],
                                         a[:cond_nconsts] + a[n:])
        hlo.return_(pred)
    body_block = op.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        a = list(body_block.arguments)
        new = lowering.lower_jaxpr_body(ctx.module_ctx, body_jaxpr.jaxpr, [],
                                        a[cond_nconsts:n] + a[n:])
        hlo.return_(a[:n] + new)
    return list(op.results)[n:]


# --- forward mode ------------------------------------------------------------------------------

def _nonzero(ts) -> list[bool]:
    return [type(t) is not ad_util.Zero for t in ts]


def _carry_tangent_fixpoint(body_jaxpr, bconst_nz, carry_nz):
    """A carry's tangent is nonzero if it starts so or the body makes it so on some iteration.
    Returns the flags and the body's jvp for them (the last one traced: the body is traced once
    per pattern, so a custom rule inside runs as often as under jax)."""
    while True:
        body_jvp, out_nz = jvp_interp.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz,
                                                instantiate=carry_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz, strict=True)]
        if new == carry_nz:
            return carry_nz, body_jvp
        carry_nz = new


def _with_invars(closed: ClosedJaxpr, invars) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], invars, j.eqns, j.outvars), [])


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, init = _split(primals, cond_nconsts, body_nconsts)
    _, bconst_t, init_t = _split(tangents, cond_nconsts, body_nconsts)
    bconst_nz = _nonzero(bconst_t)
    carry_nz, body_jvp = _carry_tangent_fixpoint(body_jaxpr, bconst_nz, _nonzero(init_t))
    body_jvp, extra = closure_convert(body_jvp)
    # jvp_jaxpr orders inputs (extra, bconsts, carry, bconst tangents, carry tangents); the loop
    # needs every const before the carry.
    v = body_jvp.jaxpr.invars
    ne, nb, nc, nbt = len(extra), body_nconsts, len(init), sum(bconst_nz)
    consts_v, carry_v = v[:ne + nb], v[ne + nb:ne + nb + nc]
    bt_v, ct_v = v[ne + nb + nc:ne + nb + nc + nbt], v[ne + nb + nc + nbt:]
    body_jvp = _with_invars(body_jvp, consts_v + bt_v + carry_v + ct_v)
    # the predicate ignores tangents: the cond takes them and drops them
    t_avals = [ad_util.tangent_aval(a) for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
    cond_jvp = _with_invars(cond_jaxpr, cond_jaxpr.jaxpr.invars + [Var(a) for a in t_avals])
    init_t = [ad_util.instantiate(t) for t, nz in zip(init_t, carry_nz) if nz]
    new_bconsts = extra + bconsts + [t for t in bconst_t if type(t) is not ad_util.Zero]
    outs = bind(while_p, *cconsts, *new_bconsts, *init, *init_t, cond_jaxpr=cond_jvp,
                body_jaxpr=body_jvp, cond_nconsts=cond_nconsts, body_nconsts=len(new_bconsts))
    t_iter = iter(outs[nc:])
    t_out = [next(t_iter) if nz else ad_util.Zero(ad_util.tangent_aval(a))
             for nz, a in zip(carry_nz, body_jaxpr.out_avals, strict=True)]
    return outs[:nc], t_out


# --- reverse mode: refused with an explanation -------------------------------------------------

def _while_partial_eval(trace, args, params):
    raise WhileLoopReverseModeError(
        "reverse-mode differentiation (grad/vjp/linearize) does not work through "
        "lax.while_loop: its number of iterations is not known when the backward pass is built, "
        "so the loop's intermediate values cannot be stored for it. Use lax.fori_loop with "
        "static (Python int) bounds or lax.scan, which are reverse-differentiable; or a bounded "
        "while_loop(..., max_steps=N) where available; or forward mode (yax.jvp, jacfwd), "
        "which works through while_loop.")


# --- batching ----------------------------------------------------------------------------------

def _batched_carry_fixpoint(body_jaxpr, size, bconst_dims, carry_b, axis_name) -> list[bool]:
    """A carry is batched if it starts so or the body makes it so on some iteration."""
    while True:
        dims = [0 if b else None for b in carry_b]
        _, out_dims = batching.batch_jaxpr(body_jaxpr, size, bconst_dims + dims,
                                           axis_name=axis_name)
        new = [b or d is not None for b, d in zip(carry_b, out_dims, strict=True)]
        if new == carry_b:
            return carry_b
        carry_b = new


def _while_batch(args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = batching.axis_size_of(args, dims)
    cconsts, bconsts, init = _split(args, cond_nconsts, body_nconsts)
    cdims, bdims, idims = _split(dims, cond_nconsts, body_nconsts)
    axis_name = batching.current_axis().axis_name  # collectives inside name it
    carry_b = _batched_carry_fixpoint(body_jaxpr, size, bdims, [d is not None for d in idims],
                                      axis_name)
    carry_dims = [0 if b else None for b in carry_b]
    _, (pred_dim,) = batching.batch_jaxpr(cond_jaxpr, size, cdims + carry_dims,
                                          axis_name=axis_name)
    if pred_dim is not None:  # lanes stop at different iterations: every carry is per lane
        carry_b, carry_dims = [True] * len(init), [0] * len(init)
    init = [batching.move_batch_axis(x, d, 0, size) if b else x
            for x, d, b in zip(init, idims, carry_b, strict=True)]
    body_b, _ = batching.batch_jaxpr(body_jaxpr, size, bdims + carry_dims, carry_dims,
                                     axis_name=axis_name)
    cond_b, _ = batching.batch_jaxpr(cond_jaxpr, size, cdims + carry_dims, [pred_dim],
                                     axis_name=axis_name)
    if pred_dim is None:
        cond_b, cc = closure_convert(cond_b)
        body_b, bc = closure_convert(body_b)
        outs = bind(while_p, *cc, *cconsts, *bc, *bconsts, *init, cond_jaxpr=cond_b,
                    body_jaxpr=body_b, cond_nconsts=len(cc) + cond_nconsts,
                    body_nconsts=len(bc) + body_nconsts)
        return outs, carry_dims
    return _batched_predicate_loop(cond_b, body_b, cconsts, bconsts, init), carry_dims


def _batched_predicate_loop(cond_b, body_b, cconsts, bconsts, init) -> list:
    """Run until no lane's predicate holds; a finished lane keeps its carry unchanged."""
    nc, nb = len(cconsts), len(bconsts)
    const_avals = [aval_of(x) for x in cconsts + bconsts]
    carry_avals = [aval_of(x) for x in init]

    def any_lane(*args):
        pred, = eval_jaxpr(cond_b.jaxpr, cond_b.consts, args)
        return [lax.reduce_or(pred, (0,))]

    def masked_body(*args):
        cc, bc, carry = args[:nc], args[nc:nc + nb], list(args[nc + nb:])
        pred, = eval_jaxpr(cond_b.jaxpr, cond_b.consts, [*cc, *carry])
        new = eval_jaxpr(body_b.jaxpr, body_b.consts, [*bc, *carry])
        return [lax.select_n(lax.broadcast_in_dim(pred, aval_of(old).shape, (0,)), old, n)
                for old, n in zip(carry, new, strict=True)]

    cond_j, cc = closure_convert(trace_to_jaxpr(any_lane, const_avals[:nc] + carry_avals))
    body_j, bc = closure_convert(trace_to_jaxpr(masked_body, const_avals + carry_avals))
    return bind(while_p, *cc, *cconsts, *bc, *cconsts, *bconsts, *init, cond_jaxpr=cond_j,
                body_jaxpr=body_j, cond_nconsts=len(cc) + nc, body_nconsts=len(bc) + nc + nb)


# checkify: the error state rides in the carry; the condition reads the carry without it
def _while_checkify(error, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cn, bn = cond_nconsts, body_nconsts
    body, body_consts = checkify.checked_closed(body_jaxpr, error.table, bn)
    cond_avals = list(cond_jaxpr.in_avals)

    def cond_fun(*xs):
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, list(xs[:cn]) + list(xs[cn + 3:]))
    cond_j, cond_consts = closure_convert(trace_to_jaxpr(
        cond_fun, cond_avals[:cn] + checkify.state_avals(error.table.payload_size)
        + cond_avals[cn:], name="cond"))
    outs = bind(while_p, *cond_consts, *args[:cn], *body_consts, *args[cn:cn + bn],
                *error.state, *args[cn + bn:], cond_jaxpr=cond_j, body_jaxpr=body,
                cond_nconsts=cn + len(cond_consts), body_nconsts=bn + len(body_consts))
    return error.with_state(outs[:3]), list(outs[3:])


while_p = Primitive("while", multiple_results=True, abstract_eval=_while_abstract_eval,
                    lower=_while_lower, jvp=_while_jvp, partial_eval=_while_partial_eval,
                    batch=_while_batch, checkify=_while_checkify)
