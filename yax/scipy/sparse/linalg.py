"""yax.scipy.sparse.linalg: iterative solvers of A x = b (`cg`, `gmres`, `bicgstab`), as JAX's.

A (and the preconditioner M) is a matrix or a function (a linear operator); b and x0 are arrays
or pytrees of arrays. Each solver is one `lax.custom_linear_solve`, so it is differentiated
implicitly, never through its iterations: the derivatives with respect to b and to parameters
closed over by A are themselves linear solves with the same solver (of the transposed operator
in reverse mode), right at every order. The iterations are `while_loop`s, so the solvers work
under `jit` and `vmap` (each example of a batch may take its own number of steps). Called
eagerly with a matrix A (and M) of concrete Arrays, a solver runs as one program compiled once
per shape and options (`compiled_when_eager`); a function A is traced at every call.
"""

from __future__ import annotations

import functools

from yax import errors, tree_util
from yax.lax.linear_solve import Role, linear_solve
from yax.numpy.linalg._util import compiled_when_eager
from yax.primitives.linear_solve import LinearSolveParts
from yax.scipy.sparse._bicgstab import bicgstab_flat
from yax.scipy.sparse._cg import cg_flat
from yax.scipy.sparse._gmres import gmres_flat
from yax.scipy.sparse._vectors import FlatSpace, as_operator, checked_inputs

__all__ = ["cg", "gmres", "bicgstab"]


def _is_real(b) -> bool:
    return all(x.dtype.kind != "c" for x in tree_util.tree_leaves(b))


def _isolve(name, flat_solver, A, b, x0, M, maxiter, *, symmetric=False, **options):
    """x solving A x = b by `flat_solver`, as one custom_linear_solve (the same solver, run on
    the transposed operator, solves the transposed system for reverse mode)."""
    b, x0 = checked_inputs(name, A, b, x0)
    space = FlatSpace.of(b)
    matvec = as_operator(name, "A", A, b)
    precondition = as_operator(name, "M", M, b)
    if maxiter is None:
        maxiter = 10 * space.size

    def solve(operator, rhs):
        flat = flat_solver(space.flat_map(operator), space.flat_map(precondition),
                           space.ravel(rhs), space.ravel(x0), maxiter=maxiter, **options)
        return space.unravel(flat)

    roles = LinearSolveParts(Role(f"{name}: A", A if callable(A) else matvec), None,
                             Role(f"{name}: the solver", solve),
                             Role(f"{name}: the solver of the transposed system", solve))
    symmetric = symmetric and _is_real(b)
    x = linear_solve(matvec, b, solve, solve, symmetric=symmetric, roles=roles)
    return x, None


@compiled_when_eager
def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by (preconditioned) conjugate gradients; A must be Hermitian positive
    definite, and so must M.

    Args:
      A: a square matrix, or a function x -> A x of pytrees shaped like b.
      b: the right-hand side, an array or a pytree of arrays.
      x0: the starting guess, structured like b (default zeros).
      tol, atol: stop when norm(b - A x) <= max(tol * norm(b), atol).
      maxiter: the most iterations (default 10 * the size of b).
      M: a preconditioner approximating A^-1 (matrix or function), Hermitian positive definite.
    Returns:
      (x, None), as JAX (SciPy's convergence info is not computed).

    Example:
      >>> import yax.numpy as jnp
      >>> x, _ = cg(jnp.array([[4.0, 1.0], [1.0, 3.0]]), jnp.array([1.0, 2.0]))
      >>> [round(float(v), 4) for v in x]
      [0.0909, 0.6364]
    """
    return _isolve("cg", functools.partial(cg_flat, tol=tol, atol=atol), A, b, x0, M, maxiter,
                   symmetric=True)


@compiled_when_eager
def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by (preconditioned) BiCGSTAB, for a general nonsingular A.

    Args:
      A: a square matrix, or a function x -> A x of pytrees shaped like b.
      b: the right-hand side, an array or a pytree of arrays.
      x0: the starting guess, structured like b (default zeros).
      tol, atol: stop when norm(b - A x) <= max(tol * norm(b), atol).
      maxiter: the most iterations (default 10 * the size of b).
      M: a preconditioner approximating A^-1 (matrix or function).
    Returns:
      (x, None), as JAX.

    Example:
      >>> import yax.numpy as jnp
      >>> x, _ = bicgstab(jnp.array([[3.0, 1.0], [-1.0, 2.0]]), jnp.array([4.0, 1.0]))
      >>> [round(float(v), 4) for v in x]
      [1.0, 1.0]
    """
    return _isolve("bicgstab", functools.partial(bicgstab_flat, tol=tol, atol=atol), A, b, x0,
                   M, maxiter)


@compiled_when_eager
def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve A x = b by restarted GMRES, for a general nonsingular A.

    Args:
      A: a square matrix, or a function x -> A x of pytrees shaped like b.
      b: the right-hand side, an array or a pytree of arrays.
      x0: the starting guess, structured like b (default zeros).
      tol, atol: stop when norm(b - A x) <= max(tol * norm(b), atol) (measured on the
        preconditioned residual, scaled to that test).
      restart: the size of the Krylov space built before each restart (at most the size of b).
      maxiter: the most restart cycles (default 10 * the size of b).
      M: a (left) preconditioner approximating A^-1 (matrix or function).
      solve_method: "batched" (the least-squares problem solved once per cycle) or
        "incremental" (Givens rotations as the space grows, stopping a cycle once converged).
    Returns:
      (x, None), as JAX.

    Example:
      >>> import yax.numpy as jnp
      >>> x, _ = gmres(jnp.array([[3.0, 1.0], [-1.0, 2.0]]), jnp.array([4.0, 1.0]))
      >>> [round(float(v), 4) for v in x]
      [1.0, 1.0]
    """
    if solve_method not in ("batched", "incremental"):
        raise errors.InvalidArgumentError(f"gmres: solve_method must be 'batched' or "
                                          f"'incremental', got {solve_method!r}")
    solver = functools.partial(gmres_flat, tol=tol, atol=atol, restart=int(restart),
                               solve_method=solve_method)
    return _isolve("gmres", solver, A, b, x0, M, maxiter)
