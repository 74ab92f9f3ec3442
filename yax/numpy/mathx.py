"""More yax.numpy math: differences and integrals (diff, ediff1d, gradient, trapezoid),
interpolation (interp), products (kron, cross), float decomposition (frexp, ldexp), integer
gcd/lcm, nan_to_num, the Bessel function i0, and predicates (isreal, iscomplex, array_equal,
array_equiv, isscalar, iscomplexobj, isrealobj).

frexp and ldexp work on the bit pattern (bitcast to an integer of the same width), so they are
exact for every float type including subnormals; gcd runs Euclid's algorithm in a while loop
that stops when every lane is done, so it batches under vmap.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.trace import Tracer
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._breadth_util import arr, canon_axis
from yax.numpy._promote import promote_dtypes, promote_dtypes_inexact
from yax.numpy.contractions import matmul
from yax.numpy.searching import searchsorted
from yax.runtime.array import Array

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp", "kron", "cross", "frexp",
           "ldexp", "gcd", "lcm", "nan_to_num", "i0", "isreal", "iscomplex", "isrealobj",
           "iscomplexobj", "array_equal", "array_equiv", "isscalar", "modf", "spacing", "angle",
           "unwrap", "bitwise_count", "hamming", "hanning", "blackman", "bartlett", "kaiser",
           "vecdot", "matvec", "vecmat", "iterable"]


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


def kron(a, b):
    """The Kronecker product: blocks a[i, j] * b."""
    a, b = promote_dtypes(arr("kron", a), arr("kron", b))
    a, b = arr("kron", a), arr("kron", b)
    nd = max(a.ndim, b.ndim)
    a = manipulation.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = manipulation.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # a on even axes, b on odd axes of a (2 * nd)-rank product, then merge the pairs
    a2 = manipulation.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b2 = manipulation.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    return manipulation.reshape(a2 * b2, tuple(p * q for p, q in zip(a.shape, b.shape,
                                                                    strict=True)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """The cross product of 2- or 3-vectors along the given axes (2-vectors give the z part)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(arr("cross", a), arr("cross", b))
    a = manipulation.moveaxis(arr("cross", a), axisa, -1)
    b = manipulation.moveaxis(arr("cross", b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"jnp.cross: vectors must have 2 or 3 components, got "
                         f"{a.shape[-1]} and {b.shape[-1]}")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    zero = creation.zeros((), a0.dtype)
    a2 = a[..., 2] if a.shape[-1] == 3 else zero
    b2 = b[..., 2] if b.shape[-1] == 3 else zero
    c = manipulation.stack(manipulation.broadcast_arrays(
        a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)
    return manipulation.moveaxis(c, -1, axisc)


# --- float bits ---------------------------------------------------------------------------

def _float_layout(dt):
    """(integer type of the same width, mantissa bits, exponent bias)."""
    fi = np.finfo(dt) if dt != dtypes.bfloat16 else None
    if dt == dtypes.bfloat16:
        return np.int16, 7, 127
    nmant = fi.nmant
    bias = fi.maxexp - 1
    return {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(dt).itemsize], nmant, bias


def frexp(x, /):
    """Mantissa and exponent: x == m * 2**e with 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf,
    NaN). The exponent is int32.

    XLA treats subnormal inputs as zero on CPU and GPU, so they give (x, 0)."""
    x, = promote_dtypes_inexact(arr("frexp", x))
    x = arr("frexp", x)
    if dtypes.is_complex(x.dtype):
        raise TypeError("jnp.frexp does not accept complex inputs")
    ity, nmant, bias = _float_layout(x.dtype)
    bits = lax.bitcast_convert_type(x, ity)
    exp_mask = (1 << (np.dtype(ity).itemsize * 8 - 1 - nmant)) - 1
    field = lax.bitwise_and(lax.shift_right_logical(bits, creation.full((), nmant, ity)),
                            creation.full((), exp_mask, ity))
    e = manipulation.astype(field, np.int32) - (bias - 1)
    keep = ~np.array(exp_mask << nmant, dtype=np.int64).astype(ity)
    mbits = lax.bitwise_or(lax.bitwise_and(bits, creation.full((), keep, ity)),
                           creation.full((), (bias - 1) << nmant, ity))
    m = lax.bitcast_convert_type(mbits, x.dtype)
    special = ufuncs.logical_or(x == 0, ufuncs.logical_not(ufuncs.isfinite(x)))
    return ufuncs.where(special, x, m), ufuncs.where(special, np.int32(0), e)


def _pow2(k, dt):
    """2**k for integer k in the normal exponent range of `dt`, built from its bits."""
    ity, nmant, bias = _float_layout(dt)
    field = manipulation.astype(k + bias, ity)
    return lax.bitcast_convert_type(lax.shift_left(field, creation.full((), nmant, ity)), dt)


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 integer), exact unless the result under- or overflows."""
    x1 = arr("ldexp", x1)
    x2 = arr("ldexp", x2)
    if not (dtypes.is_int(x2.dtype) or dtypes.is_bool(x2.dtype)):
        raise TypeError(f"jnp.ldexp: x2 must be integers, got {x2.dtype}")
    x1, = promote_dtypes_inexact(x1)
    x1 = arr("ldexp", x1)
    if dtypes.is_complex(x1.dtype):
        raise TypeError("jnp.ldexp does not accept complex inputs")
    _, nmant, bias = _float_layout(x1.dtype)
    # split the exponent into three steps that are each a normal power of two
    lim = 3 * (bias - 1)
    k = manipulation.astype(ufuncs.clip(manipulation.astype(x2, np.int64 if np.dtype(
        x2.dtype).itemsize == 8 else np.int32), -lim, lim), np.int32)
    k1 = ufuncs.floor_divide(k, 3)
    k2 = ufuncs.floor_divide(k - k1, 2)
    k3 = k - k1 - k2
    out = x1 * _pow2(k1, x1.dtype) * _pow2(k2, x1.dtype) * _pow2(k3, x1.dtype)
    return out


def modf(x, /, out=None):
    """Fractional and integral parts, both with the sign of x."""
    x, = promote_dtypes_inexact(arr("modf", x))
    whole = ufuncs.trunc(x)
    return x - whole, whole


def spacing(x, /):
    """The distance from x to the next larger-magnitude float (sign of x)."""
    x, = promote_dtypes_inexact(arr("spacing", x))
    x = arr("spacing", x)
    inf = creation.full((), np.inf, x.dtype)
    return ufuncs.nextafter(x, ufuncs.where(x < 0, -inf, inf)) - x


# --- integers ---------------------------------------------------------------------------

def gcd(x1, x2, /):
    """The greatest common divisor of |x1| and |x2| (integers; gcd(0, 0) = 0)."""
    a, b = promote_dtypes(arr("gcd", x1), arr("gcd", x2))
    a, b = manipulation.broadcast_arrays(arr("gcd", a), arr("gcd", b))
    if not dtypes.is_int(a.dtype):
        raise TypeError(f"jnp.gcd needs integer arguments, got {a.dtype}")
    a, b = ufuncs.abs(a), ufuncs.abs(b)

    def cond(state):
        return reductions.any(state[1] != 0)

    def body(state):
        u, v = state
        nz = v != 0
        safe = ufuncs.where(nz, v, creation.ones((), v.dtype))
        return ufuncs.where(nz, v, u), ufuncs.where(nz, ufuncs.remainder(u, safe), v)

    g, _ = lax.while_loop(cond, body, (a, b))
    return g


def lcm(x1, x2, /):
    """The least common multiple of |x1| and |x2| (0 if either is 0)."""
    a, b = promote_dtypes(arr("lcm", x1), arr("lcm", x2))
    a, b = arr("lcm", a), arr("lcm", b)
    g = gcd(a, b)
    safe = ufuncs.where(g == 0, creation.ones((), g.dtype), g)
    out = ufuncs.abs(ufuncs.floor_divide(a, safe) * b)
    return ufuncs.where(g == 0, creation.zeros((), g.dtype), out)


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default: the largest float), -inf -> `neginf`."""
    x = arr("nan_to_num", x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        re = nan_to_num(ufuncs.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(ufuncs.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return lax.convert_element_type(re, x.dtype) + 1j * lax.convert_element_type(
            im, x.dtype)
    info = np.finfo(np.float32) if x.dtype == dtypes.bfloat16 else np.finfo(x.dtype)
    big = float(dtypes.finfo(x.dtype).max) if x.dtype == dtypes.bfloat16 else float(info.max)
    pos = big if posinf is None else posinf
    neg = -big if neginf is None else neginf
    full = lambda v: manipulation.astype(arr("nan_to_num", v), x.dtype)  # noqa: E731
    out = ufuncs.where(ufuncs.isnan(x), full(nan), x)
    out = ufuncs.where(ufuncs.isposinf(x), full(pos), out)
    return ufuncs.where(ufuncs.isneginf(x), full(neg), out)


def i0(x):
    """The modified Bessel function of the first kind, order 0 (real inputs).

    The power series sum_k (x^2/4)^k / (k!)^2 for |x| <= 30 (its terms as one running product,
    all positive, so no cancellation) and the asymptotic expansion beyond; differentiable."""
    x, = promote_dtypes_inexact(arr("i0", x))
    x = arr("i0", x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("jnp.i0 of complex inputs is not supported")
    comp = np.float64 if x.dtype == np.float64 else np.float32
    ax = ufuncs.abs(manipulation.astype(x, comp))
    small = ax <= _I0_SWITCH
    xs = ufuncs.where(small, ax, creation.zeros((), comp))
    q = manipulation.expand_dims(xs * xs * 0.25, -1)
    k = np.arange(1, _I0_TERMS + 1, dtype=comp)
    terms = reductions.cumprod(q / creation.asarray(k * k, comp), axis=-1)
    total = 1.0 + reductions.sum(terms, axis=-1)
    xl = ufuncs.where(small, creation.full((), 2.0 * _I0_SWITCH, comp), ax)
    inv = 1.0 / (8.0 * xl)
    series = creation.ones((), comp) + xl * 0
    coef = 1.0
    for n in range(1, 12):  # coefficients ((2n-1)!!)^2 / n! of (8x)^-n
        coef = coef * (2 * n - 1) ** 2 / n
        series = series + coef * ufuncs.power(inv, n)
    large = ufuncs.exp(xl) / ufuncs.sqrt(2.0 * np.pi * xl) * series
    return manipulation.astype(ufuncs.where(small, total, large), x.dtype)


_I0_SWITCH = 30.0
_I0_TERMS = 90  # at x = 30 the ratio of successive terms is 225 / k^2: tiny by k = 90


# --- predicates ---------------------------------------------------------------------------

def isreal(x):
    """Elementwise: the imaginary part is zero (always true for real dtypes)."""
    x = arr("isreal", x)
    if dtypes.is_complex(x.dtype):
        return ufuncs.imag(x) == 0
    return creation.ones(x.shape, np.bool_)


def iscomplex(x):
    """Elementwise: the imaginary part is nonzero (always false for real dtypes)."""
    x = arr("iscomplex", x)
    if dtypes.is_complex(x.dtype):
        return ufuncs.imag(x) != 0
    return creation.zeros(x.shape, np.bool_)


def iscomplexobj(x) -> bool:
    """True if `x` has a complex dtype (a Python bool, decided from the type alone)."""
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return np.issubdtype(np.dtype(dt), np.complexfloating)


def isrealobj(x) -> bool:
    """True if `x` does not have a complex dtype."""
    return not iscomplexobj(x)


def array_equal(a1, a2, equal_nan: bool = False):
    """True (a bool Array) if both have one shape and equal elements."""
    a, b = arr("array_equal", a1), arr("array_equal", a2)
    if a.shape != b.shape:
        return creation.asarray(False)
    eq = a == b
    if equal_nan and (dtypes.is_inexact(a.dtype) or dtypes.is_inexact(b.dtype)):
        eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b)))
    return reductions.all(eq)


def array_equiv(a1, a2):
    """True (a bool Array) if the arrays broadcast together and are equal everywhere."""
    a, b = arr("array_equiv", a1), arr("array_equiv", a2)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return creation.asarray(False)
    return reductions.all(a == b)


def isscalar(element) -> bool:
    """True for Python and NumPy scalars and 0-d arrays (as in JAX)."""
    if isinstance(element, (Array, Tracer)):
        return element.ndim == 0
    if isinstance(element, TypedScalar):
        return True
    if isinstance(element, (np.ndarray,)):
        return element.ndim == 0
    return np.isscalar(element) and not isinstance(element, (str, bytes))


def angle(z, deg: bool = False):
    """The argument of complex `z` (radians, or degrees); 0 or pi for real inputs."""
    z = arr("angle", z)
    if dtypes.is_complex(z.dtype):
        re, im = ufuncs.real(z), ufuncs.imag(z)
    else:
        z, = promote_dtypes_inexact(z)
        re, im = z, creation.zeros((), arr("angle", z).dtype)
    out = ufuncs.arctan2(im, re)
    return ufuncs.rad2deg(out) if deg else out


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


def bitwise_count(x, /):
    """The number of 1 bits in |x| (uint8), for integers and bools."""
    x = arr("bitwise_count", x)
    if not (dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype)):
        raise TypeError(f"jnp.bitwise_count needs integers, got {x.dtype}")
    if dtypes.is_bool(x.dtype):
        return manipulation.astype(x, np.uint8)
    if dtypes.is_signed_int(x.dtype):
        x = ufuncs.abs(x)
    return manipulation.astype(lax.population_count(x), np.uint8)


def _window(name, M, fn):
    M = int(M)
    dt = dtypes.canonicalize(dtypes.default_float())
    if M < 1:
        return creation.zeros((0,), dt)
    if M == 1:
        return creation.ones((1,), dt)
    n = lax.iota(dt, M)
    return fn(n, M)


def hamming(M):
    """The Hamming window of M points."""
    return _window("hamming", M, lambda n, m: 0.54 - 0.46 * ufuncs.cos(2 * np.pi * n / (m - 1)))


def hanning(M):
    """The Hann window of M points."""
    return _window("hanning", M, lambda n, m: 0.5 - 0.5 * ufuncs.cos(2 * np.pi * n / (m - 1)))


def blackman(M):
    """The Blackman window of M points."""
    return _window("blackman", M, lambda n, m: 0.42 - 0.5 * ufuncs.cos(2 * np.pi * n / (m - 1))
                   + 0.08 * ufuncs.cos(4 * np.pi * n / (m - 1)))


def bartlett(M):
    """The Bartlett (triangular) window of M points."""
    return _window("bartlett", M, lambda n, m: 1 - ufuncs.abs(2 * n / (m - 1) - 1))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter `beta`."""
    def fn(n, m):
        alpha = (m - 1) / 2.0
        r = (n - alpha) / alpha
        return i0(beta * ufuncs.sqrt(ufuncs.clip(1 - r * r, 0, None))) / i0(
            creation.full((), beta, n.dtype))
    return _window("kaiser", M, fn)


def vecdot(x1, x2, /, *, axis: int = -1):
    """sum(conj(x1) * x2) along `axis` (broadcasting the other axes)."""
    a, b = promote_dtypes(arr("vecdot", x1), arr("vecdot", x2))
    a, b = arr("vecdot", a), arr("vecdot", b)
    return reductions.sum(ufuncs.conjugate(a) * b, axis=axis)


def matvec(x1, x2, /):
    """Batched matrix-vector products: (..., m, n) x (..., n) -> (..., m)."""
    return matmul(x1, manipulation.expand_dims(arr("matvec", x2), -1))[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix products conj(x1) @ x2: (..., n) x (..., n, m) -> (..., m)."""
    v = ufuncs.conjugate(arr("vecmat", x1))
    return matmul(manipulation.expand_dims(v, -2), x2)[..., 0, :]


def iterable(y) -> bool:
    """True if `iter(y)` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True
