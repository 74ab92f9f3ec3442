"""yax.lax.custom_linear_solve and custom_root: solvers differentiated implicitly.

A solver's iterations (a while_loop, say) are not what its derivative should follow: the solution
x of A(theta) x = b(theta), or of f(x, theta) = 0, has the derivative of the implicit function
theorem, whatever the algorithm that found it:

    custom_linear_solve:  dx = A^-1 (db - dA x)          custom_root:  dx = -J^-1 (df/dtheta)

Both are written as the solver's answer (with a zero derivative) plus a correction that is zero in
value but carries exactly that derivative:

    x0 = stop_gradient(solve(A, b));   x = x0 - S(A x0 - b)        (residual: zero, up to rounding)

where S applies the user's `solve` to the residual, with a custom VJP that applies
`transpose_solve` (or `solve` again when `symmetric`) to the cotangent. S sees A with its
parameters stop-gradiented: their derivative enters through the residual A x0 - b instead. So
`solve` and `transpose_solve` are never differentiated, and may be anything (while loops, host
solvers). custom_root is custom_linear_solve on the Jacobian of f at the root, with
`tangent_solve` for both directions.
"""

from __future__ import annotations

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.trace import bind
from yax.interpreters.ad_util import instantiate, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.transpose import UndefinedPrimal, backward_pass
from yax.lax.ad_control import stop_gradient
from yax.lax.elementwise import _convert_keep_weak, sub
from yax.lax.shape import broadcast_in_dim
from yax.primitives.custom_derivatives import VJPRule, custom_vjp_call_p
from yax.runtime.values import as_operand, aval_of

__all__ = ["custom_linear_solve", "custom_root"]


def _traced(fun, example):
    """`fun` (of one pytree shaped like `example`) traced once: returns run(consts, x) and the
    stop-gradiented values it closes over, to pass back in as `consts`. Calling `run` with
    those values is `fun` with every captured value cut off from derivatives."""

    leaves, tree = tree_util.tree_flatten(example)
    out_tree = []

    def flat(*xs):
        out_leaves, treedef = tree_util.tree_flatten(fun(tree_util.tree_unflatten(tree, xs)))
        out_tree.append(treedef)
        return [as_operand(x) for x in out_leaves]

    closed = trace_to_jaxpr(flat, [aval_of(as_operand(x)) for x in leaves],
                            name=getattr(fun, "__name__", "fun"))
    converted, consts = closure_convert(closed)

    def run(consts, x):
        xs = tree_util.tree_leaves(x)
        return tree_util.tree_unflatten(out_tree[0],
                                        eval_jaxpr(converted.jaxpr, [], [*consts, *xs]))
    return run, tuple(stop_gradient(c) for c in consts)


def _frozen(fun, example):
    """`fun` with the values it closes over stop-gradiented (see `_traced`)."""
    run, consts = _traced(fun, example)
    return lambda x: run(consts, x)


def _sub_leaf(a, b):
    """a - b with NumPy's promotion and broadcasting (as jnp.subtract), written with lax ops."""
    a, b = as_operand(a), as_operand(b)
    dtype, weak = dtypes.result_type(dtypes.scalar_type_of(a), dtypes.scalar_type_of(b))
    shape = np.broadcast_shapes(aval_of(a).shape, aval_of(b).shape)
    a, b = (_broadcast_to(_convert_keep_weak(x, dtype, weak), shape) for x in (a, b))
    return sub(a, b)


def _broadcast_to(x, shape):
    old = aval_of(x).shape
    if old == shape:
        return x
    dims = tuple(range(len(shape) - len(old), len(shape)))
    return broadcast_in_dim(x, shape, dims)


def _sub(a, b):
    return tree_util.tree_map(_sub_leaf, a, b)


def _flat(fun, in_tree, out_box):
    """`fun` of one pytree as a function of its leaves, recording the output structure."""
    def flat(*xs):
        out_leaves, out_tree = tree_util.tree_flatten(fun(tree_util.tree_unflatten(in_tree, xs)))
        out_box.append(out_tree)
        return [as_operand(x) for x in out_leaves]
    return flat


def _jvp(fun, x, t):
    """The tangent of `fun` at `x` along `t` (both pytrees of one structure)."""
    leaves, tree = tree_util.tree_flatten(x)
    out_box = []
    _, t_out = jvp_flat(_flat(fun, tree, out_box), [as_operand(v) for v in leaves],
                        [as_operand(v) for v in tree_util.tree_leaves(t)])
    return tree_util.tree_unflatten(out_box[0], [instantiate(v) for v in t_out])


def _linear_transpose(fun, example):
    """The transpose of the linear function `fun`, for inputs shaped like `example`."""
    leaves, tree = tree_util.tree_flatten(example)
    in_avals = [tangent_aval(aval_of(as_operand(v))) for v in leaves]
    closed = trace_to_jaxpr(_flat(fun, tree, []), in_avals, name="linear_transpose")

    def transposed(ct):
        cts = backward_pass(closed.jaxpr, closed.consts, [UndefinedPrimal(a) for a in in_avals],
                            tree_util.tree_leaves(ct))
        return tree_util.tree_unflatten(tree, [instantiate(c) for c in cts])
    return transposed


def _solve_with_transposed_vjp(run_solve, run_transpose, solve_consts, transpose_consts, r):
    """run_solve(solve_consts, r) as a custom_vjp call whose backward pass is
    run_transpose(transpose_consts, ct) (all consts explicit arguments, none closed over)."""
    n_s, n_t = len(solve_consts), len(transpose_consts)
    r_leaves, r_tree = tree_util.tree_flatten(r)
    args = [as_operand(x) for x in [*solve_consts, *transpose_consts, *r_leaves]]
    out_box = []

    def apply(*xs):
        out = run_solve(list(xs[:n_s]), tree_util.tree_unflatten(r_tree, xs[n_s + n_t:]))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_box.append(out_tree)
        return [as_operand(o) for o in out_leaves]

    def fwd(xs):
        return apply(*xs), list(xs[n_s:n_s + n_t]), None

    def bwd(res_tree, res, cts):
        if run_transpose is None:
            raise errors.YaxError(
                "reverse-mode differentiation of custom_linear_solve needs transpose_solve "
                "(or symmetric=True when the linear map is symmetric)")
        ct_r = run_transpose(list(res), tree_util.tree_unflatten(out_box[0], cts))
        return [None] * (n_s + n_t) + tree_util.tree_leaves(ct_r)

    closed = trace_to_jaxpr(apply, [aval_of(a) for a in args], name="custom_linear_solve")
    call_jaxpr, consts = closure_convert(closed)
    outs = bind(custom_vjp_call_p, *consts, *args, call_jaxpr=call_jaxpr,
                rule=VJPRule(fwd, bwd, "custom_linear_solve"), num_consts=len(consts))
    return tree_util.tree_unflatten(out_box[0], outs)


def _split_aux(result, has_aux: bool, who: str):
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise errors.YaxError(f"{who} with has_aux=True must return a pair (solution, aux)")
    return result[0], result[1]


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric: bool = False,
                        has_aux: bool = False):
    """Solve matvec(x) = b with `solve`, differentiating implicitly (as jax.lax's).

    Args:
      matvec: the linear map x -> A x (closing over any parameters to differentiate).
      b: the right-hand side, a pytree shaped like x.
      solve: `solve(matvec, b) -> x` with matvec(x) = b (any algorithm; not differentiated).
      transpose_solve: `transpose_solve(vecmat, b) -> x` with vecmat(x) = b for the transposed
        map; needed for reverse mode unless `symmetric`.
      symmetric: A is symmetric, so `solve` serves as transpose_solve.
      has_aux: `solve` (and transpose_solve) return (x, aux); aux is returned as is.
    Returns:
      x (and aux when has_aux), with derivatives dx = A^-1 (db - dA x) for b and matvec's
      parameters.

    Example: `custom_linear_solve(lambda x: a @ x, b, lambda mv, b: jnp.linalg.solve(a, b),
    symmetric=True)`.
    """
    x0, aux = _split_aux(solve(matvec, b), has_aux, "custom_linear_solve: solve")
    x0, aux = stop_gradient(x0), (None if aux is None else stop_gradient(aux))
    frozen_matvec = _frozen(matvec, x0)
    if symmetric:
        transpose_solve = solve

    # The solvers may close over differentiated values too (a matrix they factor): they are
    # traced once and their captured values passed to the custom-VJP function as explicit
    # arguments (stop-gradiented, so their cotangents are None), never as closures: vmap and
    # the backward pass, which run the rules later and elsewhere, then see every value.
    run_solve, solve_consts = _traced(
        lambda r: _split_aux(solve(frozen_matvec, r), has_aux, "solve")[0], b)
    run_transpose, transpose_consts = None, ()
    if transpose_solve is not None:
        vecmat_transposed = _linear_transpose(frozen_matvec, x0)

        run_transpose, transpose_consts = _traced(
            lambda ct: _split_aux(transpose_solve(vecmat_transposed, ct), has_aux,
                                  "transpose_solve")[0], x0)

    correction = _solve_with_transposed_vjp(run_solve, run_transpose, solve_consts,
                                            transpose_consts, _sub(matvec(x0), b))
    x = _sub(x0, correction)
    return (x, aux) if has_aux else x


def custom_root(f, initial_guess, solve, tangent_solve, has_aux: bool = False):
    """Find a root of `f` with `solve`, differentiating implicitly (as jax.lax's).

    Args:
      f: the function whose root is sought, x -> f(x) shaped like x (closing over parameters to
        differentiate).
      initial_guess: the starting point, a pytree.
      solve: `solve(f, initial_guess) -> x` with f(x) = 0 (not differentiated).
      tangent_solve: `tangent_solve(g, y) -> x` with g(x) = y for a linear g (the Jacobian of f
        at the root, or its transpose); e.g. `lambda g, y: y / g(1.0)` for scalars.
      has_aux: `solve` returns (x, aux).
    Returns:
      the root (and aux), with derivative dx = -J^-1 (df/dtheta) dtheta.
    """
    root, aux = _split_aux(solve(f, initial_guess), has_aux, "custom_root: solve")
    root = stop_gradient(root)
    aux = None if aux is None else stop_gradient(aux)
    frozen_f = _frozen(f, root)

    def jacobian(t):
        return _jvp(frozen_f, root, t)

    step = custom_linear_solve(jacobian, f(root), solve=lambda g, y: tangent_solve(g, y),
                               transpose_solve=lambda g, y: tangent_solve(g, y))
    x = _sub(root, step)
    return (x, aux) if has_aux else x
