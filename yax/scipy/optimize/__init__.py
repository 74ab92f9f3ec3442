"""yax.scipy.optimize: `minimize` with BFGS (and an experimental L-BFGS, as JAX), returning
`OptimizeResults`; usable under `jit` and `vmap` (every loop is a `while_loop`)."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy.optimize._bfgs import OptimizeResults, minimize_bfgs, minimize_lbfgs
from yax.scipy.optimize._line_search import LineSearchResults, line_search

__all__ = ["minimize", "OptimizeResults", "line_search", "LineSearchResults"]


def minimize(fun, x0, args=(), *, method: str, tol=None, options=None) -> OptimizeResults:
    """Minimise the scalar function `fun(x, *args)` of a 1-D array from `x0`.

    Args:
      fun: the objective. x0: the start (1-D). args: extra arguments of `fun`.
      method: "BFGS" or "l-bfgs-experimental-do-not-rely-on-this" (as JAX; case-insensitive).
      tol: the gradient tolerance (`gtol`) unless `options` sets one.
      options: solver options: maxiter, norm, gtol, line_search_maxiter (BFGS); maxcor, ftol,
        maxfun, maxls (L-BFGS).
    Returns:
      OptimizeResults (x, success, status, fun, jac, hess_inv, nfev, njev, nit).

    Example:
      >>> result = minimize(lambda x: jnp.sum((x - 3.0) ** 2), jnp.zeros(2), method="BFGS")
      >>> bool(result.success), bool(jnp.allclose(result.x, 3.0))
      (True, True)
    """
    options = dict(options or {})
    if tol is not None:
        options.setdefault("gtol", tol)

    def objective(x):
        return fun(x, *args)
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be one-dimensional, got shape {x0.shape}")
    name = method.lower()
    if name == "bfgs":
        return minimize_bfgs(objective, x0, **options)
    if name == "l-bfgs-experimental-do-not-rely-on-this":
        return minimize_lbfgs(objective, x0, **options)
    raise ValueError(f"minimize: method {method!r} is not supported; use 'BFGS' or "
                     f"'l-bfgs-experimental-do-not-rely-on-this'")
