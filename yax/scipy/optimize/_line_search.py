"""A line search for the strong Wolfe conditions (Nocedal & Wright, Algorithms 3.5 and 3.6),
staged with `while_loop` so that it runs under `jit` and `vmap`.

Along the ray x + a p with phi(a) = f(x + a p), it looks for a step a satisfying
  sufficient decrease  phi(a) <= phi(0) + c1 a phi'(0)   and
  curvature            |phi'(a)| <= -c2 phi'(0).
A bracketing phase doubles the step until a bracket is found; a zoom phase then shrinks the
bracket by safeguarded cubic interpolation (bisection when the cubic's minimiser is unusable).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.transforms.ad import value_and_grad


class LineSearchResults(NamedTuple):
    """failed: no step met the conditions; nit: iterations; nfev/ngev: evaluations of f and its
    gradient; a_k: the step; f_k, g_k: value and gradient at x + a_k p; status: 0 success,
    1 the iteration limit was reached, 2 the bracket collapsed."""
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _cubic_min(a, fa, dfa, b, fb, dfb):
    """The minimiser of the cubic interpolating (a, fa, dfa) and (b, fb, dfb); NaN if none."""
    d1 = dfa + dfb - 3 * (fa - fb) / (a - b)
    radicand = d1 * d1 - dfa * dfb
    d2 = jnp.sign(b - a) * jnp.sqrt(jnp.where(radicand >= 0, radicand, jnp.nan))
    return b - (b - a) * (dfb + d2 - d1) / (dfb - dfa + 2 * d2)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """Find a step along `pk` from `xk` meeting the strong Wolfe conditions for `f`.

    Args:
      f: scalar function of one array. xk: the start. pk: the search direction (a descent
      direction). old_fval, gfk: f and its gradient at xk (computed if None). old_old_fval:
      f at the previous iterate, to pick the first trial step as scipy does.
      c1, c2: the Wolfe constants. maxiter: bound on the iterations of each phase.
    Returns:
      LineSearchResults.
    """
    value_grad = value_and_grad(f)
    if old_fval is None or gfk is None:
        old_fval, gfk = value_grad(xk)
    dtype = jnp.result_type(xk)
    phi0 = jnp.asarray(old_fval, dtype)
    dphi0 = jnp.dot(gfk, pk)

    def phi(a):
        value, grad = value_grad(xk + a * pk)
        return value, grad, jnp.dot(grad, pk)

    first = jnp.asarray(1.0, dtype)
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
        first = jnp.where((guess > 0) & jnp.isfinite(guess), jnp.minimum(guess, 1.0), 1.0)
    zero = jnp.zeros((), dtype)
    bracket = _bracket(phi, phi0, dphi0, gfk, first, zero, c1, c2, maxiter)
    zoomed = _zoom(phi, phi0, dphi0, bracket, c1, c2, maxiter)
    done_early = bracket["done"]
    pick = lambda name: jnp.where(done_early, bracket[name], zoomed[name])  # noqa: E731
    failed = jnp.where(done_early, False, zoomed["failed"])
    status = jnp.where(failed, jnp.where(zoomed["collapsed"], 2, 1), 0)
    nfev = bracket["nfev"] + jnp.where(done_early, 0, zoomed["nfev"])
    g_k = jnp.where(done_early, bracket["star_g"], zoomed["star_g"])
    return LineSearchResults(failed=failed, nit=bracket["i"] + zoomed["j"], nfev=nfev,
                             ngev=nfev, k=bracket["i"] + zoomed["j"], a_k=pick("star_a"),
                             f_k=pick("star_phi"), g_k=g_k, status=status)


def _bracket(phi, phi0, dphi0, g0, first, zero, c1, c2, maxiter):
    """Algorithm 3.5: grow the step until it is acceptable or a bracket [lo, hi] is found."""
    init = dict(i=np.int32(0), a_prev=zero, phi_prev=phi0, dphi_prev=dphi0, g_prev=g0,
                a=first, done=np.bool_(False), zoom=np.bool_(False),
                lo=zero, phi_lo=phi0, dphi_lo=dphi0, g_lo=g0,
                hi=zero, phi_hi=phi0, dphi_hi=dphi0,
                star_a=zero, star_phi=phi0, star_g=g0, nfev=np.int32(0))

    def cond(s):
        return ~s["done"] & ~s["zoom"] & (s["i"] < maxiter)

    def body(s):
        phi_a, g_a, dphi_a = phi(s["a"])
        too_high = (phi_a > phi0 + c1 * s["a"] * dphi0) | ((phi_a >= s["phi_prev"]) & (s["i"] > 0))
        curvature = jnp.abs(dphi_a) <= -c2 * dphi0
        done = ~too_high & curvature
        rising = ~too_high & ~curvature & (dphi_a >= 0)
        zoom = too_high | rising
        # too_high: bracket [prev, a]; rising: bracket [a, prev]
        sel = lambda p, q: jnp.where(too_high, p, q)  # noqa: E731
        new = dict(s)
        new.update(
            lo=sel(s["a_prev"], s["a"]), phi_lo=sel(s["phi_prev"], phi_a),
            dphi_lo=sel(s["dphi_prev"], dphi_a), g_lo=jnp.where(too_high, s["g_prev"], g_a),
            hi=sel(s["a"], s["a_prev"]), phi_hi=sel(phi_a, s["phi_prev"]),
            dphi_hi=sel(dphi_a, s["dphi_prev"]),
            star_a=jnp.where(done, s["a"], s["star_a"]),
            star_phi=jnp.where(done, phi_a, s["star_phi"]),
            star_g=jnp.where(done, g_a, s["star_g"]),
            done=done, zoom=zoom, i=s["i"] + 1, nfev=s["nfev"] + 1,
            a_prev=s["a"], phi_prev=phi_a, dphi_prev=dphi_a, g_prev=g_a, a=2 * s["a"])
        return new
    return lax.while_loop(cond, body, init)


def _zoom(phi, phi0, dphi0, b, c1, c2, maxiter):
    """Algorithm 3.6: shrink [lo, hi] (lo meets sufficient decrease) until the curvature
    condition holds at a trial step."""
    init = dict(j=np.int32(0), lo=b["lo"], phi_lo=b["phi_lo"], dphi_lo=b["dphi_lo"],
                g_lo=b["g_lo"], hi=b["hi"], phi_hi=b["phi_hi"], dphi_hi=b["dphi_hi"],
                done=~b["zoom"], failed=np.bool_(False), collapsed=np.bool_(False),
                star_a=b["lo"], star_phi=b["phi_lo"], star_g=b["g_lo"], nfev=np.int32(0))

    def cond(s):
        return ~s["done"] & (s["j"] < maxiter)

    def body(s):
        lo, hi = s["lo"], s["hi"]
        width = jnp.abs(hi - lo)
        cubic = _cubic_min(lo, s["phi_lo"], s["dphi_lo"], hi, s["phi_hi"], s["dphi_hi"])
        low_end, high_end = jnp.minimum(lo, hi), jnp.maximum(lo, hi)
        usable = (cubic > low_end + 0.1 * width) & (cubic < high_end - 0.1 * width)
        a = jnp.where(usable, cubic, 0.5 * (lo + hi))
        phi_a, g_a, dphi_a = phi(a)
        shrink_hi = (phi_a > phi0 + c1 * a * dphi0) | (phi_a >= s["phi_lo"])
        curvature = jnp.abs(dphi_a) <= -c2 * dphi0
        done = ~shrink_hi & curvature
        flip = ~shrink_hi & ~curvature & (dphi_a * (hi - lo) >= 0)
        move_lo = ~shrink_hi
        new = dict(s)
        new.update(
            hi=jnp.where(shrink_hi, a, jnp.where(flip, lo, hi)),
            phi_hi=jnp.where(shrink_hi, phi_a, jnp.where(flip, s["phi_lo"], s["phi_hi"])),
            dphi_hi=jnp.where(shrink_hi, dphi_a, jnp.where(flip, s["dphi_lo"], s["dphi_hi"])),
            lo=jnp.where(move_lo, a, lo), phi_lo=jnp.where(move_lo, phi_a, s["phi_lo"]),
            dphi_lo=jnp.where(move_lo, dphi_a, s["dphi_lo"]),
            g_lo=jnp.where(move_lo, g_a, s["g_lo"]),
            star_a=jnp.where(done, a, s["star_a"]), star_phi=jnp.where(done, phi_a, s["star_phi"]),
            star_g=jnp.where(done, g_a, s["star_g"]),
            j=s["j"] + 1, nfev=s["nfev"] + 1)
        collapsed = width < 1e-12 * jnp.maximum(high_end, 1.0)
        new["done"] = done | collapsed
        new["collapsed"] = collapsed & ~done
        new["failed"] = collapsed & ~done
        return new
    out = lax.while_loop(cond, body, init)
    out["failed"] = out["failed"] | ~out["done"]
    return out
