"""yax.lax.custom_linear_solve: a linear solve differentiated implicitly, not through its solver.

The user's matvec, solve and transpose_solve are traced once into jaxprs (each on a vector shaped
like b) and bound as one `custom_linear_solve` primitive (yax/primitives/linear_solve.py), whose
JVP and transpose are custom_linear_solves again: right at every order, whatever `solve` does.
The transposed map (vecmat) is derived from matvec's jaxpr by transposition.
"""

from __future__ import annotations

from dataclasses import dataclass

from yax import errors, tree_util
from yax.core.trace import bind
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.transpose import transpose_jaxpr
from yax.primitives.linear_solve import LinearSolveParts, linear_solve_p
from yax.runtime.values import as_operand, aval_of

__all__ = ["custom_linear_solve"]


def describe(fun) -> str:
    """`name` (file:line) of a user function, for error messages."""
    name = getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or repr(fun)
    code = getattr(fun, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"`{name}`{where}"


@dataclass(frozen=True)
class Role:
    """What a traced user function is called in messages, and what it must return."""

    who: str          # e.g. "custom_linear_solve: solve"
    fun: object       # the user's function (for its name)
    like: str = "b"   # what its result must be shaped like

    def error(self, what: str) -> errors.CustomDerivativeError:
        return errors.CustomDerivativeError(f"{self.who} {describe(self.fun)} {what}")


def _leaf_types(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _checked_leaves(result, tree, avals, role: Role) -> list:
    """The leaves of `result`, which must have the structure `tree` and exactly `avals`' shapes
    and dtypes (a solver's answer is a vector of the same space as its right-hand side)."""
    leaves, got_tree = tree_util.tree_flatten(result)
    if got_tree != tree:
        raise role.error(f"returned a value of structure {got_tree}; it must return one "
                         f"structured like {role.like}: {tree}")
    leaves = [as_operand(x) for x in leaves]
    got = [aval_of(x) for x in leaves]
    if any(g.shape != w.shape or g.dtype != w.dtype for g, w in zip(got, avals, strict=True)):
        raise role.error(f"returned {_leaf_types(got)}; it must return leaves shaped and typed "
                         f"like {role.like}: {_leaf_types(avals)}")
    return leaves


def split_aux(result, has_aux: bool, role: Role):
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise role.error("is used with has_aux=True, so it must return a pair (solution, aux)")
    return result[0], result[1]


def trace_vector_fun(fun, tree, avals, role: Role, has_aux: bool = False):
    """`fun` of one pytree (structure `tree`, leaves of `avals`) traced into a const-free jaxpr
    from (consts..., leaves...) to (leaves..., aux leaves...). Returns (jaxpr, consts,
    aux_tree)."""
    aux_box = []

    def flat(*xs):
        out, aux = split_aux(fun(tree_util.tree_unflatten(tree, list(xs))), has_aux, role)
        leaves = _checked_leaves(out, tree, avals, role)
        aux_leaves, aux_tree = tree_util.tree_flatten(aux)
        aux_box.append(aux_tree)
        return [*leaves, *(as_operand(a) for a in aux_leaves)]

    closed = trace_to_jaxpr(flat, list(avals), name=getattr(fun, "__name__", "fun"))
    jaxpr, consts = closure_convert(closed)
    return jaxpr, consts, (aux_box[0] if has_aux else None)


def as_function(jaxpr, consts, tree):
    """The traced vector function back as a Python function of one pytree."""
    def fun(v):
        outs = eval_jaxpr(jaxpr.jaxpr, [], [*consts, *tree_util.tree_leaves(v)])
        return tree_util.tree_unflatten(tree, outs[:tree.num_leaves])
    return fun


def _transposed(matvec, consts, role: Role):
    """vecmat: matvec's jaxpr transposed in its vector argument (consts: matvec's own)."""
    mask = [False] * len(consts) + [True] * (len(matvec.in_avals) - len(consts))
    try:
        transposed = transpose_jaxpr(matvec, mask)
    except errors.NotImplementedRuleError as e:
        raise role.error(f"is not linear in its argument, so it cannot be transposed for "
                         f"transpose_solve ({e.bare_message})") from e
    jaxpr, extra = closure_convert(transposed)
    return jaxpr, [*extra, *consts]


def linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False, *,
                 roles=None):
    """custom_linear_solve with the roles (names in error messages) given by the caller."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    roles = roles or LinearSolveParts(
        Role("custom_linear_solve: matvec", matvec), None,
        Role("custom_linear_solve: solve", solve),
        Role("custom_linear_solve: transpose_solve", transpose_solve))
    b_leaves, tree = tree_util.tree_flatten(b)
    b_leaves = [as_operand(x) for x in b_leaves]
    avals = [aval_of(x) for x in b_leaves]
    mv_jaxpr, mv_consts, _ = trace_vector_fun(matvec, tree, avals, roles.matvec)
    s_jaxpr, s_consts, aux_tree = trace_vector_fun(lambda v: solve(matvec, v), tree, avals,
                                                   roles.solve, has_aux)
    vm_jaxpr, vm_consts, t_jaxpr, t_consts = None, [], None, []
    if transpose_solve is not None:
        vm_jaxpr, vm_consts = ((mv_jaxpr, mv_consts) if symmetric
                               else _transposed(mv_jaxpr, mv_consts, roles.matvec))
        vecmat = as_function(vm_jaxpr, vm_consts, tree)
        t_jaxpr, t_consts, _ = trace_vector_fun(lambda v: transpose_solve(vecmat, v), tree,
                                                avals, roles.transpose_solve, has_aux)
    groups = LinearSolveParts(mv_consts, vm_consts, s_consts, t_consts)
    names = LinearSolveParts(*(describe(r.fun) if r is not None else "" for r in
                               (roles.matvec, roles.matvec, roles.solve, roles.transpose_solve)))
    outs = bind(linear_solve_p, *[c for g in groups for c in g], *b_leaves,
                jaxprs=LinearSolveParts(mv_jaxpr, vm_jaxpr, s_jaxpr, t_jaxpr),
                const_counts=LinearSolveParts(*(len(g) for g in groups)), names=names)
    x = tree_util.tree_unflatten(tree, outs[:len(b_leaves)])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_tree, outs[len(b_leaves):])
    return x


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric: bool = False,
                        has_aux: bool = False):
    """Solve matvec(x) = b with `solve`, differentiating implicitly (as jax.lax's).

    Args:
      matvec: the linear map x -> A x (closing over any parameters to differentiate).
      b: the right-hand side, a pytree of arrays; x has its structure, shapes and dtypes.
      solve: `solve(matvec, b) -> x` with matvec(x) = b (any algorithm, a while_loop say; it is
        never differentiated).
      transpose_solve: `transpose_solve(vecmat, ct) -> y` with vecmat(y) = ct for the transposed
        map (vecmat is derived from matvec); needed for reverse mode unless `symmetric`.
      symmetric: A is symmetric, so `solve` and matvec serve for the transposed system too.
      has_aux: `solve` (and transpose_solve) return (x, aux); aux is returned as is, with a zero
        derivative.
    Returns:
      x (and aux when has_aux), with dx = A^-1 (db - dA x); every derivative is a
      custom_linear_solve again, so derivatives of any order are right.

    Example: `custom_linear_solve(lambda x: a @ x, b, lambda mv, b: jnp.linalg.solve(a, b),
    symmetric=True)`.
    """
    return linear_solve(matvec, b, solve, transpose_solve, symmetric, has_aux)
