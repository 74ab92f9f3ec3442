"""Functions with user-defined derivatives: `custom_jvp_call`, `custom_vjp_call`, `custom_vjp_lin`.

All three hold a sub-program (a const-free closed jaxpr) that says what they compute; evaluation
and lowering just run it. Their derivative rules call *flat* Python functions prepared by
`yax.transforms.custom_derivatives` (which handles pytrees and checks the user's outputs):

  custom_jvp_call(*consts, *args; call_jaxpr, rule)     jvp: rule.jvp(primals, tangents)
  custom_vjp_call(*consts, *args; call_jaxpr, rule)     jvp: outs, res = rule.fwd(args), then
                                                         tangents_out = custom_vjp_lin(res, t)
  custom_vjp_lin(*res, *tangents; rule, res_tree, ...)  transpose: rule.bwd(res, cts)

`custom_vjp_lin` is linear in its tangents; reverse mode transposes it with the user's `bwd`.
Forward mode (which JAX refuses) evaluates it as the transpose of `bwd`, which is exactly
J @ t when `bwd` is linear in the cotangent as a VJP must be; when `bwd` is not transposable
(e.g. it clips the cotangent by its norm) forward mode differentiates the primal function
instead and warns. Values the custom function closes over must not carry derivatives: the
user's rules cannot see them, so a nonzero tangent there is an error, never a silent zero.
"""

from __future__ import annotations

import collections

import numpy as np

from yax import errors
from yax.config import config
from yax.core.dtypes import is_inexact
from yax.core.primitive import Primitive
from yax.core.trace import Tracer, bind, eager_trace, use_trace
from yax.interpreters import lowering
from yax.interpreters.ad_util import Zero, float0, instantiate, tangent_aval
from yax.interpreters.batching import (
    axis_size_of,
    batch_jaxpr,
    current_axis,
    move_batch_axis,
    vmap_flat,
)
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.rule_cache import cached
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.traced_cache import captures_tracer
from yax.interpreters.transpose import is_undefined, transpose_jaxpr
from yax.primitives.call import run_closed_jaxpr
from yax.runtime.values import aval_of

# --- shared: a primitive that computes its `call_jaxpr` -------------------------------------------

def _call_abstract_eval(*avals, call_jaxpr, **_):
    return list(call_jaxpr.out_avals)


def _call_impl(*arrays, call_jaxpr, **_):
    return run_closed_jaxpr(call_jaxpr, arrays)


def _call_lower(ctx, *args, call_jaxpr, **_):
    return lowering.call_function(ctx.module_ctx, call_jaxpr, "custom_call", list(args))


def is_unknown_tangent(t) -> bool:
    """Whether `t` is an unknown of a linearize (partial evaluation) trace: reverse mode, where
    the linear map of a custom_vjp call is only ever transposed by `bwd`."""
    return isinstance(t, Tracer) and t._trace.is_unknown_tangent(t)


def _check_closure_tangents(tangents, num_consts: int, what: str) -> None:
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise errors.CustomDerivativeError(
            f"{what}: the function closes over a value that is being differentiated; its custom "
            f"rule cannot see that value, so its derivative would be wrong. Pass the value as an "
            f"argument of the custom function instead of capturing it.")


def _tangent_or_float0(t, aval):
    if type(t) is not Zero:
        return t
    if is_inexact(aval.dtype):
        return instantiate(t)
    return np.zeros(aval.shape, float0)


def _all_batched(args, dims, size):
    """Move every operand's batch axis to 0 (broadcasting unbatched ones): the batched rules
    then vmap the user's functions with in_axes=0 everywhere. Broadcasting is transposed to a
    sum, so cotangents of values that were not batched come out right."""
    return [move_batch_axis(a, d, 0, size) for a, d in zip(args, dims, strict=True)]


# --- custom_jvp_call --------------------------------------------------------------------------

class JVPRule:
    """The user's JVP as a flat function `jvp(primals, tangents) -> (primals_out, tangents_out)`
    (hashable by identity, so it can be a primitive param).

    `per_call`: the rule belongs to one call of the custom function (one equation, and the
    copies of it that re-running its jaxpr makes). Then, as in jax, the rule is traced once per
    pattern of nonzero tangents and types and the trace is reused, so differentiating the same
    program again (both passes of a loop's fixed point, a second look at a branch) does not run
    the user's Python again. The traces live as long as the rule, i.e. as the equation.
    `symbolic_zeros`: the rule takes the tangents of undifferentiated inputs as Zero objects
    (`defjvp(..., symbolic_zeros=True)`), not as materialised zeros."""

    def __init__(self, jvp, name: str, per_call: bool = False, symbolic_zeros: bool = False):
        self.jvp, self.name, self.per_call = jvp, name, per_call
        self.symbolic_zeros = symbolic_zeros
        self.traced: dict = {}

    def __repr__(self):
        return f"<jvp rule of {self.name}>"


_MAX_TRACES_PER_RULE = 8


def _custom_jvp_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    _check_closure_tangents(tangents, num_consts, f"custom_jvp {rule.name}")
    args, arg_avals = list(primals[num_consts:]), call_jaxpr.in_avals[num_consts:]
    if rule.per_call:
        nonzero = [type(t) is not Zero and is_inexact(a.dtype)
                   for t, a in zip(tangents[num_consts:], arg_avals, strict=True)]
        traced = _traced_jvp(rule, [aval_of(x) for x in args], nonzero, call_jaxpr.out_avals)
        outs = eval_jaxpr(traced.jaxpr, traced.consts,
                          [*args, *[t for t, nz in zip(tangents[num_consts:], nonzero) if nz]])
        n = len(call_jaxpr.out_avals)
        it = iter(outs[n:])
        return outs[:n], [next(it) if is_inexact(a.dtype) else Zero(tangent_aval(a))
                          for a in call_jaxpr.out_avals]
    ts = list(tangents[num_consts:])
    if not rule.symbolic_zeros:
        ts = [_tangent_or_float0(t, a) for t, a in zip(ts, arg_avals, strict=True)]
    outs, t_outs = rule.jvp(args, ts)
    t_outs = [Zero(tangent_aval(a)) if not is_inexact(a.dtype) else t
              for t, a in zip(t_outs, call_jaxpr.out_avals, strict=True)]
    return outs, t_outs


def _zero_for(rule: JVPRule, aval):
    """The zero tangent a rule receives: symbolic if it asked for symbolic zeros."""
    zero = Zero(tangent_aval(aval))
    return zero if rule.symbolic_zeros else _tangent_or_float0(zero, aval)


def _traced_jvp(rule: JVPRule, arg_avals, nonzero, out_avals):
    """The rule traced from (primals..., nonzero tangents...) to (primals_out..., tangents of
    the inexact outputs...), once per (types, nonzero pattern) for a per-call rule."""
    key = (tuple(arg_avals), tuple(nonzero), config.enable_x64)
    hit = rule.traced.get(key)
    if hit is not None:
        return hit

    def fun(*xs):
        n = len(arg_avals)
        it = iter(xs[n:])
        ts = [next(it) if nz else _zero_for(rule, a)
              for a, nz in zip(arg_avals, nonzero, strict=True)]
        outs, t_outs = rule.jvp(list(xs[:n]), ts)
        return [*outs, *[instantiate(t) for t, a in zip(t_outs, out_avals, strict=True)
                         if is_inexact(a.dtype)]]
    t_avals = [tangent_aval(a) for a, nz in zip(arg_avals, nonzero) if nz]
    traced = trace_to_jaxpr(fun, [*arg_avals, *t_avals], name="custom_jvp_rule")
    if not captures_tracer(traced) and len(rule.traced) < _MAX_TRACES_PER_RULE:
        traced = rule.traced.setdefault(key, traced)  # two threads: the first stored wins
    return traced


def _batched_call(call_jaxpr, size):
    """`call_jaxpr` batched along axis 0 of every input and output: (const-free jaxpr, consts)."""
    n_in, n_out = len(call_jaxpr.in_avals), len(call_jaxpr.out_avals)
    axis_name = current_axis().axis_name  # collectives inside name it
    return cached(("custom_call_batch", call_jaxpr, size, axis_name),
                  lambda: closure_convert(batch_jaxpr(call_jaxpr, size, [0] * n_in,
                                                      [0] * n_out, axis_name=axis_name)[0]),
                  lambda v: v[1])


def _custom_call_batcher(primitive, batch_rule):
    """Batching of custom_jvp_call/custom_vjp_call: every operand batched along axis 0, the
    primal program batched, and the user's rules vmapped by `batch_rule(rule, size, n_out)`."""
    def batch(args, dims, *, call_jaxpr, rule, num_consts):
        size = axis_size_of(args, dims)
        args = _all_batched(args, dims, size)
        batched, consts = _batched_call(call_jaxpr, size)
        outs = bind(primitive, *consts, *args, call_jaxpr=batched,
                    rule=batch_rule(rule, size, len(call_jaxpr.out_avals)),
                    num_consts=len(consts) + num_consts)
        return outs, [0] * len(outs)
    return batch


def _batched_jvp_rule(rule: JVPRule, size: int, n_out: int) -> JVPRule:
    def make():
        def batched_jvp(primals, tangents):
            n = len(primals)
            # symbolic zeros stay symbolic: only the other tangents are vmapped, and the rule
            # sees each zero with the per-example type
            zeros = {i: Zero(t.aval.update(shape=t.aval.shape[1:]))
                     for i, t in enumerate(tangents) if type(t) is Zero}
            live = [t for t in tangents if type(t) is not Zero]

            def flat(*xs):
                it = iter(xs[n:])
                ts = [zeros[i] if i in zeros else next(it) for i in range(n)]
                p, t = rule.jvp(list(xs[:n]), ts)
                return [*p, *[instantiate(x) for x in t]]
            outs, out_dims = vmap_flat(flat, [*primals, *live], [0] * (n + len(live)), size)
            outs = [move_batch_axis(o, d, 0, size) for o, d in zip(outs, out_dims)]
            return outs[:n_out], outs[n_out:]
        return JVPRule(batched_jvp, f"vmap({rule.name})", symbolic_zeros=rule.symbolic_zeros)
    return cached(("custom_jvp_rule_batch", rule, size), make, lambda v: [])


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True,
                              abstract_eval=_call_abstract_eval, impl=_call_impl,
                              lower=_call_lower, jvp=_custom_jvp_jvp)
# the batcher binds the primitive it is made for
custom_jvp_call_p.define(batch=_custom_call_batcher(custom_jvp_call_p, _batched_jvp_rule))


# --- custom_vjp_call --------------------------------------------------------------------------

class VJPRule:
    """The user's fwd/bwd as flat functions:
      fwd(args, perturbed) -> (outs, residuals, res_tree); `perturbed`: per argument, whether
        it is being differentiated
      bwd(res_tree, residuals, cts) -> one cotangent (or None for zero) per argument
    `call_jaxpr` is the primal program (const-free, consts leading, `num_consts` of them).
    `symbolic_zeros` (`defvjp(..., symbolic_zeros=True)`): bwd takes zero cotangents as Zero
    objects, not materialised (only where they are known zero: traced bwds get arrays)."""

    def __init__(self, fwd, bwd, name: str, symbolic_zeros: bool = False):
        self.fwd, self.bwd, self.name = fwd, bwd, name
        self.symbolic_zeros = symbolic_zeros
        self.per_call = False  # as JVPRule's; not used by the rules of custom_vjp yet

    def __repr__(self):
        return f"<fwd/bwd rules of {self.name}>"


def _custom_vjp_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    _check_closure_tangents(tangents, num_consts, f"custom_vjp {rule.name}")
    consts, args = primals[:num_consts], list(primals[num_consts:])
    arg_avals = call_jaxpr.in_avals[num_consts:]
    diff = tuple(is_inexact(a.dtype) for a in arg_avals)
    perturbed = [d and type(t) is not Zero for t, d in zip(tangents[num_consts:], diff)]
    outs, res, res_tree = rule.fwd(args, perturbed)
    ts = [instantiate(t) for t, d in zip(tangents[num_consts:], diff, strict=True) if d]
    if not any(type(t) is not Zero for t, d in zip(tangents[num_consts:], diff) if d):
        return outs, [Zero(tangent_aval(a)) for a in call_jaxpr.out_avals]
    live = [t for t in ts if type(t) is not Zero]
    # reverse mode only transposes the linear map (with bwd). Otherwise ("auto") how to run it
    # forwards is decided when it is run forwards, so that bwd is not probed (run) where the map
    # only gets transposed later (a staged body under grad), and bwd runs when jax runs it
    mode = "transpose" if all(is_unknown_tangent(t) for t in live) else "auto"
    primal_operands = [*consts, *args] if _has_primals(mode) else []
    t_outs = bind(custom_vjp_lin_p, *primal_operands, *res, *ts, rule=rule, res_tree=res_tree,
                  call_jaxpr=call_jaxpr, num_consts=num_consts, num_res=len(res), diff=diff,
                  mode=mode)
    it = iter(t_outs)
    return outs, [next(it) if is_inexact(a.dtype) else Zero(tangent_aval(a))
                  for a in call_jaxpr.out_avals]




def _batched_vjp_rule(rule: VJPRule, size: int, n_out: int) -> VJPRule:
    """fwd and bwd vmapped over axis 0 of everything they take and return (cached per rule, so
    repeated applications reuse the same rule object and hit the compile caches)."""
    return cached(("custom_vjp_rule_batch", rule, size),
                  lambda: _make_batched_vjp_rule(rule, size, n_out), lambda v: [])


def _make_batched_vjp_rule(rule: VJPRule, size: int, n_out: int) -> VJPRule:
    box = {}

    def fwd(args, perturbed):
        def flat(*xs):
            outs, res, res_tree = rule.fwd(list(xs), perturbed)
            box["res_tree"] = res_tree
            return [*outs, *res]
        outs, out_dims = vmap_flat(flat, list(args), [0] * len(args), size)
        outs = [move_batch_axis(o, d, 0, size) for o, d in zip(outs, out_dims)]
        return outs[:n_out], outs[n_out:], ("batched", box["res_tree"])

    def bwd(res_tree, res, cts):
        inner_tree = res_tree[1]
        n_in = [None]
        # zero cotangents (symbolic-zeros rules) stay symbolic, with the per-example type
        zeros = {i: Zero(c.aval.update(shape=c.aval.shape[1:]))
                 for i, c in enumerate(cts) if type(c) is Zero}
        live = [c for c in cts if type(c) is not Zero]

        def flat(*xs):
            it = iter(xs[len(res):])
            inner_cts = [zeros[i] if i in zeros else next(it) for i in range(len(cts))]
            cts_in = rule.bwd(inner_tree, list(xs[:len(res)]), inner_cts)
            n_in[0] = [c is not None for c in cts_in]
            return [c for c in cts_in if c is not None]
        outs, out_dims = vmap_flat(flat, [*res, *live], [0] * (len(res) + len(live)), size)
        it = iter(move_batch_axis(o, d, 0, size) for o, d in zip(outs, out_dims))
        return [next(it) if present else None for present in n_in[0]]
    return VJPRule(fwd, bwd, f"vmap({rule.name})", symbolic_zeros=rule.symbolic_zeros)


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True,
                              abstract_eval=_call_abstract_eval, impl=_call_impl,
                              lower=_call_lower, jvp=_custom_vjp_jvp)
custom_vjp_call_p.define(batch=_custom_call_batcher(custom_vjp_call_p, _batched_vjp_rule))
# differentiating it runs the user's fwd: eager grad's tape differentiates a program holding it
# at once, as it does a call of the custom function (staging.has_effects(eqn, this name))
custom_vjp_call_p.runs_user_fwd = lambda params: True


# --- custom_vjp_lin: the linear map whose transpose is the user's bwd -------------------------

def _has_primals(mode: str) -> bool:
    """Whether a custom_vjp_lin application takes the primal operands ("primal": its forward
    map differentiates the function; "auto": undecided until it runs forwards)."""
    return mode in ("primal", "auto")


def _lin_split(operands, *, num_consts, call_jaxpr, num_res, mode):
    n_primal = len(call_jaxpr.in_avals) if _has_primals(mode) else 0
    return (operands[:n_primal], operands[n_primal:n_primal + num_res],
            operands[n_primal + num_res:])


def _lin_abstract_eval(*avals, call_jaxpr, **_):
    return [tangent_aval(a) for a in call_jaxpr.out_avals if is_inexact(a.dtype)]


def _full_cts(cts, call_jaxpr, keep_zeros: bool = False):
    """Cotangents for every output (float0 zeros for the non-differentiable ones); with
    `keep_zeros` (a symbolic-zeros bwd) every zero stays a Zero object."""
    it, full = iter(cts), []
    for a in call_jaxpr.out_avals:
        if is_inexact(a.dtype):
            c = next(it)
            full.append(instantiate(c) if type(c) is Zero and not keep_zeros else c)
        else:
            full.append(Zero(tangent_aval(a)) if keep_zeros else np.zeros(a.shape, float0))
    return full


def _lin_transpose(cts, *operands, rule, res_tree, call_jaxpr, num_consts, num_res, diff, mode):
    primals, res, tangents = _lin_split(operands, num_consts=num_consts, call_jaxpr=call_jaxpr,
                                        num_res=num_res, mode=mode)
    assert not any(is_undefined(r) for r in res), "custom_vjp residuals must be known"
    probed = _probed_bwds.get((rule, res_tree, tuple(aval_of(r) for r in res)))
    if probed is not None:  # bwd was already traced (to test its linearity): not called again
        diff_cts = eval_jaxpr(probed.jaxpr, probed.consts,
                              [*res, *[instantiate(c) if type(c) is Zero else c for c in cts]])
    else:
        cts_in = rule.bwd(res_tree, list(res), _full_cts(cts, call_jaxpr, rule.symbolic_zeros))
        diff_cts = [c for c, d in zip(cts_in, diff, strict=True) if d]
    out_ct = [ct if is_undefined(t) else None for ct, t in zip(diff_cts, tangents, strict=True)]
    return [None] * (len(primals) + len(res)) + out_ct


def _forward_jaxpr(operand_avals, *, rule, res_tree, call_jaxpr, num_consts, num_res, diff, mode):
    """The forward (tangent-in -> tangent-out) program of a custom_vjp_lin application."""
    def make():
        if mode == "transpose":
            try:
                return _transposed_bwd(rule, res_tree, operand_avals[:num_res], call_jaxpr,
                                       diff)
            except (errors.NotImplementedRuleError, ValueError, TypeError, AssertionError) as e:
                raise errors.CustomDerivativeError(
                    f"forward evaluation of the linearized custom_vjp function {rule.name}: its "
                    f"bwd is not linear in the cotangent, so it has no forward map (JAX refuses "
                    f"forward mode of custom_vjp functions altogether). Use yax.jvp directly, "
                    f"which differentiates the function instead, or a linear bwd.") from e
        return _primal_jvp(call_jaxpr, num_consts, diff)
    return cached(("custom_vjp_forward", rule, res_tree, tuple(operand_avals), mode), make,
                  lambda v: v.consts)


def _bwd_jaxpr(rule, res_tree, res_avals, call_jaxpr, diff):
    """bwd traced with (residuals..., cotangents of the differentiable outputs...) as inputs and
    the differentiable arguments' cotangents (zeros where bwd returned None) as outputs."""
    arg_avals = call_jaxpr.in_avals[len(call_jaxpr.in_avals) - len(diff):]
    ct_avals = [tangent_aval(a) for a in call_jaxpr.out_avals if is_inexact(a.dtype)]
    n_res = len(res_avals)

    def fun(*xs):
        cts_in = rule.bwd(res_tree, list(xs[:n_res]),
                          _full_cts(xs[n_res:], call_jaxpr, rule.symbolic_zeros))
        return [instantiate(Zero(tangent_aval(a))) if c is None else c
                for c, a, d in zip(cts_in, arg_avals, diff, strict=True) if d]
    return trace_to_jaxpr(fun, [*res_avals, *ct_avals], name="custom_vjp_bwd")


_probed_bwds: collections.OrderedDict = collections.OrderedDict()  # bwd traced once per types


def _transposed_bwd(rule, res_tree, res_avals, call_jaxpr, diff):
    key = (rule, res_tree, tuple(res_avals))
    bwd = _probed_bwds.get(key)
    if bwd is None:
        bwd = _bwd_jaxpr(rule, res_tree, res_avals, call_jaxpr, diff)
        if not captures_tracer(bwd):
            _probed_bwds[key] = bwd
            if len(_probed_bwds) > 256:
                _probed_bwds.popitem(last=False)
    n_res = len(res_avals)
    mask = [False] * n_res + [True] * (len(bwd.in_avals) - n_res)
    return transpose_jaxpr(bwd, mask)


def _primal_jvp(call_jaxpr, num_consts, diff):
    n_in = len(call_jaxpr.in_avals)

    def fun(*xs):
        primals, it = list(xs[:n_in]), iter(xs[n_in:])
        tangents = [Zero(tangent_aval(a)) if i < num_consts or not diff[i - num_consts]
                    else next(it) for i, a in enumerate(call_jaxpr.in_avals)]
        _, t_out = jvp_flat(lambda *p: eval_jaxpr(call_jaxpr.jaxpr, [], p), primals, tangents)
        return [instantiate(t) for t, a in zip(t_out, call_jaxpr.out_avals) if is_inexact(a.dtype)]
    t_avals = [tangent_aval(a) for a, d in zip(call_jaxpr.in_avals[num_consts:], diff) if d]
    return trace_to_jaxpr(fun, [*call_jaxpr.in_avals, *t_avals], name="custom_vjp_primal_jvp")


def _forward_mode(rule, res_tree, res_avals, call_jaxpr, diff) -> str:
    """'transpose' when bwd transposes (it is linear in the cotangent), else 'primal'."""
    def make():
        try:
            _transposed_bwd(rule, res_tree, res_avals, call_jaxpr, diff)
            return "transpose"
        except (errors.NotImplementedRuleError, ValueError, TypeError, AssertionError):
            return "primal"
    return cached(("custom_vjp_mode", rule, res_tree, tuple(res_avals)), make, lambda v: [])


def _warn_if_primal(rule, mode) -> None:
    if mode == "primal":
        errors.warn_at_user_line(
            f"forward-mode differentiation (jvp/jacfwd) of custom_vjp function {rule.name}: its "
            f"bwd is not linear in the cotangent (e.g. it clips or normalises it), so there is no "
            f"forward rule to derive from it; differentiating the primal function instead. "
            f"Reverse mode (grad/vjp) still uses bwd.", errors.CustomVJPForwardModeWarning)


def _forward_operands(operands, params, aval=aval_of):
    """(operands of the forward program, params with the mode decided)."""
    primals, res, tangents = _lin_split(operands, num_consts=params["num_consts"],
                                        call_jaxpr=params["call_jaxpr"],
                                        num_res=params["num_res"], mode=params["mode"])
    if params["mode"] == "auto":
        mode = _forward_mode(params["rule"], params["res_tree"], [aval(r) for r in res],
                             params["call_jaxpr"], params["diff"])
        params = {**params, "mode": mode}
    return ([*primals, *tangents] if params["mode"] == "primal" else [*res, *tangents]), params


def _lin_eval(operands, params):
    """Forward evaluation: run the forward program under the current trace."""
    ops, params = _forward_operands(list(operands), params)
    fwd = _forward_jaxpr([aval_of(o) for o in ops], **params)
    _warn_if_primal(params["rule"], params["mode"])
    return eval_jaxpr(fwd.jaxpr, fwd.consts, ops)


def _lin_impl(*arrays, **params):
    with use_trace(eager_trace()):
        return _lin_eval(arrays, params)


def _lin_lower(ctx, *args, **params):
    ops, params = _forward_operands(list(zip(args, ctx.avals_in)), params, lambda r: r[1])
    fwd = _forward_jaxpr([a for _, a in ops], **params)
    _warn_if_primal(params["rule"], params["mode"])
    return lowering.call_function(ctx.module_ctx, fwd, "custom_vjp_forward", [v for v, _ in ops])


def _lin_jvp(primals, tangents, **params):
    outs, t_outs = jvp_flat(lambda *xs: _lin_eval(xs, params), list(primals), list(tangents))
    return outs, t_outs


def _lin_batch(args, dims, *, rule, res_tree, call_jaxpr, num_consts, num_res, diff, mode):
    """Batched with a vmapped bwd, so the result still transposes with the user's rule."""
    size = axis_size_of(args, dims)
    args = _all_batched(args, dims, size)
    n_out = len(call_jaxpr.out_avals)
    batched, consts = _batched_call(call_jaxpr, size)
    primals = args[:len(call_jaxpr.in_avals)] if _has_primals(mode) else []
    rest = args[len(primals):]
    outs = bind(custom_vjp_lin_p, *([*consts, *primals] if _has_primals(mode) else []), *rest,
                rule=_batched_vjp_rule(rule, size, n_out), res_tree=("batched", res_tree),
                call_jaxpr=batched, num_consts=num_consts + len(consts), num_res=num_res,
                diff=diff, mode=mode)
    return outs, [0] * len(outs)


def _lin_partial_eval(trace, args, params):
    """Staged with unknown tangents, the map is only ever transposed (by bwd) or run forwards as
    the transpose of bwd (as `linearize` does): an undecided mode becomes "transpose", and the
    primal operands it kept for the other way are dropped (not saved as residuals)."""
    if params["mode"] != "auto":
        return trace.stage(custom_vjp_lin_p, args, params)
    _, res, tangents = _lin_split(list(args), num_consts=params["num_consts"],
                                  call_jaxpr=params["call_jaxpr"], num_res=params["num_res"],
                                  mode="auto")
    return trace.stage(custom_vjp_lin_p, [*res, *tangents], {**params, "mode": "transpose"})


custom_vjp_lin_p = Primitive("custom_vjp_lin", multiple_results=True,
                             abstract_eval=_lin_abstract_eval, impl=_lin_impl, lower=_lin_lower,
                             jvp=_lin_jvp, transpose=_lin_transpose, batch=_lin_batch,
                             partial_eval=_lin_partial_eval)
# a symbolic-zeros bwd sees unused outputs' cotangents as zeros (_lin_transpose materialises
# them for the other rules)
custom_vjp_lin_p.takes_zero_cotangents = True
