"""More distributions derived from the basic draws, following jax's formulas:
rademacher, pareto, t, chisquare, rayleigh, weibull_min, geometric.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax import lax_like as lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.random import _checks, threefry
from yax.random._barrier import optimization_barrier
from yax.random._kernel import Kernel
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
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-optimization_barrier(p)), shape)
    return (lax.floor(lax.log(u) / log_one_minus_p) + 1).astype(dtype)


_kernels = {name: Kernel(fun) for name, fun in [
    ("rademacher", _rademacher), ("pareto", _pareto), ("t", _t), ("chisquare", _chisquare),
    ("rayleigh", _rayleigh), ("weibull_min", _weibull_min), ("geometric", _geometric)]}


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
