"""yax.lax.while_loop: a loop whose trip count is decided at run time, over pytrees; and
yax.lax.fori_loop, which is a scan when its bounds are static and a while_loop otherwise."""

from __future__ import annotations

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.trace import Tracer, bind, current_trace
from yax.errors import LoopBoundsError, WhileLoopBodyError, WhileLoopPredicateError  # noqa: F401  (re-exported)
from yax.interpreters import ref_state
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.traced_cache import trace_cached
from yax.lax._refs import ref_operands, stale, write_back, written_ids
from yax.lax._util import describe_function as _describe
from yax.lax._util import python_scalar_as
from yax.lax.collectives import check_loop_carry_vma
from yax.lax.elementwise import _convert_keep_weak, lt, select
from yax.lax.elementwise import add as lax_add
from yax.lax.scan import scan
from yax.primitives.control_flow.while_loop import while_p
from yax.runtime.values import as_operand
from yax.runtime.values import aval_of as _aval

__all__ = ["while_loop", "fori_loop"]


def while_loop(cond_fun, body_fun, init_val, *, max_steps: int | None = None):
    """Run `body_fun` on the carry while `cond_fun(carry)` is True; return the final carry.

    Same meaning as the Python loop below, but staged into one program (no unrolling). `init_val`
    is a pytree; `body_fun` must return the same structure with the same shapes and dtypes, and
    `cond_fun` a boolean scalar. Forward-mode derivatives and vmap work; reverse mode does not
    (the trip count is unknown): use `fori_loop` with static bounds or `scan` for grad.

        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val

    With a static `max_steps=N` (beyond JAX), the loop runs at most N iterations and becomes
    reverse-differentiable: it is staged as an N-step `scan` whose steps after the condition
    first fails leave the carry unchanged (the body still runs and its result is masked), so
    `grad` works with the memory of N steps of residuals. If the condition still holds after N
    steps the loop stops there.
    """
    if max_steps is not None:
        return _bounded_while(cond_fun, body_fun, init_val, max_steps)
    leaves, tree = tree_util.tree_flatten(init_val)
    init = [as_operand(x) for x in leaves]
    body, bconsts, init, (brefs, written) = _body_jaxpr(body_fun, tree, init)
    body_written = [written]
    avals = [_aval(x) for x in init]
    cond, cconsts, (crefs, _) = _cond_jaxpr(cond_fun, tree, avals)
    refs = ref_state.union_of([brefs, crefs])
    if refs:  # Refs closed over: carried after the carry, by the body and the cond alike
        if brefs != refs:
            body, bconsts, init, (_, body_written[0]) = _body_jaxpr(body_fun, tree, init, refs)
        if crefs != refs:
            cond, cconsts, _ = _cond_jaxpr(cond_fun, tree, avals, refs)
    n_carry = len(init)
    check_loop_carry_vma("lax.while_loop", body.in_avals[len(bconsts):len(bconsts) + n_carry],
                         body.out_avals[:n_carry])
    outs = bind(while_p, *cconsts, *bconsts, *init, *ref_operands(refs), cond_jaxpr=cond,
                body_jaxpr=body, cond_nconsts=len(cconsts), body_nconsts=len(bconsts))
    write_back(refs, outs[len(init):], body_written[0])
    return tree_util.tree_unflatten(tree, outs[:len(init)])


def _bounded_while(cond_fun, body_fun, init_val, max_steps):
    """`while_loop` with at most `max_steps` iterations, as a masked scan (reverse-mode ready)."""
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 0:
        raise errors.YaxError(f"while_loop max_steps must be a static non-negative Python int, "
                              f"got {max_steps!r}")
    def step(val, _):
        keep_going = cond_fun(val)
        new = body_fun(val)
        return tree_util.tree_map(lambda n, o: select(keep_going, n, o), new, val), None

    final, _ = scan(step, init_val, None, length=max_steps)
    return final


# --- tracing, once per (function, carry types) so eager loops do not retrace -----------------

def _traced(fun, kind: str, tree, avals, trace, refs=()):
    """`trace()` -> (closed jaxpr, Refs it captured), made const-free: (jaxpr, consts, Refs),
    see traced_cache. `refs`: the Refs the traced function takes as inputs after the carry."""
    key = (tree, tuple(avals), tuple(id(r) for r in refs))
    hit = trace_cached(f"while {kind}", fun, key, trace, closure_converted=True)
    if stale(hit[2][0]):  # it closed over a Ref of a transformation that has finished
        hit = trace_cached(f"while {kind}", fun, key, trace, closure_converted=True,
                           cacheable=False)
    return hit


def _cond_jaxpr(cond_fun, tree, avals, refs=()):
    box = []

    def trace():
        closed = trace_to_jaxpr(_flat_cond(cond_fun, tree, refs, box), avals, name="while_cond")
        return closed, box[0]
    return _traced(cond_fun, "cond", tree, avals, trace, refs)


def _flat_cond(cond_fun, tree, refs, box):
    def flat(*xs):
        ref_state.enter_body(refs)
        out = cond_fun(tree_util.tree_unflatten(tree, xs))
        captured, _ = ref_state.captured_values(current_trace())
        if ref_state.written(current_trace()):
            raise errors.EffectInWhileCondError(
                f"while_loop: cond_fun {_describe(cond_fun)} writes a Ref; the condition may "
                f"only read Refs (write them in body_fun)")
        box.append((captured, frozenset()))
        leaves = tree_util.tree_leaves(out)
        aval = _aval(as_operand(leaves[0])) if len(leaves) == 1 else None
        if aval is None or aval.shape != () or aval.dtype != dtypes.bool_:
            got = ("a pytree of " + ", ".join(_aval(as_operand(x)).str_short() for x in leaves)
                   if aval is None else aval.str_short())
            raise WhileLoopPredicateError(
                f"while_loop: cond_fun {_describe(cond_fun)} must return a boolean scalar "
                f"(bool[]), but returned {got}. Compare to get a predicate (e.g. `x < 10`, "
                f"`jnp.all(err > tol)`; reduce an array with jnp.any/jnp.all).")
        return [leaves[0]]
    return flat


def _body_jaxpr(body_fun, tree, init, refs=()):
    """Trace the body; a weakly typed init that the body turns strong (a Python float carry
    updated with an f32 array) is promoted to the body's type and traced again, as JAX does.
    Returns (body, consts, init, the Refs it closes over: carried after the carry)."""
    for _ in range(3):
        avals = [_aval(x) for x in init]
        promote: dict = {}
        box = []

        def trace():
            flat = _flat_body(body_fun, tree, avals, promote, refs, box)
            return trace_to_jaxpr(flat, avals, name="while_body"), box[0]
        body, consts, (captured, written) = _traced(body_fun, "body", tree, avals, trace, refs)
        if body.out_avals[:len(avals)] == avals or not promote:
            return body, consts, init, (captured, written)
        init = [_convert_keep_weak(x, *promote[i]) if i in promote else x
                for i, x in enumerate(init)]
    raise AssertionError("while_loop: carry types did not settle")  # promotion is monotone


def _flat_body(body_fun, tree, avals, promote, refs, box):
    def flat(*xs):
        ref_state.enter_body(refs)
        out = body_fun(tree_util.tree_unflatten(tree, xs))
        leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise WhileLoopBodyError(
                f"while_loop: body_fun {_describe(body_fun)} must return the carry's structure "
                f"{tree} but returned {out_tree}. Return a value of the same structure as "
                f"init_val.")
        captured, values = ref_state.captured_values(current_trace())
        box.append((captured, written_ids()))
        return [_fit(as_operand(o), a, i, body_fun, promote)
                for i, (o, a) in enumerate(zip(leaves, avals))] + values
    return flat


def _fit(out, carry, i: int, body_fun, promote: dict):
    """The body's output as the carry's type; weak types adapt (JAX's rules), others must match."""
    got = _aval(out)
    if got.shape == carry.shape:
        if got.dtype == carry.dtype and got.weak_type == carry.weak_type:
            return out
        joined = dtypes.result_type((carry.dtype, carry.weak_type), (got.dtype, got.weak_type))
        if got.weak_type and joined == (carry.dtype, carry.weak_type):
            # a weakly typed output (Python scalar arithmetic) takes the carry's type
            return _convert_keep_weak(out, carry.dtype, carry.weak_type)
        if carry.weak_type and joined == (got.dtype, got.weak_type):
            promote[i] = joined  # weak init: the loop's carry takes the body's type
            return out
    raise WhileLoopBodyError(
        f"while_loop: body_fun {_describe(body_fun)} returned {got.str_short()} for carry leaf "
        f"{i}, which enters the loop as {carry.str_short()} (dtype {got.dtype.name} vs "
        f"{carry.dtype.name}, shape {got.shape} vs {carry.shape}); shapes and dtypes must match "
        f"exactly. A common cause is a Python scalar init (weakly typed) meeting a value of "
        f"another dtype: give init_val the dtype you mean (e.g. jnp.float32(0.0) or "
        f"jnp.zeros(shape, dtype)), or cast in the body with lax.convert_element_type.")


# --- fori_loop: a scan with static bounds, a while_loop with traced ones ----------------------

def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`; returns `val`.

    With concrete integer bounds this is a scan of upper - lower steps (differentiable in
    reverse mode); with traced bounds it is a `while_loop` (forward mode and vmap only).
    `unroll` is the scan's (an int: steps per loop iteration; True: the whole loop); as in JAX
    it needs concrete bounds (None, False and 1 ask for nothing and are always accepted).
    """
    if unroll is not None and not isinstance(unroll, bool) and (
            not isinstance(unroll, (int, np.integer)) or unroll < 0):
        raise ValueError(f"fori_loop: unroll must be a bool or a non-negative int, got "
                         f"{unroll!r}")
    lo, hi = _concrete_bound(lower), _concrete_bound(upper)
    if lo is None or hi is None:
        if not (unroll is None or unroll is False or unroll == 1):
            raise ValueError(
                f"fori_loop: unroll={unroll!r} needs loop bounds known at trace time, and "
                f"these are traced; pass Python ints (or concrete arrays) as bounds, or drop "
                f"unroll")
        return _fori_while(lower, upper, body_fun, init_val)
    idx_dtype = _index_dtype(lower, upper)

    def step(carry, _):
        i, val = carry
        return (lax_add(i, 1), body_fun(i, val)), None

    # as JAX: the scan counts from the Python int `lo` (a weak literal of the default int type,
    # whatever the bounds' types), so a staged scan shows `0:i32[]` as its first operand
    del idx_dtype
    start = TypedScalar(lo, dtypes.canonicalize(dtypes.default_int()), True)
    length = max(hi - lo, 0)
    steps = max(length, 1) if unroll is True else max(int(unroll or 1), 1)
    (_, val), _ = scan(step, (start, init_val), None, length=length, unroll=steps)
    return val


def _concrete_bound(x):
    """The bound as a Python int, or None when it is only known at run time."""
    if isinstance(x, Tracer):
        x = x.to_concrete_or_none()
        if x is None:
            return None
    aval = getattr(x, "aval", None)
    dt = aval.dtype if aval is not None else np.result_type(x)
    if isinstance(x, (bool, np.bool_)) or not dtypes.is_int(dt) or np.ndim(x) != 0:
        raise LoopBoundsError(f"fori_loop: bounds must be integer scalars, got {x!r}; use "
                              f"Python ints (or integer arrays) for lower and upper")
    return int(np.asarray(x))


def _index_dtype(lower, upper):
    """The loop index takes the bounds' integer type (Python ints: the default int)."""
    for b in (lower, upper):
        aval = getattr(b, "aval", None)
        if aval is not None:
            return np.dtype(aval.dtype)
        if isinstance(b, (np.integer, np.ndarray)):
            return dtypes.canonicalize(np.asarray(b).dtype)
    return dtypes.canonicalize(dtypes.default_int())


def _fori_while(lower, upper, body_fun, init_val):
    """Traced bounds: the trip count is unknown until run time, so loop with while_loop."""
    for b in (lower, upper):
        if not dtypes.is_int(_aval(as_operand(b)).dtype):
            raise LoopBoundsError(f"fori_loop: bounds must be integers, got {_aval(b).str_short()}")
    dt = _index_dtype(lower, upper)
    lower, upper = [python_scalar_as(b, dt, "fori_loop") if dtypes.is_python_scalar(b)
                    else as_operand(b) for b in (lower, upper)]

    # as JAX: the upper bound rides in the carry (not a constant of the condition)
    def cond(carry):
        return lt(carry[0], carry[1])

    def body(carry):
        i, hi, val = carry
        return lax_add(i, 1), hi, body_fun(i, val)

    return while_loop(cond, body, (lower, upper, init_val))[2]
