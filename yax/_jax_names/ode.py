"""`jax.experimental.ode` (alias mode serves this module under that name): `odeint`,
adaptive integration of `dy/dt = func(y, t, *args)`.

The integrator is Dormand-Prince 5(4) with error control, written with `lax.scan` (one step per
output time) and `lax.while_loop` (adaptive steps inside it, the last one shortened to land on the
output time exactly, so there is no interpolation). Reverse-mode derivatives come from the
adjoint method (a `custom_vjp`): the backward pass integrates the state, its adjoint and the
parameters' cotangent backwards in time, so memory does not grow with the number of steps.
Forward mode is not offered (as in jax, the custom_vjp has no jvp).
"""

from __future__ import annotations

import functools

import numpy as np

from yax import lax
from yax import numpy as jnp
from yax.flatten_util import ravel_pytree
from yax.transforms.ad import vjp
from yax.transforms.custom_derivatives import custom_vjp
from yax.transforms.vmap import vmap

__all__ = ["odeint"]

# Dormand-Prince 5(4): nodes, stage weights, the 5th-order solution and its error estimate
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_B5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_B4 = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
_ERR = _B5 - _B4


def _step(fun, y, f0, t, dt):
    """One Dormand-Prince step from (t, y) with f0 = fun(y, t): (y_next, f_next, error)."""
    ks = [f0]
    for i in range(1, 7):
        yi = y + dt * sum(a * k for a, k in zip(_A[i], ks) if a != 0)
        ks.append(fun(yi, t + _C[i] * dt))
    y_next = y + dt * sum(b * k for b, k in zip(_B5, ks) if b != 0)
    err = dt * sum(e * k for e, k in zip(_ERR, ks) if e != 0)
    return y_next, ks[-1], err


def _initial_dt(fun, y0, t0, f0, rtol, atol):
    # Hairer, Norsett & Wanner's starting step: a fraction of |y| / |y'|, refined by one
    # Euler step's change of the derivative
    scale = atol + jnp.abs(y0) * rtol
    d0, d1 = jnp.linalg.norm(y0 / scale), jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / 5))
    return jnp.minimum(100 * h0, h1)


def _integrate(fun, y0, ts, rtol, atol, mxstep, hmax):
    """States at each time of `ts` (increasing) of dy/dt = fun(y, t), y(ts[0]) = y0 (flat)."""
    f0 = fun(y0, ts[0])
    dt0 = _initial_dt(fun, y0, ts[0], f0, rtol, atol)

    def to_time(carry, t_end):
        y, f, t, dt = carry

        def not_there(state):
            _, _, t_, _, steps = state
            return (t_ < t_end) & (steps < mxstep)

        def attempt(state):
            y_, f_, t_, dt_, steps = state
            h = jnp.minimum(jnp.minimum(dt_, hmax), t_end - t_)  # land on t_end exactly
            y_new, f_new, err = _step(fun, y_, f_, t_, h)
            scale = atol + rtol * jnp.maximum(jnp.abs(y_), jnp.abs(y_new))
            ratio = jnp.sqrt(jnp.mean((err / scale) ** 2))
            accept = ratio <= 1.0
            # the next step: grow or shrink with the error (5th order), within [0.2, 10]
            factor = jnp.clip(0.9 * jnp.where(ratio > 0, ratio, 1e-10) ** (-1 / 5), 0.2, 10.0)
            h_next = jnp.where(accept & (h < dt_), dt_, h * factor)  # a shortened last step
            return (jnp.where(accept, y_new, y_), jnp.where(accept, f_new, f_),
                    jnp.where(accept, t_ + h, t_), h_next, steps + 1)

        y, f, t, dt, _ = lax.while_loop(not_there, attempt, (y, f, t, dt, 0))
        return (y, f, t, dt), y

    _, ys = lax.scan(to_time, (y0, f0, ts[0], dt0), ts[1:])
    return jnp.concatenate([y0[None], ys], axis=0)


def odeint(func, y0, t, *args, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep=float("inf"), hmax=float("inf")):
    """Solve dy/dt = func(y, t, *args) from y(t[0]) = y0 and return y at each time of `t`.

    Args:
      func: `func(y, t, *args)` returning dy/dt, a pytree like `y`.
      y0: the initial state, an array or pytree of arrays (floating point).
      t: the increasing 1-D array of output times; `t[0]` is the start.
      *args: extra arguments of `func` (arrays or pytrees of them), differentiable.
      rtol, atol: the relative and absolute error tolerances of each step.
      mxstep: the most steps between two output times. hmax: the largest step.

    Returns:
      The states at each time of `t`: `y0`'s pytree with a leading axis of len(t).

    Differentiable in reverse mode in `y0`, `t` and `args` (the adjoint method).
    """
    t = jnp.asarray(t)
    flat_y0, unravel_y = ravel_pytree(y0)
    flat_args, unravel_args = ravel_pytree(args)
    mxstep = np.inf if mxstep is None else mxstep

    def f_flat(y, tt, a):
        return ravel_pytree(func(unravel_y(y), tt, *unravel_args(a)))[0]

    @custom_vjp
    def solve(y, ts, a):
        return _integrate(lambda yy, tt: f_flat(yy, tt, a), y, ts, rtol, atol, mxstep, hmax)

    def solve_fwd(y, ts, a):
        ys = solve(y, ts, a)
        return ys, (ys, ts, a)

    solve.defvjp(solve_fwd, functools.partial(_adjoint, f_flat, (rtol, atol, mxstep, hmax)))
    ys = solve(flat_y0, t, flat_args)
    return vmap(unravel_y)(ys)  # each leaf of y0's pytree with a leading axis of len(t)


def _adjoint(f_flat, controls, res, g):
    """The adjoint pass: the cotangents of (y0, t, args) of `g`, the cotangent of the states
    at each output time."""
    rtol, atol, mxstep, hmax = controls
    ys, ts, a = res
    n = ys.shape[1]

    def augmented(state, s):  # backwards in time: s = -t
        y, adj = state[:n], state[n:2 * n]
        fy, pullback = vjp(lambda yy, aa: f_flat(yy, -s, aa), y, a)
        adj_y, adj_a = pullback(adj)
        return jnp.concatenate([-fy, adj_y, adj_a])

    def back_one(carry, i):
        adj, adj_a = carry
        adj = adj + g[i]
        # dy_i/dt_i = f(y_i, t_i): the cotangent of t_i
        t_bar_i = jnp.dot(g[i], f_flat(ys[i], ts[i], a))
        start = jnp.concatenate([ys[i], adj, adj_a])
        path = _integrate(augmented, start, jnp.stack([-ts[i], -ts[i - 1]]), rtol, atol,
                          mxstep, hmax)
        end = path[-1]
        return (end[n:2 * n], end[2 * n:]), t_bar_i

    init = (jnp.zeros_like(ys[0]), jnp.zeros_like(a))
    (adj, adj_a), t_bars = lax.scan(back_one, init, jnp.arange(len(ts) - 1, 0, -1))
    # ys[0] is y0 whatever t[0] is; the later states move with the start time
    t_bar0 = -jnp.dot(adj, f_flat(ys[0], ts[0], a))
    adj = adj + g[0]
    t_bar = jnp.concatenate([t_bar0[None], t_bars[::-1]])
    return adj, t_bar, adj_a
