"""Distributions that are formulas over the basic draws, with jax's arithmetic (so draws are
bit-identical): rademacher, pareto, t, chisquare, rayleigh, weibull_min, geometric, maxwell,
double_sided_maxwell, wald, triangular, generalized_normal, ball, f and orthogonal.

* Maxwell: the Euclidean norm of 3 standard normals; double-sided: times a random sign.
* Wald (inverse Gaussian, scale 1): Michael, Schucany and Haas's transformation of a chi-square
  draw ("Generating random variates using transformations with multiple roots", 1976).
* Triangular: inverse CDF of one uniform.
* Generalized normal (density ~ exp(-|x|^p)): a random sign times Gamma(1/p)^(1/p).
* Ball: uniform in the unit Lp ball by Barthe, Guedon, Mendelson and Naor's construction
  (arXiv:math/0503650): g / (sum |g|^p + e)^(1/p), g generalized normal, e exponential.
* Orthogonal: Haar-distributed by the QR of a normal matrix with its signs fixed by diag(R)
  (Mezzadri, "How to generate random matrices from the classical compact groups", 2007).
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random._opaque import opaque
from yax.random.continuous import _exponential, _normal, _uniform
from yax.random.gamma import _gamma

__all__ = ["rademacher", "pareto", "t", "chisquare", "rayleigh", "weibull_min", "geometric",
           "maxwell", "double_sided_maxwell", "wald", "triangular", "generalized_normal", "ball",
           "f", "orthogonal"]


def _rademacher(key, shape, dtype):
    coin = lax.lt(_uniform(key, shape, dtypes.default_float()),
                  lax.convert_element_type(0.5, dtypes.default_float()))
    return (2 * coin.astype(dtype) - 1).astype(dtype)


def _pareto(key, b, shape, dtype):
    return jnp.exp(_exponential(key, shape, dtype) / lax.convert_element_type(b, dtype))


def _t(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    keys = threefry.split(key, (2,))
    n = _normal(keys[0], shape, dtype)
    half_df = df / 2
    g = _gamma(keys[1], half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


def _chisquare(key, df, shape, dtype):
    half_df = lax.convert_element_type(df, dtype) / 2
    return jnp.exp(_gamma(key, half_df, shape, dtype, log_space=True)) * 2


def _rayleigh(key, scale, shape, dtype):
    u = _uniform(key, shape, dtype)
    scale = jnp.broadcast_to(lax.convert_element_type(scale, dtype), shape)
    return scale * lax.sqrt(lax.log(u) * -2)


def _weibull_min(key, scale, concentration, shape, dtype):
    u = _uniform(key, shape, dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / jnp.asarray(concentration)) * scale


def _geometric(key, p, shape, dtype):
    u = _uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)  # jax maps u = 0 to 1 (keeps its historical draws)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-opaque(p, key)), shape)
    return (lax.floor(lax.log(u) / log_one_minus_p) + 1).astype(dtype)


def _one_parameter(name: str, key, param, shape, dtype):
    key = _checks.as_key(name, key)
    dtype = _checks.float_dtype(name, dtype)
    param_shape = _checks.shape_of(param)
    if shape is None:
        shape = param_shape
    else:
        shape = _checks.static_shape(name, shape)
        _checks.check_shape(name, shape, param_shape)
    return _kernels[name](key, _checks.operand(name, param), shape=shape, dtype=dtype)


def _split2(key):
    keys = threefry.split(key, (2,))
    return keys[0], keys[1]


def _maxwell(key, shape, dtype):
    # The same program as jax's; XLA's fused sqrt-of-sum can still round the last bit
    # differently from jax's compilation for some shapes (see docs/random.md).
    x = _normal(key, (*shape, 3), dtype)
    return lax.sqrt(jnp.sum(x * x, axis=-1))


def _double_sided_maxwell(key, loc, scale, shape, dtype):
    maxwell_key, sign_key = _split2(key)
    magnitude = _maxwell(maxwell_key, shape, dtype)
    sign = _rademacher(sign_key, shape, dtype)
    return sign * magnitude * scale + loc


def _wald(key, mean, shape, dtype):
    k1, k2 = _split2(key)
    mean = jnp.broadcast_to(lax.convert_element_type(mean, dtype), shape)
    v = _normal(k1, shape, dtype)
    z = _uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    root = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def _triangular(key, left, mode, right, shape, dtype):
    left, mode, right = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, mode, right))
    mode_cdf = (mode - left) / (right - left)
    u = _uniform(key, shape, dtype)
    below = left + lax.sqrt(u * (right - left) * (mode - left))
    above = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < mode_cdf, below, above)


def _generalized_normal(key, p, shape, dtype):
    gamma_key, sign_key = _split2(key)
    g = _gamma(gamma_key, 1 / p, shape, dtype)
    return _rademacher(sign_key, shape, dtype) * g ** (1 / p)


def _ball(key, p, d, shape, dtype):
    k1, k2 = _split2(key)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    radius = (jnp.sum(jnp.abs(g) ** p, axis=-1) + e) ** (1 / p)
    return g / radius[..., None]


def _f(key, dfnum, dfden, shape, dtype):
    dfnum = lax.convert_element_type(dfnum, dtype)
    dfden = lax.convert_element_type(dfden, dtype)
    key_den, key_num = _split2(key)
    num = lax.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_den, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def _orthogonal(key, n, m, shape, dtype):
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    signs = jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))
    x = q * jnp.expand_dims(signs, -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


def _traced_param(name, x):
    """A parameter that enters the kernel as an array (never as a Python literal), as jax's
    jitted samplers see it: `x ** p` must lower to `pow`, not to a folded integer power."""
    x = _checks.operand(name, x)
    return jnp.asarray(x) if isinstance(x, (int, float)) else x


_kernels = {name: Kernel(fun) for name, fun in [
    ("rademacher", _rademacher), ("pareto", _pareto), ("t", _t), ("chisquare", _chisquare),
    ("rayleigh", _rayleigh), ("weibull_min", _weibull_min), ("geometric", _geometric),
    ("maxwell", _maxwell), ("double_sided_maxwell", _double_sided_maxwell), ("wald", _wald),
    ("triangular", _triangular), ("generalized_normal", _generalized_normal), ("ball", _ball),
    ("f", _f), ("orthogonal", _orthogonal)]}


def rademacher(key, shape=(), dtype=None):
    """Random signs, -1 or +1 with equal probability (default dtype int; floats allowed)."""
    key = _checks.as_key("rademacher", key)
    shape = _checks.static_shape("rademacher", shape)
    dt = dtypes.default_int() if dtype is None else np.dtype(dtypes.dtype(dtype))
    if not (dtypes.is_int(dt) or dtypes.is_inexact(dt)) or dtypes.is_unsigned_int(dt):
        raise errors.DTypeError(f"yax.random.rademacher: dtype must be a signed integer or "
                                f"float dtype, got {dt}.")
    return _kernels["rademacher"](key, shape=shape, dtype=dtypes.canonicalize(dt, warn=True))


def pareto(key, b, shape=None, dtype=None):
    """Pareto draws with shape parameter `b` (support x >= 1)."""
    return _one_parameter("pareto", key, b, shape, dtype)


def t(key, df, shape=None, dtype=None):
    """Student's t draws with `df` degrees of freedom."""
    return _one_parameter("t", key, df, shape, dtype)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square draws with `df` degrees of freedom."""
    return _one_parameter("chisquare", key, df, shape, dtype)


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh draws with the given scale."""
    return _one_parameter("rayleigh", key, scale, shape, dtype)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull draws: scale * (-log(1 - u)) ** (1 / concentration)."""
    key = _checks.as_key("weibull_min", key)
    shape = _checks.static_shape("weibull_min", shape)
    dtype = _checks.float_dtype("weibull_min", dtype)
    return _kernels["weibull_min"](key, _checks.operand("weibull_min", scale),
                                   _checks.operand("weibull_min", concentration), shape=shape,
                                   dtype=dtype)


def geometric(key, p, shape=None, dtype=None):
    """Geometric draws (number of Bernoulli(p) trials up to the first success; default dtype
    int)."""
    key = _checks.as_key("geometric", key)
    dtype = _checks.int_dtype("geometric", dtype)
    p = jnp.asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float())
    if shape is None:
        shape = tuple(p.shape)
    else:
        shape = _checks.static_shape("geometric", shape)
        _checks.check_shape("geometric", shape, tuple(p.shape))
    return _kernels["geometric"](key, p, shape=shape, dtype=dtype)


def maxwell(key, shape=(), dtype=None):
    """Maxwell draws (the norm of three independent standard normals).

    Example:
      >>> yax.random.maxwell(yax.random.key(0), (3,))  # doctest: +SKIP
    """
    key = _checks.as_key("maxwell", key)
    shape = _checks.static_shape("maxwell", shape)
    return _kernels["maxwell"](key, shape=shape, dtype=_checks.float_dtype("maxwell", dtype))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell draws `sign * maxwell * scale + loc`.

    As in jax, the result shape is `shape + broadcast(loc, scale).shape`, with `shape`
    defaulting to the parameters' broadcast shape when empty.
    """
    key = _checks.as_key("double_sided_maxwell", key)
    dtype = _checks.float_dtype("double_sided_maxwell", dtype)
    shape = _checks.static_shape("double_sided_maxwell", shape)
    param_shape = _checks.broadcast_shapes(_checks.shape_of(loc), _checks.shape_of(scale))
    shape = (shape or param_shape) + param_shape
    return _kernels["double_sided_maxwell"](
        key, _checks.operand("double_sided_maxwell", loc),
        _checks.operand("double_sided_maxwell", scale), shape=shape, dtype=dtype)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) draws with the given mean(s) and scale 1."""
    key = _checks.as_key("wald", key)
    dtype = _checks.float_dtype("wald", dtype)
    shape = _checks.param_shape("wald", shape, mean)
    return _kernels["wald"](key, _checks.operand("wald", mean), shape=shape, dtype=dtype)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular draws on [left, right] with peak at `mode`."""
    key = _checks.as_key("triangular", key)
    dtype = _checks.float_dtype("triangular", dtype)
    shape = _checks.param_shape("triangular", shape, left, mode, right)
    return _kernels["triangular"](
        key, *(_checks.operand("triangular", v) for v in (left, mode, right)), shape=shape,
        dtype=dtype)


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal draws with density proportional to exp(-|x|^p) (p = 2: a normal of
    variance 1/2; p = 1: Laplace)."""
    key = _checks.as_key("generalized_normal", key)
    shape = _checks.static_shape("generalized_normal", shape)
    dtype = _checks.float_dtype("generalized_normal", dtype)
    return _kernels["generalized_normal"](key, _traced_param("generalized_normal", p),
                                          shape=shape, dtype=dtype)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points drawn uniformly from the unit Lp ball in `d` dimensions, shape `(*shape, d)`."""
    key = _checks.as_key("ball", key)
    shape = _checks.static_shape("ball", shape)
    dtype = _checks.float_dtype("ball", dtype)
    (d,) = _checks.static_shape("ball", (d,), "d")
    return _kernels["ball"](key, _traced_param("ball", p), d=d, shape=shape, dtype=dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution draws (chi2(dfnum)/dfnum) / (chi2(dfden)/dfden)."""
    key = _checks.as_key("f", key)
    dtype = _checks.float_dtype("f", dtype)
    shape = _checks.param_shape("f", shape, dfnum, dfden)
    return _kernels["f"](key, _checks.operand("f", dfnum), _checks.operand("f", dfden),
                         shape=shape, dtype=dtype)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random matrices of shape `(*shape, n, m)` (m defaults to n) with orthonormal
    columns (n >= m) or rows (n < m).

    Example:
      >>> q = yax.random.orthogonal(yax.random.key(0), 3)
    """
    key = _checks.as_key("orthogonal", key)
    shape = _checks.static_shape("orthogonal", shape)
    dtype = _checks.float_dtype("orthogonal", dtype, allow_complex=True)
    n, m = _checks.static_shape("orthogonal", (n, n if m is None else m), "n and m")
    if not np.issubdtype(dtype, np.inexact):
        raise errors.DTypeError(f"yax.random.orthogonal: dtype must be inexact, got {dtype}.")
    return _kernels["orthogonal"](key, n=n, m=m, shape=shape, dtype=dtype)
