"""More distributions derived from the basic draws, following jax's formulas:
rademacher, pareto, t, chisquare, rayleigh, weibull_min, geometric, poisson.

Poisson draws use Knuth's multiplication method for rates below 10 and Hormann's transformed
rejection ("The transformed rejection method for generating Poisson random variables", 1993)
otherwise; as in jax, both loops run over the whole array and the result is selected per element.
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


def _poisson_knuth(key, lam, shape, dtype):
    """Count uniforms until their product drops below exp(-lam) (one draw per element per
    step, all elements stepping together)."""
    def cond(state):
        return jnp.any(state[2] > -lam)

    def body(state):
        rng, k, log_prod = state
        keys = threefry.split(rng, (2,))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(keys[1], shape, np.dtype(np.float32))
        return keys[0], k, log_prod + jnp.log(u)

    init = (key, jnp.zeros(shape, dtype), jnp.zeros(shape, np.float32))
    return (lax.while_loop(cond, body, init)[1] - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype):
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(state):
        k_out, accepted, rng = state
        keys = threefry.split(rng, (3,))
        u = _uniform(keys[1], shape, lam.dtype) - 0.5
        v = _uniform(keys[2], shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return lax.select(accept, k, k_out), accepted | accept, keys[0]

    init = (jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, bool), key)
    return lax.while_loop(lambda s: jnp.any(~s[1]), body, init)[0].astype(dtype)


def _poisson(key, lam, shape, dtype):
    lam = opaque(lam, key)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    # Rejection's acceptance rate approaches 89% for large rates: 1e5 keeps unused lanes cheap.
    lam_rejection = lax.select(use_knuth, jnp.full_like(lam, 1e5), lam)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype),
                        _poisson_rejection(key, lam_rejection, shape, dtype))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_kernels = {name: Kernel(fun) for name, fun in [
    ("rademacher", _rademacher), ("pareto", _pareto), ("t", _t), ("chisquare", _chisquare),
    ("rayleigh", _rayleigh), ("weibull_min", _weibull_min), ("geometric", _geometric),
    ("poisson", _poisson)]}


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


def poisson(key, lam, shape=None, dtype=None):
    """Poisson draws with rate(s) `lam` >= 0 (computed in float32, as jax does; default dtype
    int). `shape` defaults to the shape of `lam`."""
    key = _checks.as_key("poisson", key)
    dtype = _checks.int_dtype("poisson", dtype)
    lam_shape = _checks.shape_of(lam)
    if shape is None:
        shape = lam_shape
    else:
        shape = _checks.static_shape("poisson", shape)
        _checks.check_shape("poisson", shape, lam_shape)
    lam = jnp.broadcast_to(jnp.asarray(lam), shape).astype(np.float32)
    return _kernels["poisson"](key, lam, shape=shape, dtype=dtype)
