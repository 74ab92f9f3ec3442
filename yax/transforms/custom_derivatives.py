"""`custom_jvp` and `custom_vjp`: functions whose derivatives the user supplies.

    @yax.custom_jvp
    def f(x): ...
    @f.defjvp
    def f_jvp(primals, tangents): return f(*primals), tangent_out

    @yax.custom_vjp
    def g(x): ...
    def g_fwd(x): return g(x), residuals
    def g_bwd(residuals, ct): return (ct_x,)
    g.defvjp(g_fwd, g_bwd)

Called with no transformation active, the function just runs. Under one, it is traced to a
jaxpr (what it computes) and bound as a `custom_jvp_call`/`custom_vjp_call` primitive whose rules
call the user's functions through the flat wrappers built here, which also check what the user's
rules return. `nondiff_argnums` arguments are passed to the rules first (as in JAX) and get no
derivative; they are usually functions or other static values.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import weakref

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import TypedScalar, aval_of_value
from yax.core.trace import Tracer, bind, current_trace, is_eager, use_trace
from yax.interpreters.ad_util import Zero, float0, instantiate, tangent_aval
from yax.interpreters.jvp import JVPTracer
from yax.interpreters.ref_state import Ref
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.traced_cache import trace_cached
from yax.lax._util import describe_function
from yax.lax.elementwise import convert_element_type
from yax.primitives.custom_derivatives import (
    JVPRule,
    VJPRule,
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vjp_lin_p,
    is_unknown_tangent,
)
from yax.runtime.values import as_operand, canonical_leaf, to_array
from yax.transforms import custom_vjp_refs
from yax.transforms._args import normalize_argnums
from yax.transforms.symbolic_zeros import CustomVJPPrimal, SymbolicZero, from_user, to_user

__all__ = ["custom_jvp", "custom_vjp", "CustomVJPPrimal", "SymbolicZero"]

_rules_ids = itertools.count()  # one per (function, rules): traces made with old rules go unused


class _CustomFunction:
    """What custom_jvp and custom_vjp share: argument splitting, tracing, caching."""

    kind = "custom function"

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._signature = _signature_or_none(fun)
        self.nondiff_argnums = normalize_argnums(nondiff_argnums)
        names = (nondiff_argnames,) if isinstance(nondiff_argnames, str) else \
            tuple(nondiff_argnames)
        if names:  # the rules receive the nondiff arguments in position order
            self.nondiff_argnums = tuple(sorted(set(self.nondiff_argnums)
                                                | set(self._positions_of(names))))
        self._rules_changed()

    def _positions_of(self, names: tuple) -> tuple[int, ...]:
        """`nondiff_argnames` as positions (JAX's meaning: the same as listing them in
        nondiff_argnums; keyword arguments are bound to their positions at each call)."""
        if not names:
            return ()
        if self._signature is None:
            raise TypeError(f"{self.kind} {self._name}: nondiff_argnames needs a function with "
                            f"an inspectable signature; use nondiff_argnums")
        params = list(self._signature.parameters)
        missing = [n for n in names if n not in params]
        if missing:
            raise ValueError(f"{self.kind} {self._name}: nondiff_argnames {missing} are not "
                             f"parameters of the function (it has {params})")
        return tuple(params.index(n) for n in names)

    @property
    def _name(self) -> str:
        return describe_function(self.fun)

    def _positional(self, args, kwargs) -> tuple:
        if not kwargs:
            return args
        if self._signature is None:
            raise TypeError(f"{self.kind} {self._name}: keyword arguments need a function "
                            f"with an inspectable signature; pass them positionally")
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args

    def _split(self, args):
        nondiff = tuple(i % len(args) for i in self.nondiff_argnums if -len(args) <= i < len(args))
        static = tuple((i, args[i]) for i in nondiff)
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        return static, diff_args

    def _merge(self, static, diff_args):
        full, it = [], iter(diff_args)
        positions = dict(static)
        for i in range(len(static) + len(diff_args)):
            full.append(positions[i] if i in positions else next(it))
        return full

    def __call__(self, *args, **kwargs):
        args = self._positional(args, kwargs)
        self._check_defined()
        owner = _owning_trace(tree_util.tree_leaves(args))
        if is_eager(owner):  # no transformation sees the arguments: run on values
            if is_eager():
                return self.fun(*args)
            try:
                with use_trace(owner):
                    return self.fun(*args)
            except errors.UnexpectedTracerError as err:
                _reraise_if_leaked(err)
                return self.bind_call(args)  # it closes over a traced value: stage it
        return self._process_call(owner, args)

    # the trace protocol (core/trace.py): what a trace calls back

    def bind_call(self, args, reuse: bool = True):
        """Trace the function to a jaxpr and bind the call primitive (whose rules run the
        user's rules when the program is transformed). `reuse`: a traced jaxpr may be reused
        (not under jit, which traces the function anew each time it traces)."""
        static, diff_args = self._split(args)
        leaves, in_tree = tree_util.tree_flatten(diff_args)
        leaves = [canonical_leaf(x) for x in leaves]
        avals = tuple(aval_of_value(x) for x in leaves)
        entry = self._traced(static, in_tree, avals, reuse)
        call_jaxpr, consts, out_tree, rule = entry
        outs = bind(self._primitive, *consts, *leaves, call_jaxpr=call_jaxpr, rule=rule,
                    num_consts=len(consts))
        return tree_util.tree_unflatten(out_tree, outs)

    def differentiate_now(self, trace, args):
        """Under the JVP trace `trace`: run the user's rule at once, one level below it (with
        concrete primal values under plain grad/jvp); the general path (`bind_call`) when the
        rule does not apply or the function closes over a traced value."""
        try:
            out = self._differentiate_now(trace, args)
            if out is not None:
                return out
        except errors.UnexpectedTracerError as err:
            _reraise_if_leaked(err)
        return self.bind_call(args)

    def _traced(self, static, in_tree, avals, reuse: bool = True):
        """(call_jaxpr, consts, out_tree, rule): the trace is kept by traced_cache (per rules, so
        that defjvp/defvjp take effect); the rule object is reused while anything holds it."""
        def trace():
            box = []

            def flat(*xs):
                out = self.fun(*self._merge(static, tree_util.tree_unflatten(in_tree, list(xs))))
                out_leaves, out_tree = tree_util.tree_flatten(out)
                box.append(out_tree)
                return [as_operand(o) for o in out_leaves]
            closed = trace_to_jaxpr(flat, list(avals), name=getattr(self.fun, "__name__", "custom"))
            return closed, box[0], [None]
        key = (self._rules_id, static, in_tree, avals)
        call_jaxpr, consts, out_tree, rule_ref = trace_cached(
            self._trace_kind, self.fun, key, trace, closure_converted=True,
            cacheable=reuse and _is_hashable(static))
        # held weakly: the rule refers to the user's rules, which often refer to this function,
        # and a cached entry must not keep its own function alive
        rule = rule_ref[0]() if rule_ref[0] is not None else None
        if rule is None:
            rule = self._make_rule(static, in_tree, avals, out_tree, call_jaxpr, len(consts))
            # a rule not shared with other calls may keep its traces (JVPRule.per_call)
            rule.per_call = not (reuse and _is_hashable(static))
            rule_ref[0] = weakref.ref(rule)
        return call_jaxpr, consts, out_tree, rule

    def _rules_changed(self) -> None:
        self._rules_id = next(_rules_ids)

    def _static_values(self, static) -> list:
        return [v for _, v in static]

    def _split_tangents(self, trace, args):
        """(static, in_tree, primals, tangents) of `args` as seen by the JVP trace `trace`."""
        static, diff_args = self._split(args)
        leaves, in_tree = tree_util.tree_flatten(diff_args)
        pairs = [trace.split(canonical_leaf(x)) for x in leaves]
        return static, in_tree, [p for p, _ in pairs], [t for _, t in pairs]


def _owning_trace(leaves):
    """The trace that handles a call of a custom function: the innermost one that owns an
    argument, skipping traces that pass calls on (differentiation and batching, as JAX) when
    none of the arguments belong to them; the eager trace when no transformation sees them.
    Staging traces (jit) always take the call, so the staged program keeps the custom rule."""
    trace = current_trace()
    while not is_eager(trace):
        if any(isinstance(x, Tracer) and x._trace is trace for x in leaves):
            return trace
        if not trace.passes_custom_calls:
            return trace
        trace = trace.parent
    return trace


def _reraise_if_leaked(err: errors.UnexpectedTracerError) -> None:
    """A tracer of a finished transformation stays an error; one of an enclosing
    transformation that the function closes over is staged by the general path."""
    if "already finished" in err.bare_message:
        raise err


def _user_tangent(t, primal):
    """A tangent as user rules receive it: zeros materialised (float0 for integer primals)."""
    aval = aval_of_value(primal) if not isinstance(primal, Tracer) else primal.aval
    if not dtypes.is_inexact(aval.dtype):
        return np.zeros(aval.shape, float0)
    return to_array(instantiate(t)) if type(t) is Zero else t


class custom_jvp(_CustomFunction):
    """A function with a user-supplied forward-mode derivative (reverse mode transposes it).

    Args:
      fun: the function. nondiff_argnums: positions of arguments that get no derivative; the
        JVP rule receives them first: `jvp(*nondiff_args, primals, tangents)`.
    Example:
      >>> @yax.custom_jvp
      ... def softplus(x): return jnp.log1p(jnp.exp(x))
      >>> @softplus.defjvp
      ... def _(primals, tangents): (x,), (t,) = primals, tangents; \
            return softplus(x), t * yax.nn.sigmoid(x)
    """

    kind = "custom_jvp function"
    _trace_kind = "custom_jvp"
    _primitive = custom_jvp_call_p

    def _process_call(self, trace, args):
        return trace.process_custom_jvp_call(self, args)

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """Set the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`.

        With `symbolic_zeros=True` the tangent of each input that is not differentiated
        arrives as a `SymbolicZero` (no arithmetic; test with isinstance), and the rule may
        return SymbolicZero for an output tangent that is zero; as in jax."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        self._rules_changed()
        return jvp  # so that `@f.defjvp` as a decorator keeps the rule under its name

    def defjvps(self, *jvps):
        """One rule per argument: `jvp_i(tangent_i, primal_out, *primals)`; None for an argument
        without a derivative. The tangent of the output is their sum."""
        def jvp(*args):
            *nondiff, primals, tangents = args
            out = self(*nondiff, *primals) if nondiff else self(*primals)
            total = None
            for rule, t in zip(jvps, tangents, strict=True):
                if rule is None:
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else tree_util.tree_map(lambda a, b: a + b,
                                                                        total, term)
            if total is None:
                total = tree_util.tree_map(lambda o: o * 0, out)
            return out, total
        self.defjvp(jvp)  # returns None, as in JAX

    def _differentiate_now(self, trace, args):
        """Run the user's JVP rule on (primals, tangents) one level below `trace`."""
        static, in_tree, primals, tangents = self._split_tangents(trace, args)
        if self.symbolic_zeros:
            ts = [to_user(t, _aval(p)) for t, p in zip(tangents, primals)]
        else:
            ts = [_user_tangent(t, p) for t, p in zip(tangents, primals)]
        with use_trace(trace.parent):
            p = tree_util.tree_unflatten(in_tree, _user_values(primals))
            t = tree_util.tree_unflatten(in_tree, ts)
            with errors.running_user_code():
                result = self.jvp(*self._static_values(static), tuple(p), tuple(t))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise errors.CustomDerivativeError(
                    f"the JVP rule of custom_jvp function {self._name} must return a pair "
                    f"(primal_out, tangent_out), got {type(result).__name__}")
            p_leaves, out_tree = tree_util.tree_flatten(result[0])
            p_out = [as_operand(x) for x in p_leaves]
            avals = [_aval(x) for x in p_out]
            t_out = _check_outputs(_zeros_from_user(result[1], out_tree, avals), out_tree,
                                   avals, self._name, "tangent output", tangent=True)
        outs = [JVPTracer(trace, x, tx) if dtypes.is_inexact(a.dtype) else x
                for x, tx, a in zip(p_out, t_out, avals)]
        return tree_util.tree_unflatten(out_tree, outs)

    def _check_defined(self):
        if self.jvp is None:
            raise errors.CustomDerivativeError(
                f"custom_jvp function {self._name} has no JVP rule: define one with "
                f"`@{getattr(self.fun, '__name__', 'f')}.defjvp` before calling it")

    def _make_rule(self, static, in_tree, avals, out_tree, call_jaxpr, num_consts):
        user_jvp, name, symbolic = self.jvp, self._name, self.symbolic_zeros
        out_avals = call_jaxpr.out_avals

        def jvp_flat(primals, tangents):
            p = tree_util.tree_unflatten(in_tree, _user_values(primals))
            if symbolic:
                tangents = [to_user(x, _aval(y)) for x, y in zip(tangents, primals)]
            t = tree_util.tree_unflatten(in_tree, _user_values(tangents))
            with errors.running_user_code():
                result = user_jvp(*self._static_values(static), tuple(p), tuple(t))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise errors.CustomDerivativeError(
                    f"the JVP rule of custom_jvp function {name} must return a pair "
                    f"(primal_out, tangent_out), got {type(result).__name__}")
            p_out = _check_outputs(result[0], out_tree, out_avals, name, "primal output",
                                   tangent=False)
            t_out = _check_outputs(_zeros_from_user(result[1], out_tree, out_avals), out_tree,
                                   out_avals, name, "tangent output", tangent=True)
            return p_out, t_out
        rule = JVPRule(jvp_flat, name, symbolic_zeros=symbolic)
        rule.shown = {"name": self.fun, "jvp": user_jvp}  # what a printed jaxpr names (as jax)
        return rule


class custom_vjp(_CustomFunction):
    """A function with a user-supplied reverse-mode derivative.

    `fwd(*args) -> (out, residuals)` and `bwd(*nondiff_args, residuals, ct_out) -> tuple` with one
    cotangent per differentiable argument (None for a zero). Forward mode (`jvp`) works too: it
    transposes `bwd` when `bwd` is linear in `ct_out` (see docs/custom_derivatives.md).
    """

    kind = "custom_vjp function"
    _trace_kind = "custom_vjp"
    _primitive = custom_vjp_call_p

    def _process_call(self, trace, args):
        return trace.process_custom_vjp_call(self, args)

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
        """Set the forward pass (returning residuals) and the backward pass.

        With `symbolic_zeros=True` (as in jax) `fwd` receives each argument leaf as a
        `CustomVJPPrimal` (`.value`, `.perturbed`: whether it is differentiated), `bwd` receives
        each cotangent known to be zero as a `SymbolicZero`, and may return None or a
        SymbolicZero for a zero cotangent. Where bwd is traced to run forwards (jvp of the
        function) its cotangents are all arrays."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = bool(symbolic_zeros)
        self._rules_changed()  # returns None, as JAX's defvjp

    def _fwd_arguments(self, static, in_tree, values, perturbed) -> list:
        """The arguments `fwd` is called with: with symbolic zeros, each differentiable leaf
        wrapped as a CustomVJPPrimal (the nondiff_argnums ones are passed as they are)."""
        values = _user_values(values)
        if self.symbolic_zeros:
            values = [CustomVJPPrimal(v, p) for v, p in zip(values, perturbed, strict=True)]
        return self._merge(static, tree_util.tree_unflatten(in_tree, values))

    def _differentiate_now(self, trace, args):
        """Under reverse mode (the tangents are unknowns of a linearize trace), run `fwd` now,
        one level below `trace`, and stage the linear map that `bwd` transposes; the function
        itself is not traced, as in JAX. None otherwise (forward mode takes the general path,
        which can fall back to differentiating the function)."""
        static, in_tree, primals, tangents = self._split_tangents(trace, args)
        arg_avals = [aval_of_value(p) if not isinstance(p, Tracer) else p.aval for p in primals]
        diff = tuple(dtypes.is_inexact(a.dtype) for a in arg_avals)
        live = [t for t, d in zip(tangents, diff) if d and type(t) is not Zero]
        if not live or not all(is_unknown_tangent(t) for t in live):
            return None
        perturbed = [d and type(t) is not Zero for t, d in zip(tangents, diff)]
        with use_trace(trace.parent):
            full = self._fwd_arguments(static, in_tree, primals, perturbed)
            with errors.running_user_code():
                result = self.fwd(*full)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise errors.CustomDerivativeError(
                    f"the fwd rule of custom_vjp function {self._name} must return a pair "
                    f"(primal_out, residuals), got {type(result).__name__}")
            out_leaves, out_tree = tree_util.tree_flatten(result[0])
            outs = [as_operand(o) for o in out_leaves]
            out_avals = [aval_of_value(o) if not isinstance(o, Tracer) else o.aval for o in outs]
            res, res_tree = tree_util.tree_flatten(result[1])
            res = [as_operand(r) for r in res]
            call = _LazyCallJaxpr(self, static, in_tree, arg_avals, out_avals)
            rule = self._make_rule(static, in_tree, tuple(arg_avals), out_tree, call, 0)
            ts = [instantiate(t) for t, d in zip(tangents, diff) if d]
            t_outs = iter(bind(custom_vjp_lin_p, *res, *ts, rule=rule, res_tree=res_tree,
                               call_jaxpr=call, num_consts=0, num_res=len(res), diff=diff,
                               mode="transpose"))
        flat = [JVPTracer(trace, o, next(t_outs)) if dtypes.is_inexact(a.dtype) else o
                for o, a in zip(outs, out_avals)]
        return tree_util.tree_unflatten(out_tree, flat)

    def __call__(self, *args, **kwargs):
        args = self._positional(args, kwargs)
        refs = {i: a for i, a in enumerate(args) if isinstance(a, Ref)}
        if refs and not is_eager(_owning_trace(tree_util.tree_leaves(args))):
            self._check_defined()
            return custom_vjp_refs.call_with_refs(self, args, refs)
        return super().__call__(*args)

    def _check_defined(self):
        if self.fwd is None:
            raise errors.CustomDerivativeError(
                f"custom_vjp function {self._name} has no rules: call "
                f"`{getattr(self.fun, '__name__', 'f')}.defvjp(fwd, bwd)` before calling it")

    def _make_rule(self, static, in_tree, avals, out_tree, call_jaxpr, num_consts):
        user_fwd, user_bwd, name, symbolic = self.fwd, self.bwd, self._name, self.symbolic_zeros
        out_avals = call_jaxpr.out_avals
        diff_args = tree_util.tree_unflatten(in_tree, list(range(len(avals))))  # int leaves

        def fwd_flat(args, perturbed):
            full = self._fwd_arguments(static, in_tree, args, perturbed)
            with errors.running_user_code():
                result = user_fwd(*full)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise errors.CustomDerivativeError(
                    f"the fwd rule of custom_vjp function {name} must return a pair "
                    f"(primal_out, residuals), got {type(result).__name__}")
            outs = _check_outputs(result[0], out_tree, out_avals, name, "fwd primal output",
                                  tangent=False)
            res, res_tree = tree_util.tree_flatten(result[1])
            return outs, [as_operand(r) for r in res], res_tree

        def bwd_flat(res_tree, res, cts):
            if symbolic:  # the zeros kept as Zero objects (VJPRule.symbolic_zeros)
                cts = [to_user(c, a) for c, a in zip(cts, out_avals, strict=True)]
            with errors.running_user_code():
                result = user_bwd(*self._static_values(static),
                                  tree_util.tree_unflatten(res_tree, _user_values(res)),
                                  tree_util.tree_unflatten(out_tree, _user_values(cts)))
            return _bwd_cotangents(result, diff_args, in_tree, avals, name)
        rule = VJPRule(fwd_flat, bwd_flat, name, symbolic_zeros=symbolic)
        rule.shown = {"name": self.fun, "fwd": user_fwd, "bwd": user_bwd}  # as jax prints them
        return rule


class _LazyCallJaxpr:
    """Stands for the `call_jaxpr` of a custom_vjp call that reverse mode did not need to trace:
    its avals are known from `fwd`; the program is traced only if something (vmap of the
    linear map) asks for it."""

    def __init__(self, custom, static, in_tree, in_avals, out_avals):
        self._custom, self._static, self._in_tree = custom, static, in_tree
        self.in_avals, self.out_avals = list(in_avals), list(out_avals)
        self._closed = None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if self._closed is None:
            custom, in_tree, static = self._custom, self._in_tree, self._static

            def flat(*xs):
                out = custom.fun(*custom._merge(static, tree_util.tree_unflatten(in_tree,
                                                                                 list(xs))))
                return [as_operand(o) for o in tree_util.tree_leaves(out)]
            self._closed = trace_to_jaxpr(flat, self.in_avals, name=custom._name)
        return getattr(self._closed, name)

    def __repr__(self):
        return f"<call of {self._custom._name}>"


def _aval(x):
    return x.aval if isinstance(x, Tracer) else aval_of_value(x)


def _zeros_from_user(tangents, out_tree, out_avals):
    """The rule's tangent output with each SymbolicZero leaf made zeros of its output's type
    (a structure that does not match is left for the output check to report)."""
    leaves, tree = tree_util.tree_flatten(tangents)
    if tree != out_tree or not any(isinstance(x, SymbolicZero) for x in leaves):
        return tangents
    return tree_util.tree_unflatten(tree, [from_user(x, a) for x, a in zip(leaves, out_avals)])


def _user_values(xs) -> list:
    """Internal typed scalars become Arrays before user code sees them (it does arithmetic)."""
    return [to_array(x) if type(x) is TypedScalar else x for x in xs]


def _check_outputs(value, out_tree, out_avals, name: str, what: str, *, tangent: bool) -> list:
    leaves, tree = tree_util.tree_flatten(value)
    if tree != out_tree:
        raise errors.CustomDerivativeError(
            f"custom rule of {name}: its {what} has structure {tree}, but the function returns "
            f"{out_tree}; return the same pytree structure")
    out = []
    for i, (x, want) in enumerate(zip(leaves, out_avals, strict=True)):
        if tangent and not dtypes.is_inexact(want.dtype):
            out.append(x)  # tangents of integer outputs are ignored (float0 in JAX)
            continue
        x = as_operand(x)
        want_dtype = tangent_aval(want).dtype if tangent else want.dtype
        out.append(_fit(x, want.shape, want_dtype, f"custom rule of {name}: {what} {i}"))
    return out


def _fit(x, shape, dtype, what: str):
    """`x` with exactly `shape`/`dtype`; weakly typed values (Python scalars) are converted."""
    aval = aval_of_value(x)
    if aval.shape != tuple(shape):
        raise errors.CustomDerivativeError(
            f"{what} has shape {aval.shape} but {tuple(shape)} was expected (the shape of the "
            f"corresponding primal value); broadcast it with jnp.broadcast_to or fix the rule")
    if aval.dtype != dtype:
        same_kind = dtypes.is_inexact(aval.dtype) == dtypes.is_inexact(dtype)
        if not (aval.weak_type and same_kind) and not _widens_safely(aval.dtype, dtype):
            raise errors.CustomDerivativeError(
                f"{what} has dtype {aval.dtype} but {np.dtype(dtype)} was expected; cast it with "
                f".astype({np.dtype(dtype).name})")
        x = convert_element_type(x, dtype)
    return x


def _widens_safely(got, want) -> bool:
    return dtypes.is_inexact(got) and dtypes.is_inexact(want) and np.dtype(got).itemsize <= \
        np.dtype(want).itemsize and dtypes.is_complex(got) == dtypes.is_complex(want)


def _bwd_cotangents(result, diff_args, in_tree, avals, name: str) -> list:
    """The flat cotangents (None for zero) of what the user's bwd returned."""
    if not isinstance(result, (tuple, list)):
        raise errors.CustomDerivativeError(
            f"the bwd rule of custom_vjp function {name} must return a tuple with one cotangent "
            f"per differentiable argument, got {type(result).__name__}; wrap a single one as "
            f"`(ct,)`")
    if len(result) != len(diff_args):
        raise errors.CustomDerivativeError(
            f"the bwd rule of custom_vjp function {name} returned {len(result)} cotangents for "
            f"{len(diff_args)} differentiable arguments; return one per argument (None for zero)")
    flat = []
    it = iter(avals)
    for k, (ct, arg) in enumerate(zip(result, diff_args)):
        arg_tree = tree_util.tree_structure(arg)
        n = arg_tree.num_leaves
        arg_avals = [next(it) for _ in range(n)]
        if ct is None or isinstance(ct, SymbolicZero):
            flat.extend([None] * n)
            continue
        leaves, tree = tree_util.tree_flatten(ct, is_leaf=lambda x: x is None)
        if tree != arg_tree:
            raise errors.CustomDerivativeError(
                f"the bwd rule of custom_vjp function {name}: cotangent {k} has structure {tree} "
                f"but argument {k} has structure {arg_tree}")
        for j, (c, a) in enumerate(zip(leaves, arg_avals, strict=True)):
            if c is None or isinstance(c, SymbolicZero) or not dtypes.is_inexact(a.dtype) or \
                    getattr(c, "dtype", None) == float0:
                flat.append(None)
            else:
                flat.append(_fit(as_operand(c), a.shape, tangent_aval(a).dtype,
                                 f"the bwd rule of custom_vjp function {name}: cotangent {k} "
                                 f"leaf {j}"))
    return flat


def _signature_or_none(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _is_hashable(static) -> bool:
    try:
        hash(static)
        return True
    except TypeError:
        return False
