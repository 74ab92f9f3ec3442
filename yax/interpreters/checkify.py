"""Checkify: run a program with its run-time checks turned into an error value.

`checkify_flat(fun, args, enabled)` traces `fun` to a jaxpr and evaluates it again under the
current trace, equation by equation; after each equation whose primitive can fail in an enabled
way (an out-of-bounds gather/scatter/dynamic slice, a NaN produced, an integer division by zero,
a failed `check`), it folds a predicate into an error *state*: three arrays
    failed:  bool[]      -- some check failed
    code:    int32[]     -- which check site failed first (an index into the message table)
    payload: float[4]    -- the values the message of that site shows (index, axis, size...)
The first failure wins. The state is an ordinary value, so the result works under jit, vmap
(states become batched) and grad. Sub-programs of scan, while_loop, cond and pjit are rewritten
to thread the state and remat's is inlined; custom_jvp/custom_vjp functions run unchecked inside
(their outputs are still checked for NaNs), so that their derivative rules stay in force.

The message table is built at trace time (one entry per check site, naming the primitive and the
user's source line) and travels as static data with the Error.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr
from yax.core.trace import bind
from yax.interpreters.eval_jaxpr import eval_jaxpr, read_typed
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.primitives._lax import lax

PAYLOAD = 4


def payload_dtype():
    return dtypes.canonicalize(np.float64)


def state_avals() -> list:
    return [ShapedArray((), np.dtype(bool)), ShapedArray((), np.dtype(np.int32)),
            ShapedArray((PAYLOAD,), payload_dtype())]


def initial_state() -> list:
    return [np.bool_(False), np.int32(-1), np.zeros(PAYLOAD, payload_dtype())]


class Table:
    """The message table of one checkified trace: (template, int-valued payload slots)."""

    def __init__(self, enabled):
        self.enabled = frozenset(enabled)
        self.messages: list = []

    def site(self, template: str, source, int_slots=()) -> int:
        where = f" (at {source})" if source is not None else ""
        self.messages.append((template + where, tuple(int_slots)))
        return len(self.messages) - 1


def fold(state, pred, code: int, values=()):
    """The state after a check whose failure is `pred` (a bool scalar), first failure kept."""
    failed, old_code, payload = state
    pad = list(values) + [0.0] * (PAYLOAD - len(values))
    new_payload = lax.concatenate([lax.reshape(lax.convert_element_type(v, payload_dtype()),
                                               (1,)) for v in pad], 0)
    first = lax.bitwise_and(pred, lax.bitwise_not(failed))
    return [lax.bitwise_or(failed, pred),
            lax.select(first, np.int32(code), old_code),
            lax.select(lax.broadcast(first, (PAYLOAD,)), new_payload, payload)]


# --- evaluating a jaxpr with checks ------------------------------------------------------------

def eval_checked(jaxpr, consts, args, state, table: Table):
    """Evaluate `jaxpr` under the current trace; returns (outputs, final state)."""
    env = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(a):
        return read_typed(a, env.__getitem__)

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.inputs]
        special = _STRUCTURED.get(eqn.primitive.name)
        if eqn.primitive.name == "check":  # functionalized: it becomes part of the state only
            outs, state = [], _user_check(eqn, ins, [], state, table)
        elif special is not None:
            outs, state = special(eqn, ins, state, table)
        else:
            outs = bind(eqn.primitive, *ins, **eqn.params)
            outs = list(outs) if eqn.primitive.multiple_results else [outs]
            rule = CHECKS.get(eqn.primitive.name)
            if rule is not None:
                state = rule(eqn, ins, outs, state, table)
            if "nan" in table.enabled and eqn.primitive.name not in _NO_NAN_CHECK:
                state = _nan_check(eqn, outs, state, table)
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars], state


def checked_closed(closed: ClosedJaxpr, table: Table, state_at: int) -> tuple:
    """`closed` rewritten to take the state as 3 extra inputs at `state_at` and return it as the
    first 3 outputs. Returns (const-free jaxpr, its consts to pass first)."""
    avals = list(closed.in_avals)

    def fun(*xs):
        xs = list(xs)
        state, ins = xs[state_at:state_at + 3], xs[:state_at] + xs[state_at + 3:]
        outs, state = eval_checked(closed.jaxpr, closed.consts, ins, state, table)
        return [*state, *outs]
    traced = trace_to_jaxpr(fun, avals[:state_at] + state_avals() + avals[state_at:],
                            name="checkify")
    return closure_convert(traced)


# --- automatic checks ----------------------------------------------------------------------------

def _source(eqn):
    return f"{eqn.source.filename}:{eqn.source.lineno}" if eqn.source else None


def _any(x):
    return lax.reduce_or(x, tuple(range(x.ndim))) if x.ndim else x


def _index_check(eqn, index_aval_dims, uppers, sizes, idx, state, table):
    """Start indices `idx` (last axis: one component per entry of `index_aval_dims`) against
    [0, upper]; the payload is (index, axis, size)."""
    if "index" not in table.enabled or not index_aval_dims:
        return state
    code = table.site(f"out-of-bounds indexing in {eqn.primitive.name}: index {{0}} is out of "
                      f"bounds for axis {{1}} with size {{2}}", _source(eqn), (0, 1, 2))
    k = len(index_aval_dims)
    idx = lax.convert_element_type(idx, np.int32) if idx.dtype != np.int64 else idx
    upper = lax.broadcast_in_dim(np.asarray(uppers, idx.dtype), idx.shape, (idx.ndim - 1,))
    bad = lax.bitwise_or(lax.lt(idx, np.zeros((), idx.dtype)), lax.gt(idx, upper))
    flat_bad = lax.reshape(bad, (int(np.prod(bad.shape)),))
    pos = lax.argmax(lax.convert_element_type(flat_bad, np.int32), 0, np.int32)
    flat_idx = lax.reshape(idx, (int(np.prod(idx.shape)),))
    value = lax.dynamic_index_in_dim(flat_idx, pos, keepdims=False)
    comp = lax.rem(pos, np.int32(k))
    axis, size = np.int32(index_aval_dims[0]), np.int32(sizes[0])
    for j in range(1, k):  # select the axis and size of component `comp` (scalars only)
        hit = lax.eq(comp, np.int32(j))
        axis = lax.select(hit, np.int32(index_aval_dims[j]), axis)
        size = lax.select(hit, np.int32(sizes[j]), size)
    return fold(state, _any(bad), code, [value, axis, size])


def _gather_check(eqn, ins, outs, state, table):
    operand, idx = eqn.inputs[0].aval, ins[1]
    dn, sizes = eqn.params["dimension_numbers"], eqn.params["slice_sizes"]
    dims = list(dn.start_index_map)
    return _index_check(eqn, dims, [operand.shape[d] - sizes[d] for d in dims],
                        [operand.shape[d] for d in dims], idx, state, table)


def _scatter_check(eqn, ins, outs, state, table):
    from yax.primitives.scatter import _scatter_window_sizes
    operand, updates = eqn.inputs[0].aval, eqn.inputs[2].aval
    dn = eqn.params["dimension_numbers"]
    sizes = _scatter_window_sizes(operand, updates, dn)
    dims = list(dn.scatter_dims_to_operand_dims)
    return _index_check(eqn, dims, [operand.shape[d] - sizes[d] for d in dims],
                        [operand.shape[d] for d in dims], ins[1], state, table)


def _dynamic_slice_check(eqn, ins, outs, state, table, first_start=1, window=None):
    operand = eqn.inputs[0].aval
    starts = ins[first_start:]
    window = window or eqn.params["slice_sizes"]
    dims = list(range(operand.ndim))
    stacked = lax.concatenate([lax.reshape(lax.convert_element_type(s, np.int32), (1,))
                               for s in starts], 0) if starts else None
    if stacked is None:
        return state
    return _index_check(eqn, dims, [operand.shape[d] - window[d] for d in dims],
                        list(operand.shape), stacked, state, table)


def _dynamic_update_slice_check(eqn, ins, outs, state, table):
    return _dynamic_slice_check(eqn, ins, outs, state, table, first_start=2,
                                window=eqn.inputs[1].aval.shape)


def _div_check(eqn, ins, outs, state, table):
    if "div" not in table.enabled or not dtypes.is_int(eqn.inputs[1].aval.dtype):
        return state
    code = table.site(f"division by zero in {eqn.primitive.name}", _source(eqn))
    divisor = ins[1]
    zero = lax.eq(divisor, np.zeros((), eqn.inputs[1].aval.dtype))
    return fold(state, _any(zero), code)


def _nan_check(eqn, outs, state, table):
    for out, v in zip(outs, eqn.outvars):
        if not dtypes.is_inexact(v.aval.dtype):
            continue
        code = table.site(f"nan generated by primitive: {eqn.primitive.name}", _source(eqn))
        state = fold(state, _any(lax.ne(out, out)), code)
    return state


def _user_check(eqn, ins, outs, state, table):
    if "user" not in table.enabled:
        return state
    pred, fmt_args = ins[0], ins[1:]
    n_args = len(fmt_args)
    if n_args > PAYLOAD:
        raise errors.CheckifyError(f"checkify.check supports at most {PAYLOAD} format "
                                   f"arguments, got {n_args}")
    ints = tuple(i for i, a in enumerate(eqn.inputs[1:]) if not dtypes.is_inexact(a.aval.dtype))
    code = table.site(eqn.params["msg"], _source(eqn), ints)
    failing = lax.bitwise_not(pred)
    values = []
    if pred.ndim:  # batched check: show the values of the first failing element
        flat = lax.reshape(failing, (int(np.prod(pred.shape)),))
        pos = lax.argmax(lax.convert_element_type(flat, np.int32), 0, np.int32)
        for a in fmt_args:
            a = lax.broadcast_in_dim(a, pred.shape, tuple(range(a.ndim))) \
                if a.shape != pred.shape else a
            values.append(lax.dynamic_index_in_dim(lax.reshape(a, flat.shape), pos,
                                                   keepdims=False))
    else:
        values = [a if not getattr(a, "ndim", 0) else lax.reshape(a, (-1,))[0] for a in fmt_args]
    return fold(state, _any(failing), code, values)


CHECKS = {
    "gather": _gather_check,
    "dynamic_slice": _dynamic_slice_check,
    "dynamic_update_slice": _dynamic_update_slice_check,
    "div": _div_check,
    "rem": _div_check,
    **{name: _scatter_check for name in ("scatter", "scatter_add", "scatter_mul", "scatter_min",
                                         "scatter_max")},
}

# moving data around never makes a NaN; a NaN in an input is reported where it was made
_NO_NAN_CHECK = frozenset({
    "reshape", "broadcast_in_dim", "transpose", "slice", "dynamic_slice", "dynamic_update_slice",
    "gather", "scatter", "concatenate", "pad", "select_n", "squeeze", "expand_dims", "rev",
    "convert_element_type", "copy", "check", "callback", "sort", "name", "stop_gradient",
    "reduce_max", "reduce_min", "argmax", "argmin", "while", "scan", "cond", "pjit", "remat",
})


# --- structured primitives: the state is threaded through their sub-programs -------------------

def _pjit_rule(eqn, ins, state, table):
    inner = eqn.params["jaxpr"]
    return eval_checked(inner.jaxpr, inner.consts, ins, state, table)


def _scan_rule(eqn, ins, state, table):
    from yax.primitives.control_flow.scan import scan_p
    p = eqn.params
    body, body_consts = checked_closed(p["jaxpr"], table, p["num_consts"])
    n = len(body_consts)
    outs = bind(scan_p, *body_consts, *ins[:p["num_consts"]], *state, *ins[p["num_consts"]:],
                jaxpr=body, length=p["length"], reverse=p["reverse"],
                num_consts=p["num_consts"] + n, num_carry=p["num_carry"] + 3,
                linear=(False,) * (n + len(ins) + 3), unroll=p["unroll"])
    return list(outs[3:]), list(outs[:3])


def _while_rule(eqn, ins, state, table):
    from yax.primitives.control_flow.while_loop import while_p
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    body, body_consts = checked_closed(p["body_jaxpr"], table, bn)
    cond = p["cond_jaxpr"]
    cond_avals = list(cond.in_avals)

    def cond_fun(*xs):  # the state rides in the carry; the condition ignores it
        return eval_jaxpr(cond.jaxpr, cond.consts, list(xs[:cn]) + list(xs[cn + 3:]))
    cond_j, cond_consts = closure_convert(trace_to_jaxpr(
        cond_fun, cond_avals[:cn] + state_avals() + cond_avals[cn:], name="cond"))
    outs = bind(while_p, *cond_consts, *ins[:cn], *body_consts, *ins[cn:cn + bn], *state,
                *ins[cn + bn:], cond_jaxpr=cond_j, body_jaxpr=body,
                cond_nconsts=cn + len(cond_consts), body_nconsts=bn + len(body_consts))
    return list(outs[3:]), list(outs[:3])


def _cond_rule(eqn, ins, state, table):
    from yax.primitives.control_flow.cond import cond_p, join_branch_consts
    rewritten = []
    for br in eqn.params["branches"]:
        j, consts = checked_closed(br, table, 0)
        rewritten.append(ClosedJaxpr(j.jaxpr, []) if not consts else _reclose(j, consts))
    branches, consts = join_branch_consts(rewritten)
    outs = bind(cond_p, ins[0], *consts, *state, *ins[1:], branches=branches)
    return list(outs[3:]), list(outs[:3])


def _reclose(const_free: ClosedJaxpr, consts) -> ClosedJaxpr:
    j = const_free.jaxpr
    n = len(consts)
    return ClosedJaxpr(Jaxpr(j.invars[:n], j.invars[n:], j.eqns, j.outvars), consts)


# remat is inlined like pjit (checkify's own result is not rematerialised)
_STRUCTURED = {"pjit": _pjit_rule, "remat": _pjit_rule, "scan": _scan_rule, "while": _while_rule,
               "cond": _cond_rule}
