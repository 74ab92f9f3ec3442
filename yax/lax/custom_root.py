"""yax.lax.custom_root: a root of f(x, theta) = 0, differentiated by the implicit function theorem.

The root is a function with a custom JVP (a `custom_jvp_call` holding the solver's jaxpr): the
solver runs on the primal values only, so it is never differentiated and may be a while_loop.
Its tangent follows from f(x*(theta), theta) = 0:

    J dx = -(df/dtheta) dtheta,   J = df/dx at the root

and is one custom_linear_solve of the linearised condition, with `tangent_solve` as both its
solve and its transpose_solve. Differentiating again differentiates that linear solve (its own
rules) and the JVP of f at the root, so every order is right.
"""

from __future__ import annotations

import inspect

from yax import tree_util
from yax.core.ir import ClosedJaxpr, Jaxpr, Var
from yax.core.trace import bind
from yax.interpreters.ad_util import Zero, instantiate, tangent_aval, zeros_like_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.partial_eval import linearize_flat
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.lax.elementwise import neg
from yax.lax.linear_solve import Role, as_function, linear_solve, trace_vector_fun
from yax.primitives.custom_derivatives import JVPRule, custom_jvp_call_p
from yax.primitives.linear_solve import LinearSolveParts
from yax.runtime.values import as_operand, aval_of

__all__ = ["custom_root"]


def _call_jaxpr(solve_jaxpr: ClosedJaxpr, n_solve_consts: int, f_avals, step_avals):
    """The root function's program: (f consts, solve consts, step consts, guess) -> solve's
    result. It reads only the solve consts and the guess; the others ride along so the JVP rule
    receives them as operands (never as closures)."""
    j = solve_jaxpr.jaxpr
    invars = [*(Var(a) for a in f_avals), *j.invars[:n_solve_consts],
              *(Var(a) for a in step_avals), *j.invars[n_solve_consts:]]
    return ClosedJaxpr(Jaxpr([], invars, j.eqns, j.outvars), [])


def _check_tangent_solve_signature(tangent_solve, role: Role) -> None:
    try:
        signature = inspect.signature(tangent_solve)
    except (TypeError, ValueError):  # a builtin or C function: leave it to the call
        return
    try:
        signature.bind(object(), object())
    except TypeError as e:
        raise role.error(f"must take two arguments (g, y): the linearised f and a right-hand "
                         f"side, and return x with g(x) == y shaped like the root; its signature "
                         f"is {signature} ({e})") from None


def _linearised(f, tree, x_leaves):
    """g(t) = df/dx (x) t, with the primal work done once (its residuals become g's consts)."""
    _, linear, nonzero = linearize_flat(lambda *xs: tree_util.tree_leaves(
        f(tree_util.tree_unflatten(tree, list(xs)))), x_leaves)

    def g(t):
        outs = iter(eval_jaxpr(linear.jaxpr, linear.consts, tree_util.tree_leaves(t)))
        leaves = [next(outs) if nz else zeros_like_aval(tangent_aval(aval_of(x)))
                  for nz, x in zip(nonzero, x_leaves, strict=True)]
        return tree_util.tree_unflatten(tree, leaves)
    return g


def _tangent_step(f_jaxpr, n_f, tree, x_avals, tangent_solve):
    """The traced tangent system: (step consts..., f consts..., x..., rhs...) -> x with
    J(x) x = rhs, as one custom_linear_solve."""
    n_x = len(x_avals)
    roles = LinearSolveParts(Role("custom_root: the linearised f", tangent_solve), None,
                             Role("custom_root: tangent_solve", tangent_solve, "initial_guess"),
                             Role("custom_root: tangent_solve (on the transposed map)",
                                  tangent_solve, "initial_guess"))
    _check_tangent_solve_signature(tangent_solve, roles.solve)

    def step(*args):
        f_consts, x, rhs = args[:n_f], list(args[n_f:n_f + n_x]), args[n_f + n_x:]
        f = as_function(f_jaxpr, f_consts, tree)
        g = _linearised(f, tree, x)
        out = linear_solve(g, tree_util.tree_unflatten(tree, list(rhs)), tangent_solve,
                           tangent_solve, roles=roles)
        return [as_operand(v) for v in tree_util.tree_leaves(out)]

    f_const_avals = list(f_jaxpr.in_avals[:n_f])
    traced = trace_to_jaxpr(step, [*f_const_avals, *x_avals, *x_avals], name="tangent_solve")
    return closure_convert(traced)


def _root_rule(call_jaxpr, f_jaxpr, step_jaxpr, counts, n_x):
    """The JVP rule of the root function (flat: primals and tangents of all its operands)."""
    n_f, n_s, n_step = counts
    rule = JVPRule(None, "custom_root")

    def jvp(primals, tangents):
        outs = bind(custom_jvp_call_p, *primals, call_jaxpr=call_jaxpr, rule=rule,
                    num_consts=0)
        f_consts, x = primals[:n_f], outs[:n_x]
        step_consts = primals[n_f + n_s:n_f + n_s + n_step]
        # the tangents of f's consts (integer ones arrive as float0 and carry nothing)
        f_dots = [t if _inexact(a) else Zero(tangent_aval(a))
                  for t, a in zip(tangents[:n_f], f_jaxpr.in_avals)]
        zeros_x = [Zero(tangent_aval(aval_of(v))) for v in x]
        aux_zeros = [Zero(tangent_aval(aval_of(v))) for v in outs[n_x:]]
        if all(type(t) is Zero for t in f_dots):
            return outs, [*zeros_x, *aux_zeros]
        # rhs = (df/dtheta) dtheta at the root, x held fixed
        _, rhs = jvp_flat(lambda *a: eval_jaxpr(f_jaxpr.jaxpr, [], a), [*f_consts, *x],
                          [*f_dots, *zeros_x])
        dx = eval_jaxpr(step_jaxpr.jaxpr, [], [*step_consts, *f_consts, *x,
                                                *(instantiate(r) for r in rhs)])
        return outs, [*(neg(d) for d in dx), *aux_zeros]
    rule.jvp = jvp
    return rule


def _inexact(aval) -> bool:
    return aval.dtype.kind in "fc"


def custom_root(f, initial_guess, solve, tangent_solve, has_aux: bool = False):
    """Find a root of `f` with `solve`, differentiating implicitly (as jax.lax's).

    Args:
      f: the function whose root is sought, x -> f(x) shaped like x (closing over parameters to
        differentiate).
      initial_guess: the starting point, a pytree.
      solve: `solve(f, initial_guess) -> x` with f(x) = 0 (runs on the primal values only and
        is never differentiated: a while_loop is fine).
      tangent_solve: `tangent_solve(g, y) -> x` with g(x) = y for a linear g (the Jacobian of f
        at the root, or its transpose); e.g. `lambda g, y: y / g(1.0)` for scalars.
      has_aux: `solve` returns (x, aux); aux gets a zero derivative.
    Returns:
      the root (and aux), with derivative dx = -J^-1 (df/dtheta) dtheta at every order.

    Example: the square root of a, `custom_root(lambda x: x * x - a, 1.0, newton,
    lambda g, y: y / g(1.0))`.
    """
    guess, tree = tree_util.tree_flatten(initial_guess)
    guess = [as_operand(x) for x in guess]
    avals = [aval_of(x) for x in guess]
    f_role = Role("custom_root: f", f, "initial_guess")
    f_jaxpr, f_consts, _ = trace_vector_fun(f, tree, avals, f_role)
    solve_role = Role("custom_root: solve", solve, "initial_guess")
    s_jaxpr, s_consts, aux_tree = trace_vector_fun(lambda x: solve(f, x), tree, avals,
                                                   solve_role, has_aux)
    step_jaxpr, step_consts = _tangent_step(f_jaxpr, len(f_consts), tree, avals, tangent_solve)
    call = _call_jaxpr(s_jaxpr, len(s_consts), [aval_of(c) for c in f_consts],
                       [aval_of(c) for c in step_consts])
    rule = _root_rule(call, f_jaxpr, step_jaxpr,
                      (len(f_consts), len(s_consts), len(step_consts)), len(guess))
    outs = bind(custom_jvp_call_p, *f_consts, *s_consts, *step_consts, *guess,
                call_jaxpr=call, rule=rule, num_consts=0)
    x = tree_util.tree_unflatten(tree, outs[:len(guess)])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_tree, outs[len(guess):])
    return x
