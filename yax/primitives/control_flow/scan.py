"""`scan`: a loop over the leading axis of arrays that carries state, as one primitive.

Operands are `(*consts, *init_carry, *xs)`. Params:
  jaxpr:      const-free ClosedJaxpr, body (consts..., carry..., x...) -> (carry..., y...)
  length:     number of iterations (the leading size of every xs operand)
  reverse:    iterate from index length-1 down to 0
  num_consts, num_carry: how the operands split into the three groups
  linear:     one bool per operand (informational: operands known to be linear)
  unroll:     kept for jax.lax.scan compatibility; the loop is emitted as one XLA while

Meaning, as the equivalent Python loop:

    def scan(*operands):
        consts, carry, xs = split(operands, num_consts, num_carry)
        ys = [None] * length
        for i in (reversed(range(length)) if reverse else range(length)):
            carry, ys[i] = jaxpr(*consts, *carry, *[x[i] for x in xs])
        return (*carry, *stack_each_output(ys))

Every transformation rule transforms the body and binds scan again, so derivatives and batches
of a loop stay loops: grad is a forward scan saving residuals plus one reverse scan.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from yax import errors
from yax.core.ir import ClosedJaxpr, Jaxpr, Var
from yax.core.primitive import Primitive
from yax.core.trace import bind, use_trace
from yax.interpreters import ad_util, batching, checkify, lowering, mlir
from yax.interpreters import jvp as jvp_interp
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.mlir import hlo
from yax.interpreters.partial_eval import partial_eval_jaxpr
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.transpose import is_undefined, transpose_jaxpr


def _split(seq, num_consts: int, num_carry: int) -> tuple[list, list, list]:
    seq = list(seq)
    return (seq[:num_consts], seq[num_consts:num_consts + num_carry],
            seq[num_consts + num_carry:])


def _same_type(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)


def _short(avals) -> str:
    return ", ".join(a.str_short() for a in avals)


def _scan_abstract_eval(*avals, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    body_in = jaxpr.in_avals
    if len(avals) != len(body_in) or len(linear) != len(avals):
        raise errors.InputMismatchError(
            f"scan: {len(avals)} operands but the body takes {len(body_in)} (linear has "
            f"{len(linear)} entries)")
    consts, carry, xs = _split(avals, num_consts, num_carry)
    if any(not x.shape or x.shape[0] != length for x in xs):
        raise errors.ShapeError(f"scan: every xs operand needs leading size length={length}; "
                                f"got ({_short(xs)})")
    sliced = consts + carry + [x.update(shape=x.shape[1:]) for x in xs]
    if not all(_same_type(a, b) for a, b in zip(sliced, body_in)):
        raise errors.InputMismatchError(
            f"scan: operands ({_short(sliced)}) (xs sliced) do not match the body's parameters "
            f"({_short(body_in)})")
    carry_in = body_in[num_consts:num_consts + num_carry]
    carry_out = jaxpr.out_avals[:num_carry]
    if len(carry_out) != num_carry or not all(map(_same_type, carry_out, carry_in)):
        raise errors.DTypeError(f"scan: the body returns carry ({_short(carry_out)}) but takes "
                                f"carry ({_short(carry_in)}); they must match exactly")
    ys = [y.update(shape=(length,) + tuple(y.shape)) for y in jaxpr.out_avals[num_carry:]]
    return list(carry_out) + ys  # the body's carry types (a weak init may come out strong)


# --- lowering: a stablehlo.while carrying (i, consts, carry, xs, ys buffers) ---

def _i32(value) -> ir.Value:
    return mlir.constant(np.int32(value))


def _slice_at(x, aval, idx):
    """x[idx] along the leading axis."""
    zero = _i32(0)
    starts = [idx] + [zero] * (len(aval.shape) - 1)
    piece = hlo.dynamic_slice(x, starts, mlir.dense_i64((1,) + tuple(aval.shape[1:])))
    return hlo.reshape(mlir.tensor_type(aval.shape[1:], aval.dtype), piece)


def _update_at(buf, y, buf_aval, idx):
    """buf[idx] = y along the leading axis."""
    zero = _i32(0)
    piece = hlo.reshape(mlir.tensor_type((1,) + tuple(buf_aval.shape[1:]), buf_aval.dtype), y)
    return hlo.dynamic_update_slice(buf, piece, [idx] + [zero] * (len(buf_aval.shape) - 1))


def _lower_iteration(ctx, state, *, jaxpr, length, reverse, num_consts, num_carry):
    n_xs = len(ctx.avals_in) - num_consts - num_carry
    i, rest = state[0], state[1:]
    consts, carry, rest = _split(rest, num_consts, num_carry)
    xs, ys = rest[:n_xs], rest[n_xs:]
    xs_avals = ctx.avals_in[num_consts + num_carry:]
    idx = hlo.subtract(_i32(length - 1), i) if reverse else i
    x_now = [_slice_at(x, a, idx) for x, a in zip(xs, xs_avals)]
    outs = lowering.lower_jaxpr_body(ctx.module_ctx, jaxpr.jaxpr, [], consts + carry + x_now)
    new_carry, y_now = outs[:num_carry], outs[num_carry:]
    ys = [_update_at(b, y, a, idx) for b, y, a in zip(ys, y_now, ctx.avals_out[num_carry:])]
    return [hlo.add(i, _i32(1)), *consts, *new_carry, *xs, *ys]


def _scan_lower(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    ys0 = [mlir.full_like_aval(0, a) for a in ctx.avals_out[num_carry:]]
    if length == 0:  # no iteration (and slicing an empty axis would not verify)
        return list(args[num_consts:num_consts + num_carry]) + ys0
    state = [_i32(0), *args, *ys0]
    types = [v.type for v in state]
    op = hlo.WhileOp(types, state)
    cond = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond):
        hlo.return_([hlo.compare(cond.arguments[0], _i32(length),
                                 hlo.ComparisonDirectionAttr.get("LT"),
                                 compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))])
    body = op.body.blocks.append(*types)
    with ir.InsertionPoint(body):
        hlo.return_(_lower_iteration(ctx, list(body.arguments), jaxpr=jaxpr, length=length,
                                     reverse=reverse, num_consts=num_consts,
                                     num_carry=num_carry))
    results = list(op.results)
    carry_start = 1 + num_consts
    ys_start = 1 + len(args)
    return results[carry_start:carry_start + num_carry] + results[ys_start:]


# --- helpers for rearranging a body's parameters and results ---

def _group_order(sizes: list[int], order: list[int]) -> list[int]:
    """Indices that list the groups (of the given sizes) in `order`."""
    starts = np.cumsum([0] + list(sizes))
    return [i for g in order for i in range(int(starts[g]), int(starts[g]) + sizes[g])]


def _permuted(closed: ClosedJaxpr, in_order, out_order) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[i] for i in in_order], j.eqns,
                             [j.outvars[i] for i in out_order]), closed.consts)


def _bind_scan(consts, carry, xs, jaxpr, *, length, reverse, unroll, linear=None) -> list:
    operands = [*consts, *carry, *xs]
    linear = tuple(linear) if linear is not None else (False,) * len(operands)
    return bind(scan_p, *operands, jaxpr=jaxpr, length=length, reverse=reverse,
                num_consts=len(consts), num_carry=len(carry), linear=linear, unroll=unroll)


def _fixpoint(carry_flags: list[bool], step) -> tuple[list[bool], object]:
    """Grow `carry_flags` until step(flags) -> (result, out_flags) adds nothing: a carry that
    is nonzero/unknown/batched after one iteration must be so on entry to every iteration."""
    for _ in range(len(carry_flags) + 1):
        result, out_flags = step(carry_flags)
        grown = [a or b for a, b in zip(carry_flags, out_flags, strict=True)]
        if grown == carry_flags:
            return carry_flags, result
        carry_flags = grown
    raise AssertionError("scan fixpoint did not converge")


def _stacked(aval, length):
    return aval.update(shape=(length,) + tuple(aval.shape))


# --- jvp: tangents of consts, carries and xs ride along as extra consts, carries and xs ------

def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, linear,
              unroll):
    nz = [not ad_util.is_zero(t) for t in tangents]
    const_nz, carry_nz, xs_nz = _split(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(flags):
        closed, out_nz = jvp_interp.jvp_jaxpr(jaxpr, const_nz + flags + xs_nz,
                                              instantiate=flags + [False] * n_ys)
        return (closed, out_nz), out_nz[:num_carry]
    carry_nz, (jvp_closed, out_nz) = _fixpoint(carry_nz, step)
    jvp_closed, extra = closure_convert(jvp_closed)

    consts, carry, xs = _split(primals, num_consts, num_carry)
    t_consts, t_carry, t_xs = _split(tangents, num_consts, num_carry)
    t_consts = [t for t in t_consts if not ad_util.is_zero(t)]
    t_carry = [ad_util.instantiate(t) for t, f in zip(t_carry, carry_nz) if f]
    t_xs = [t for t in t_xs if not ad_util.is_zero(t)]
    sizes_in = [len(extra), len(consts), len(carry), len(xs), len(t_consts), len(t_carry),
                len(t_xs)]
    n_ty = sum(out_nz[num_carry:])
    in_order = _group_order(sizes_in, [0, 1, 4, 2, 5, 3, 6])
    out_order = _group_order([num_carry, n_ys, len(t_carry), n_ty], [0, 2, 1, 3])
    body = _permuted(jvp_closed, in_order, out_order)
    lin_c, lin_k, lin_x = _split(linear, num_consts, num_carry)
    outs = _bind_scan([*extra, *consts, *t_consts], [*carry, *t_carry], [*xs, *t_xs], body,
                      length=length, reverse=reverse, unroll=unroll,
                      linear=[False] * len(extra) + lin_c + [True] * len(t_consts) + lin_k
                      + [True] * len(t_carry) + lin_x + [True] * len(t_xs))
    p_carry, outs = outs[:num_carry], outs[num_carry:]
    tk_out, outs = iter(outs[:len(t_carry)]), outs[len(t_carry):]
    p_ys, ty_out = outs[:n_ys], iter(outs[n_ys:])
    primals_out = p_carry + p_ys
    tangents_out = [next(tk_out) if f else ad_util.Zero(ad_util.tangent_aval(p.aval))
                    for f, p in zip(carry_nz, p_carry)]
    tangents_out += [next(ty_out) if f else ad_util.Zero(ad_util.tangent_aval(p.aval))
                     for f, p in zip(out_nz[num_carry:], p_ys)]
    return primals_out, tangents_out


# --- partial evaluation: a known scan stacking residuals, and an unknown scan reading them ---

def _scan_partial_eval(trace, args, params):
    jaxpr, num_consts, num_carry = params["jaxpr"], params["num_consts"], params["num_carry"]
    const_uk, carry_uk, xs_uk = _split([trace.is_unknown(a) for a in args], num_consts,
                                       num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(flags):
        split = partial_eval_jaxpr(jaxpr, const_uk + flags + xs_uk,
                                   instantiate=flags + [False] * n_ys)
        return split, split[2][:num_carry]
    carry_uk, (known, unknown, out_uk, num_res) = _fixpoint(carry_uk, step)
    loop = {k: params[k] for k in ("length", "reverse", "unroll")}
    consts, carry, xs = _split(args, num_consts, num_carry)
    k_consts = _pick(consts, const_uk, False)
    known, invariant = _hoist_invariant_residuals(known, len(k_consts), num_res)
    known, extra = closure_convert(known)
    with use_trace(trace.parent):
        k_outs = _bind_scan([*extra, *k_consts], _pick(carry, carry_uk, False),
                            _pick(xs, xs_uk, False), known, **loop)
    n_stacked = num_res - len(invariant)
    n_known = len(k_outs) - n_stacked
    stacked = iter(k_outs[n_known:])  # one slice per iteration
    res_inv = [k_consts[invariant[r]] for r in range(num_res) if r in invariant]
    res_var = [next(stacked) for r in range(num_res) if r not in invariant]
    u_consts, u_carry = _pick(consts, const_uk, True), _pick(carry, carry_uk, True)
    u_xs = _pick(xs, xs_uk, True)
    n_u = num_res
    inv_pos = [r for r in range(num_res) if r in invariant]
    var_pos = [r for r in range(num_res) if r not in invariant]
    rest = lambda start, n: list(range(start, start + n))
    order = (inv_pos + rest(n_u, len(u_consts)) + rest(n_u + len(u_consts), len(u_carry))
             + var_pos + rest(n_u + len(u_consts) + len(u_carry), len(u_xs)))
    body = _permuted(unknown, order, range(len(unknown.out_avals)))
    u_operands = [*res_inv, *u_consts, *u_carry, *res_var, *u_xs]
    u_outs = trace.stage(scan_p, u_operands, dict(
        jaxpr=body, num_consts=len(res_inv) + len(u_consts), num_carry=len(u_carry),
        linear=(False,) * len(u_operands), **loop))
    k_iter, u_iter = iter(k_outs[:n_known]), iter(u_outs)
    return [next(u_iter) if u else next(k_iter) for u in out_uk]


def _hoist_invariant_residuals(known: ClosedJaxpr, n_consts: int, num_res: int):
    """Residuals that are just known loop constants (a weight matrix read by every step) need
    not be stacked once per iteration: drop them from the known scan's outputs and hand the
    constant itself to the unknown scan. Returns the slimmer jaxpr and {residual: const index}."""
    j = known.jaxpr
    first_res = len(j.outvars) - num_res
    const_vars = j.invars[:n_consts]
    invariant = {}
    for r, v in enumerate(j.outvars[first_res:]):
        if isinstance(v, Var) and v in const_vars:
            invariant[r] = const_vars.index(v)
    if not invariant:
        return known, invariant
    outvars = j.outvars[:first_res] + [v for r, v in enumerate(j.outvars[first_res:])
                                       if r not in invariant]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.eqns, outvars), known.consts), invariant


def _pick(values, flags, want: bool) -> list:
    return [v for v, f in zip(values, flags, strict=True) if f == want]


# --- transpose: a scan in the other direction over the transposed body ---------------------

def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, linear,
                    unroll):
    """Carries are all linear (their cotangents flow back through every iteration); consts and
    xs are linear where undefined. Cotangents of linear consts accumulate in extra carries."""
    consts, carry, xs = _split(args, num_consts, num_carry)
    c_lin = [is_undefined(c) for c in consts]
    x_lin = [is_undefined(x) for x in xs]
    transposed = transpose_jaxpr(jaxpr, c_lin + [True] * num_carry + x_lin)
    in_c, in_k, in_x = _split(jaxpr.in_avals, num_consts, num_carry)
    c_nl, x_nl = _pick(consts, c_lin, False), _pick(xs, x_lin, False)
    acc_avals = _pick(in_c, c_lin, True)
    sizes = [len(c_nl), len(acc_avals), num_carry, len(x_nl), len(cts) - num_carry]
    n_xl = sum(x_lin)

    def body(*a):
        cnl, acc, ct_k, xnl, ct_y = [a[s:e] for s, e in _bounds(sizes)]
        outs = eval_jaxpr(transposed.jaxpr, transposed.consts, [*cnl, *xnl, *ct_k, *ct_y])
        ct_c, ct_k_in, ct_x = outs[:len(acc)], outs[len(acc):len(outs) - n_xl], outs[
            len(outs) - n_xl:]
        return [ad_util.add_tangents(s, c) for s, c in zip(acc, ct_c)] + ct_k_in + ct_x

    body_avals = ([*_pick(in_c, c_lin, False), *acc_avals, *in_k, *_pick(in_x, x_lin, False)]
                  + list(jaxpr.out_avals[num_carry:]))
    body_closed, extra = closure_convert(trace_to_jaxpr(body, body_avals, name="scan_T"))
    zeros = [ad_util.zeros_like_aval(a) for a in acc_avals]
    outs = _bind_scan([*extra, *c_nl], [*zeros, *cts[:num_carry]], [*x_nl, *cts[num_carry:]],
                      body_closed, length=length, reverse=not reverse, unroll=unroll)
    ct_c = iter(outs[:len(acc_avals)])
    ct_k = outs[len(acc_avals):len(acc_avals) + num_carry]
    ct_x = iter(outs[len(acc_avals) + num_carry:])
    return ([next(ct_c) if lin else None for lin in c_lin]
            + [ct if is_undefined(k) else None for ct, k in zip(ct_k, carry)]
            + [next(ct_x) if lin else None for lin in x_lin])


def _bounds(sizes):
    starts = np.cumsum([0] + list(sizes))
    return [(int(starts[i]), int(starts[i + 1])) for i in range(len(sizes))]


# --- batching: the batch axis is 0 in the body; stacked xs and ys carry it at axis 1 ---------

def _scan_batch(args, dims, *, jaxpr, length, reverse, num_consts, num_carry, linear,
                unroll):
    size = batching.axis_size_of(args, dims)
    axis_name = batching.current_axis().axis_name
    c_d, k_d, x_d = _split(dims, num_consts, num_carry)
    c_b, x_b = [d is not None for d in c_d], [d is not None for d in x_d]

    def body_dims(flags):
        return [0 if b else None for b in c_b + flags + x_b]

    def step(flags):
        _, out_dims = batching.batch_jaxpr(jaxpr, size, body_dims(flags), axis_name=axis_name)
        return out_dims, [d is not None for d in out_dims[:num_carry]]
    k_b, out_dims = _fixpoint([d is not None for d in k_d], step)
    wanted = [0 if b else None for b in k_b] + list(out_dims[num_carry:])
    batched, _ = batching.batch_jaxpr(jaxpr, size, body_dims(k_b), wanted, axis_name=axis_name)
    batched, extra = closure_convert(batched)
    consts, carry, xs = _split(args, num_consts, num_carry)
    consts = [batching.move_batch_axis(c, d, 0, size) if d is not None else c
              for c, d in zip(consts, c_d)]
    carry = [batching.move_batch_axis(k, d, 0, size) if b else k
             for k, d, b in zip(carry, k_d, k_b)]
    xs = [batching.move_batch_axis(x, d, 1, size) if d is not None else x
          for x, d in zip(xs, x_d)]
    outs = _bind_scan([*extra, *consts], carry, xs, batched, length=length, reverse=reverse,
                      unroll=unroll)
    out_bdims = [0 if b else None for b in k_b] + [None if d is None else 1
                                                   for d in wanted[num_carry:]]
    return outs, out_bdims


# checkify: the error state rides in the carry, so checks inside the body are threaded through
def _scan_checkify(error, *args, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    body, body_consts = checkify.checked_closed(jaxpr, error.table, num_consts)
    n = len(body_consts)
    outs = bind(scan_p, *body_consts, *args[:num_consts], *error.state, *args[num_consts:],
                jaxpr=body, length=length, reverse=reverse, num_consts=num_consts + n,
                num_carry=num_carry + 3, linear=(False,) * (n + len(args) + 3), unroll=unroll)
    return error.with_state(outs[:3]), list(outs[3:])


scan_p = Primitive("scan", multiple_results=True, abstract_eval=_scan_abstract_eval,
                   lower=_scan_lower, jvp=_scan_jvp, partial_eval=_scan_partial_eval,
                   transpose=_scan_transpose, batch=_scan_batch, checkify=_scan_checkify)
