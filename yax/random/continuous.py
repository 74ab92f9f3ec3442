"""Continuous distributions built on uniform draws: uniform, normal, truncated normal,
exponential, Gumbel, Cauchy, Laplace, logistic, log-normal.

Every sampler has a traced implementation (`_uniform`, `_normal`, ...) that other samplers call
directly, and a public wrapper that checks the arguments in Python and then calls one cached
`yax.jit` kernel, so an eager draw is one compiled program and a draw under `jit` is fused into
the caller's program. The float arithmetic mirrors jax's op for op, so draws are bit-identical.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.lax._util import out_sharding_param
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random._opaque import opaque

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _const(value, dtype):
    """A scalar constant of `dtype` (an inline literal when traced; rounded once from the
    Python value, as a NumPy constant would be)."""
    if isinstance(value, np.generic):
        value = value.item()
    return TypedScalar.of(value, np.dtype(dtype), weak_type=False)


def _param(value, dtype, shape):
    """A distribution parameter converted to `dtype` and broadcast to `shape`."""
    return jnp.broadcast_to(lax.convert_element_type(value, dtype), shape)


def _uniform(key, shape, dtype, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval): random mantissa bits under the exponent of 1.0 give
    a float in [1, 2); subtracting 1 and scaling maps it to the range."""
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint = np.dtype(_UINT[nbits])
    bits = threefry.random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint)
    one_bits = int(np.array(1.0, dtype).view(uint))
    float_bits = lax.bitwise_or(lax.shift_right_logical(bits, rng_bits - nmant), one_bits)
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), _const(1.0, dtype))
    minval = _param(minval, dtype, shape)
    maxval = _param(maxval, dtype, shape)
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, scaled)


def _normal_real(key, shape, dtype):
    """Inverse-CDF sampling: sqrt(2) * erfinv(u) with u uniform in (-1, 1)."""
    nmant = dtypes.finfo(dtype).nmant
    lo = -1.0 + 2.0 ** -(nmant + 1)  # the float just above -1, so erfinv stays finite
    u = _uniform(key, shape, dtype, lo, 1.0)
    return lax.mul(_const(np.sqrt(2), dtype), lax.erf_inv(u))


def _normal(key, shape, dtype):
    if not dtypes.is_complex(dtype):
        return _normal_real(key, shape, dtype)
    real_dtype = np.dtype(np.finfo(dtype).dtype)
    key_re, key_im = _split2(key)
    re = lax.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
    im = lax.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
    both = lax.add(re, lax.mul(_const(1j, dtype), im))
    return lax.div(both, _const(np.sqrt(2), dtype))


def _split2(key):
    keys = threefry.split(key, (2,))
    return keys[0], keys[1]


def _truncated_normal(key, lower, upper, shape, dtype):
    sqrt2 = _const(np.sqrt(2), dtype)
    # Opaque bounds: XLA must not evaluate erf of constant bounds on the host (an ulp off).
    lower = opaque(lax.convert_element_type(lower, dtype), key)
    upper = opaque(lax.convert_element_type(upper, dtype), key)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = _uniform(key, shape, dtype, a, b)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    # Rounding (or u landing exactly on a) could reach the bounds: keep the interval open.
    lo = lax.nextafter(lax.stop_gradient(lower), _const(np.inf, dtype))
    hi = lax.nextafter(lax.stop_gradient(upper), _const(-np.inf, dtype))
    return jnp.minimum(hi, jnp.maximum(lo, out))


def _exponential(key, shape, dtype):
    u = _uniform(key, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))  # log(1 - u): u = 0 is possible, u = 1 is not


def _clz32(x):
    """Count of leading zero bits of uint32 values: smear the top bit right, count ones."""
    smeared = x
    for s in (1, 2, 4, 8, 16):
        smeared = lax.bitwise_or(smeared, lax.shift_right_logical(smeared, s))
    return lax.sub(lax.convert_element_type(32, np.uint32), lax.population_count(smeared))


def _bits64_to_float32(hi, lo):
    """The float32 nearest below the 64-bit fixed-point fraction hi:lo in (0, 1), keeping
    precision for tiny values by normalising on the leading one bit."""
    hiclz, loclz = _clz32(hi), _clz32(lo)
    hi_empty = lax.eq(hiclz, _const(32, np.uint32))
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        lax.select(hi_empty, lax.shift_left(lo, loclz),
                   lax.shift_right_logical(lo, lax.sub(_const(32, np.uint32), hiclz))))
    mantissa = lax.bitwise_and(lax.shift_right_logical(mantissa, 8), (1 << 23) - 1)
    leading = lax.select(hi_empty, lax.add(loclz, 32), hiclz)
    exponent = lax.shift_left(lax.sub(_const(126, np.uint32), leading), 23)
    exponent = lax.bitwise_and(exponent, (1 << 30) - (1 << 22))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def _gumbel_highest_f32(key, shape):
    bits = threefry.random_bits(key, 32, (2, *shape))
    neg = lax.bitwise_not(bits)
    carry = lax.convert_element_type(lax.eq(neg[1], _const(0xFFFFFFFF, np.uint32)), np.uint32)
    ones = lax.broadcast_in_dim(_const(1, np.uint32), shape, ())
    neg = lax.add(neg, jnp.stack([carry, ones]))  # 1 - bits as 64-bit fixed point
    flip = lax.lt(bits[0], _const(1 << 31, np.uint32))
    chosen = jnp.where(flip, bits, neg)
    x = _bits64_to_float32(chosen[0], chosen[1])
    low_half = lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    high_half = lax.neg(lax.log(lax.neg(lax.log(x))))
    return jnp.where(flip, low_half, high_half)


def _gumbel(key, shape, dtype, mode):
    finfo = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest_f32(key, shape)
    if mode in ("high", "highest"):
        both = _uniform(key, (2, *shape), dtype, 0.0, 1.0)
        high, low = both[0], both[1]
        small = lax.add(lax.add(high, lax.mul(_const(2.0 ** -finfo.nmant, dtype), low)),
                        _const(finfo.tiny, dtype))
        x = jnp.where(lax.ge(high, _const(0.5, dtype)), high, small)
        return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    u = _uniform(key, shape, dtype, float(finfo.tiny), 1.0)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def _cauchy(key, shape, dtype):
    u = _uniform(key, shape, dtype, float(dtypes.finfo(dtype).eps), 1.0)
    return lax.tan(lax.mul(_const(np.pi, dtype), lax.sub(u, _const(0.5, dtype))))


def _laplace(key, shape, dtype):
    u = _uniform(key, shape, dtype, -1.0 + float(dtypes.finfo(dtype).epsneg), 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(key, shape, dtype):
    x = _uniform(key, shape, dtype, float(dtypes.finfo(dtype).tiny), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _lognormal(key, sigma, shape, dtype):
    # No barrier here: XLA reassociates (sqrt(2) * erfinv(u)) * sigma for a shared sigma in
    # jax's program too, and matching jax's bits means letting it.
    return lax.exp(lax.mul(_normal(key, shape, dtype), _param(sigma, dtype, shape)))


_uniform_kernel = Kernel(
    lambda key, minval, maxval, shape, dtype: _uniform(key, shape, dtype, minval, maxval))
_normal_kernel = Kernel(_normal)
_truncated_normal_kernel = Kernel(_truncated_normal)
_exponential_kernel = Kernel(_exponential)
_gumbel_kernel = Kernel(_gumbel)
_cauchy_kernel = Kernel(_cauchy)
_laplace_kernel = Kernel(_laplace)
_logistic_kernel = Kernel(_logistic)
_lognormal_kernel = Kernel(_lognormal)


@out_sharding_param("uniform")
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, out_sharding=None):
    """Uniform random floats in [minval, maxval), bit-identical to `jax.random.uniform`.

    Args:
      key: a PRNG key (uint32[2]).
      shape: static result shape (tuple of ints). Default ().
      dtype: float dtype (default float64 with x64 on, else float32).
      minval, maxval: bounds, scalars or arrays broadcastable to `shape`.

    Returns:
      An array of `shape` and `dtype`.

    Example:
      >>> u = yax.random.uniform(yax.random.PRNGKey(0), (3,))
    """
    key = _checks.as_key("uniform", key)
    shape = _checks.static_shape("uniform", shape)
    dtype = _checks.float_dtype("uniform", dtype)
    _checks.check_shape("uniform", shape, _checks.shape_of(minval), _checks.shape_of(maxval))
    return _uniform_kernel(key, _checks.operand("uniform", minval),
                           _checks.operand("uniform", maxval), shape=shape, dtype=dtype)


@out_sharding_param("normal")
def normal(key, shape=(), dtype=None, out_sharding=None):
    """Standard normal draws (complex dtypes give independent real and imaginary parts of
    variance 1/2 each), bit-identical to `jax.random.normal`.

    Example:
      >>> z = yax.random.normal(yax.random.PRNGKey(0), (2, 3))
    """
    key = _checks.as_key("normal", key)
    shape = _checks.static_shape("normal", shape)
    dtype = _checks.float_dtype("normal", dtype, allow_complex=True)
    return _normal_kernel(key, shape=shape, dtype=dtype)


@out_sharding_param("truncated_normal")
def truncated_normal(key, lower, upper, shape=None, dtype=None, out_sharding=None):
    """Standard normal draws conditioned on the open interval (lower, upper).

    `shape` defaults to the broadcast shape of `lower` and `upper`.
    """
    key = _checks.as_key("truncated_normal", key)
    dtype = _checks.float_dtype("truncated_normal", dtype)
    params = (_checks.shape_of(lower), _checks.shape_of(upper))
    if shape is None:
        shape = _checks.broadcast_shapes(*params)
    else:
        shape = _checks.static_shape("truncated_normal", shape)
        _checks.check_shape("truncated_normal", shape, *params)
    return _truncated_normal_kernel(key, _checks.operand("truncated_normal", lower),
                                    _checks.operand("truncated_normal", upper),
                                    shape=shape, dtype=dtype)


@out_sharding_param("exponential")
def exponential(key, shape=(), dtype=None, out_sharding=None):
    """Exponential draws with rate 1 (density exp(-x) on x >= 0)."""
    key = _checks.as_key("exponential", key)
    shape = _checks.static_shape("exponential", shape)
    return _exponential_kernel(key, shape=shape, dtype=_checks.float_dtype("exponential", dtype))


@out_sharding_param("gumbel")
def gumbel(key, shape=(), dtype=None, mode=None, out_sharding=None):
    """Standard Gumbel draws. `mode` 'low' (default) uses one uniform per value; 'high' uses
    two for a larger range of extreme values; 'highest' (float32) uses 64 random bits."""
    key = _checks.as_key("gumbel", key)
    shape = _checks.static_shape("gumbel", shape)
    dtype = _checks.float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    _checks.check_mode("gumbel", mode, ("highest", "high", "low"))
    return _gumbel_kernel(key, shape=shape, dtype=dtype, mode=mode)


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy draws."""
    key = _checks.as_key("cauchy", key)
    shape = _checks.static_shape("cauchy", shape)
    return _cauchy_kernel(key, shape=shape, dtype=_checks.float_dtype("cauchy", dtype))


def laplace(key, shape=(), dtype=None):
    """Standard Laplace draws (density exp(-|x|) / 2)."""
    key = _checks.as_key("laplace", key)
    shape = _checks.static_shape("laplace", shape)
    return _laplace_kernel(key, shape=shape, dtype=_checks.float_dtype("laplace", dtype))


def logistic(key, shape=(), dtype=None):
    """Standard logistic draws."""
    key = _checks.as_key("logistic", key)
    shape = _checks.static_shape("logistic", shape)
    return _logistic_kernel(key, shape=shape, dtype=_checks.float_dtype("logistic", dtype))


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """exp(sigma * N(0, 1)) draws; `shape` defaults to the shape of `sigma`."""
    key = _checks.as_key("lognormal", key)
    dtype = _checks.float_dtype("lognormal", dtype)
    if shape is None:
        shape = _checks.shape_of(sigma)
    else:
        shape = _checks.static_shape("lognormal", shape)
        _checks.check_shape("lognormal", shape, _checks.shape_of(sigma))
    return _lognormal_kernel(key, _checks.operand("lognormal", sigma), shape=shape,
                             dtype=dtype)
