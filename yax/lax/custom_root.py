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

from yax import errors, tree_util
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.lax._util import as_operand, aval_of
from yax.lax.ad_control import stop_gradient

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


def _sub(a, b):
    from yax.numpy.ufuncs import subtract
    return tree_util.tree_map(subtract, a, b)


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
    from yax.transforms.ad import linear_transpose
    from yax.transforms.custom_derivatives import custom_vjp

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
        vecmat_transposed = linear_transpose(frozen_matvec, x0)

        def vecmat(y):
            return vecmat_transposed(y)[0]
        run_transpose, transpose_consts = _traced(
            lambda ct: _split_aux(transpose_solve(vecmat, ct), has_aux, "transpose_solve")[0],
            x0)

    def forward(s_consts, t_consts, r):
        return run_solve(s_consts, r), t_consts

    def backward(t_consts, ct):
        if run_transpose is None:
            raise errors.YaxError(
                "reverse-mode differentiation of custom_linear_solve needs transpose_solve "
                "(or symmetric=True when the linear map is symmetric)")
        return None, None, run_transpose(t_consts, ct)

    corrected = custom_vjp(lambda s_consts, t_consts, r: run_solve(s_consts, r))
    corrected.defvjp(forward, backward)
    x = _sub(x0, corrected(list(solve_consts), list(transpose_consts), _sub(matvec(x0), b)))
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
    from yax.transforms.ad import jvp

    root, aux = _split_aux(solve(f, initial_guess), has_aux, "custom_root: solve")
    root = stop_gradient(root)
    aux = None if aux is None else stop_gradient(aux)
    frozen_f = _frozen(f, root)

    def jacobian(t):
        return jvp(frozen_f, (root,), (t,))[1]

    step = custom_linear_solve(jacobian, f(root), solve=lambda g, y: tangent_solve(g, y),
                               transpose_solve=lambda g, y: tangent_solve(g, y))
    x = _sub(root, step)
    return (x, aux) if has_aux else x
