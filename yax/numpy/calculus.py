"""yax.numpy differences, integrals and interpolation: diff, ediff1d, gradient, trapezoid, interp
and unwrap.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr, canon_axis
from yax.numpy._promote import promote_dtypes_inexact
from yax.numpy.searching import searchsorted

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp", "unwrap"]


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The n-th discrete difference along `axis` (booleans: `!=` of neighbours)."""
    a = arr("diff", a)
    if a.ndim == 0:
        raise errors.ShapeError("jnp.diff needs an array of rank >= 1")
    axis = canon_axis("diff", axis, a.ndim)
    n = int(n)
    if n < 0:
        raise ValueError(f"jnp.diff: order n must be non-negative, got {n}")
    parts = [_diff_extra(prepend, a, axis), a, _diff_extra(append, a, axis)]
    parts = [p for p in parts if p is not None]
    if len(parts) > 1:
        a = manipulation.concatenate(parts, axis=axis)
    for _ in range(n):
        m = a.shape[axis]
        hi = lax.slice_in_dim(a, 1, m, axis=axis)
        lo = lax.slice_in_dim(a, 0, max(m - 1, 0), axis=axis)
        a = ufuncs.not_equal(hi, lo) if dtypes.is_bool(a.dtype) else ufuncs.subtract(hi, lo)
    return a


def _diff_extra(extra, a, axis):
    """`prepend`/`append` of diff: scalars become one slice along `axis`."""
    if extra is None:
        return None
    e = arr("diff", extra)
    if e.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        e = manipulation.broadcast_to(e, tuple(shape))
    return e


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with optional extras."""
    a = manipulation.ravel(arr("ediff1d", ary))
    d = diff(a) if a.shape[0] else a
    parts = []
    if to_begin is not None:
        parts.append(manipulation.ravel(manipulation.astype(arr("ediff1d", to_begin), d.dtype)))
    parts.append(d)
    if to_end is not None:
        parts.append(manipulation.ravel(manipulation.astype(arr("ediff1d", to_end), d.dtype)))
    return manipulation.concatenate(parts) if len(parts) > 1 else d


def _gradient_axis(f, h, axis: int):
    n = f.shape[axis]
    if n < 2:
        raise ValueError(f"jnp.gradient: axis {axis} has size {n}; at least 2 points are needed")

    def sl(lo, hi):
        return lax.slice_in_dim(f, lo, hi, axis=axis)

    shape = [1] * f.ndim
    if np.ndim(h) == 0 and not (hasattr(h, "ndim") and h.ndim):
        first = (sl(1, 2) - sl(0, 1)) / h
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        mid = (sl(2, n) - sl(0, n - 2)) / (2.0 * h)
    else:  # coordinates along the axis: second-order accurate non-uniform differences
        x = arr("gradient", h)
        if x.shape != (n,):
            raise errors.ShapeError(f"jnp.gradient: coordinates along axis {axis} must have "
                                    f"shape ({n},), got {x.shape}")
        dx = diff(x)
        shape[axis] = -1
        first = (sl(1, 2) - sl(0, 1)) / dx[0]
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / dx[-1]
        dx1 = manipulation.reshape(dx[:-1], tuple(shape))
        dx2 = manipulation.reshape(dx[1:], tuple(shape))
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        mid = a * sl(0, n - 2) + b * sl(1, n - 1) + c * sl(2, n)
    return manipulation.concatenate([first, mid, last], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled values `f`: central differences inside, one-sided at the ends.

    varargs: one spacing for every axis, or one per axis (a scalar step or the coordinates).
    Returns one array per axis (a single array if only one axis)."""
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("jnp.gradient: only edge_order=1 is supported")
    f, = promote_dtypes_inexact(arr("gradient", f))
    f = arr("gradient", f)
    axes = tuple(range(f.ndim)) if axis is None else (
        (axis,) if np.ndim(axis) == 0 else tuple(axis))
    axes = tuple(canon_axis("gradient", ax, f.ndim) for ax in axes)
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise ValueError(f"jnp.gradient: {len(varargs)} spacings for {len(axes)} axes")
    out = [_gradient_axis(f, h, ax) for ax, h in zip(axes, spacing, strict=True)]
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of `y` along `axis` by the trapezoidal rule (samples at `x`, or step dx)."""
    y = arr("trapezoid", y)
    if x is None:
        y, = promote_dtypes_inexact(y)
        d = dx
    else:
        y, x = promote_dtypes_inexact(y, arr("trapezoid", x))
        d = diff(x, axis=axis if x.ndim > 1 else -1)
        if x.ndim == 1:
            shape = [1] * y.ndim
            shape[canon_axis("trapezoid", axis, y.ndim)] = -1
            d = manipulation.reshape(d, tuple(shape))
    axis = canon_axis("trapezoid", axis, y.ndim)
    n = y.shape[axis]
    avg = (lax.slice_in_dim(y, 1, n, axis=axis) + lax.slice_in_dim(y, 0, max(n - 1, 0),
                                                                   axis=axis)) * 0.5
    return reductions.sum(avg * d, axis=axis)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at `x` (xp increasing).

    Outside [xp[0], xp[-1]] the result is `left`/`right` (default: the end values of fp); with
    `period`, xp and x are taken modulo the period instead."""
    x, xp, fp = arr("interp", x), arr("interp", xp), arr("interp", fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise errors.ShapeError(f"jnp.interp: xp and fp must be 1-D of one length, got "
                                f"{xp.shape} and {fp.shape}")
    if xp.shape[0] == 0:
        raise ValueError("jnp.interp: xp and fp must not be empty")
    x, xp = promote_dtypes_inexact(x, xp)
    fp, = promote_dtypes_inexact(fp)
    x, xp, fp = arr("interp", x), arr("interp", xp), arr("interp", fp)
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("jnp.interp: left/right cannot be used with period")
        period = ufuncs.abs(manipulation.astype(arr("interp", period), x.dtype))
        x = ufuncs.remainder(x, period)
        xp = ufuncs.remainder(xp, period)
        xp, fp = lax.sort((xp, fp), dimension=0, num_keys=1)
        xp = manipulation.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = manipulation.concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    i = ufuncs.clip(searchsorted(xp, x, side="right"), 1, max(n - 1, 1))
    x0, x1 = xp[i - 1], xp[i] if n > 1 else xp[i - 1]
    f0, f1 = fp[i - 1], fp[i] if n > 1 else fp[i - 1]
    dx = x1 - x0
    safe = ufuncs.where(dx == 0, creation.ones((), dx.dtype), dx)
    t = manipulation.astype((x - x0) / safe, x.dtype)
    f = ufuncs.where(dx == 0, f1, f0 + manipulation.astype(t, fp.dtype) * (f1 - f0))
    if period is None:
        lo = fp[0] if left is None else manipulation.astype(arr("interp", left), fp.dtype)
        hi = fp[-1] if right is None else manipulation.astype(arr("interp", right), fp.dtype)
        f = ufuncs.where(x < xp[0], lo, f)
        f = ufuncs.where(x > xp[-1], hi, f)
    return f


def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    """Remove jumps larger than `discont` (default period/2) along `axis` by adding multiples
    of `period`."""
    p, = promote_dtypes_inexact(arr("unwrap", p))
    p = arr("unwrap", p)
    axis = canon_axis("unwrap", axis, p.ndim)
    half = period / 2
    discont = half if discont is None else discont
    dd = diff(p, axis=axis)
    ddmod = ufuncs.remainder(dd + half, period) - half
    # a jump of exactly +period/2 stays positive, as in NumPy
    ddmod = ufuncs.where(ufuncs.logical_and(ddmod == -half, dd > 0), half + ddmod * 0, ddmod)
    correct = ufuncs.where(ufuncs.abs(dd) < discont, ddmod * 0, ddmod - dd)
    first = lax.slice_in_dim(p, 0, 1, axis=axis)
    rest = lax.slice_in_dim(p, 1, p.shape[axis], axis=axis) + reductions.cumsum(correct,
                                                                                axis=axis)
    return manipulation.concatenate([first, rest], axis=axis)
