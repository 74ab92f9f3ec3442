"""BFGS and L-BFGS minimisation, each one `while_loop` (so they run under `jit` and `vmap`).

BFGS keeps a dense inverse-Hessian estimate H, steps along -H g with a strong-Wolfe line search
and updates H with the secant pair (s, y):
  H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T,   rho = 1 / (y . s).
L-BFGS keeps the last `maxcor` pairs instead and applies H by the two-loop recursion.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.scipy.optimize._line_search import line_search
from yax.transforms.ad import value_and_grad


class OptimizeResults(NamedTuple):
    """The result of `minimize` (the fields of jax.scipy.optimize.OptimizeResults).

    x: the solution; success: whether it converged; status: 0 converged, 1 the iteration limit
    was reached, 3 the line search failed; fun, jac: value and gradient at x; hess_inv: the
    inverse Hessian estimate (None for L-BFGS); nfev, njev: evaluations of f and its gradient;
    nit: iterations.
    """
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def _norm(g, order):
    return jnp.linalg.norm(g, ord=order)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 10) -> OptimizeResults:
    """BFGS from `x0` (1-D) until the gradient's `norm` is below `gtol` or `maxiter`
    (default 200 * size) iterations."""
    x0 = jnp.asarray(x0)
    d = x0.shape[0]
    maxiter = 200 * d if maxiter is None else maxiter
    f0, g0 = value_and_grad(fun)(x0)
    eye = jnp.eye(d, dtype=x0.dtype)
    init = dict(converged=_norm(g0, norm) < gtol, failed=np.bool_(False), k=np.int32(0),
                nfev=np.int32(1), ngev=np.int32(1), x=x0, f=f0, g=g0, H=eye,
                old_old_f=f0 + _norm(g0, 2) / 2, ls_status=np.int32(0))

    def cond(s):
        return ~s["converged"] & ~s["failed"] & (s["k"] < maxiter)

    def body(s):
        p = -s["H"] @ s["g"]
        ls = line_search(fun, s["x"], p, old_fval=s["f"], old_old_fval=s["old_old_f"],
                         gfk=s["g"], maxiter=line_search_maxiter)
        step = ls.a_k * p
        x_new, g_new = s["x"] + step, ls.g_k
        y = g_new - s["g"]
        sy = jnp.dot(y, step)
        rho = jnp.where(sy != 0, 1 / jnp.where(sy != 0, sy, 1.0), 1000.0)
        left = eye - rho * jnp.outer(step, y)
        h_new = left @ s["H"] @ left.T + rho * jnp.outer(step, step)
        ok = ~ls.failed
        keep = lambda new, old: jnp.where(ok, new, old)  # noqa: E731
        return dict(converged=ok & (_norm(g_new, norm) < gtol), failed=ls.failed,
                    k=s["k"] + 1, nfev=s["nfev"] + ls.nfev, ngev=s["ngev"] + ls.ngev,
                    x=keep(x_new, s["x"]), f=keep(ls.f_k, s["f"]), g=keep(g_new, s["g"]),
                    H=keep(h_new, s["H"]), old_old_f=s["f"], ls_status=ls.status)
    s = lax.while_loop(cond, body, init)
    status = jnp.where(s["converged"], 0, jnp.where(s["failed"], 3, 1)).astype(np.int32)
    return OptimizeResults(x=s["x"], success=s["converged"], status=status, fun=s["f"],
                           jac=s["g"], hess_inv=s["H"], nfev=s["nfev"], njev=s["ngev"],
                           nit=s["k"])


def _two_loop(g, s_hist, y_hist, rho_hist, count, maxcor):
    """H g by the L-BFGS two-loop recursion over the `count` most recent stored pairs (rows of
    the circular histories, newest at index (count - 1) % maxcor)."""
    def newest_first(i):
        return jnp.remainder(count - 1 - i, maxcor)

    def backward(i, carry):
        q, alphas = carry
        j = newest_first(i)
        use = i < jnp.minimum(count, maxcor)
        alpha = jnp.where(use, rho_hist[j] * jnp.dot(s_hist[j], q), 0.0)
        return q - alpha * y_hist[j], alphas.at[i].set(alpha)
    q, alphas = lax.fori_loop(0, maxcor, backward, (g, jnp.zeros(maxcor, g.dtype)))
    newest = newest_first(0)
    yy = jnp.dot(y_hist[newest], y_hist[newest])
    gamma = jnp.where((count > 0) & (yy > 0), jnp.dot(s_hist[newest], y_hist[newest]) /
                      jnp.where(yy > 0, yy, 1.0), 1.0)
    r = gamma * q

    def forward(i, r):
        k = maxcor - 1 - i
        j = newest_first(k)
        use = k < jnp.minimum(count, maxcor)
        beta = rho_hist[j] * jnp.dot(y_hist[j], r)
        return r + jnp.where(use, (alphas[k] - beta), 0.0) * s_hist[j]
    return lax.fori_loop(0, maxcor, forward, r)


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor: int = 10, ftol: float = 2.2e-9,
                   gtol: float = 1e-5, maxfun=None, maxgrad=None,
                   maxls: int = 20) -> OptimizeResults:
    """L-BFGS from `x0` (1-D) keeping `maxcor` secant pairs; stops when the gradient's norm is
    below `gtol`, the relative decrease of f is below `ftol`, or after `maxiter` (default
    200 * size) iterations or `maxfun` function evaluations."""
    x0 = jnp.asarray(x0)
    d = x0.shape[0]
    maxiter = 200 * d if maxiter is None else maxiter
    maxfun = 10 ** 9 if maxfun is None else maxfun
    f0, g0 = value_and_grad(fun)(x0)
    zeros = jnp.zeros((maxcor, d), x0.dtype)
    init = dict(converged=_norm(g0, norm) < gtol, failed=np.bool_(False), k=np.int32(0),
                nfev=np.int32(1), x=x0, f=f0, g=g0, s_hist=zeros, y_hist=zeros,
                rho_hist=jnp.zeros(maxcor, x0.dtype), count=np.int32(0),
                old_old_f=f0 + _norm(g0, 2) / 2)

    def cond(s):
        return ~s["converged"] & ~s["failed"] & (s["k"] < maxiter) & (s["nfev"] < maxfun)

    def body(s):
        p = -_two_loop(s["g"], s["s_hist"], s["y_hist"], s["rho_hist"], s["count"], maxcor)
        ls = line_search(fun, s["x"], p, old_fval=s["f"], old_old_fval=s["old_old_f"],
                         gfk=s["g"], maxiter=maxls)
        step = ls.a_k * p
        y = ls.g_k - s["g"]
        sy = jnp.dot(y, step)
        slot = jnp.remainder(s["count"], maxcor)
        ok = ~ls.failed
        store = ok & (sy > 0)
        keep = lambda new, old: jnp.where(ok, new, old)  # noqa: E731
        decrease = (s["f"] - ls.f_k) / jnp.maximum(jnp.maximum(jnp.abs(s["f"]),
                                                               jnp.abs(ls.f_k)), 1.0)
        return dict(
            converged=ok & ((_norm(ls.g_k, norm) < gtol) | (decrease < ftol)),
            failed=ls.failed, k=s["k"] + 1, nfev=s["nfev"] + ls.nfev,
            x=keep(s["x"] + step, s["x"]), f=keep(ls.f_k, s["f"]), g=keep(ls.g_k, s["g"]),
            s_hist=jnp.where(store, s["s_hist"].at[slot].set(step), s["s_hist"]),
            y_hist=jnp.where(store, s["y_hist"].at[slot].set(y), s["y_hist"]),
            rho_hist=jnp.where(store, s["rho_hist"].at[slot].set(1 / jnp.where(sy > 0, sy, 1.0)),
                               s["rho_hist"]),
            count=s["count"] + store.astype(np.int32), old_old_f=s["f"])
    s = lax.while_loop(cond, body, init)
    status = jnp.where(s["converged"], 0, jnp.where(s["failed"], 3, 1)).astype(np.int32)
    return OptimizeResults(x=s["x"], success=s["converged"], status=status, fun=s["f"],
                           jac=s["g"], hess_inv=None, nfev=s["nfev"], njev=s["nfev"],
                           nit=s["k"])
