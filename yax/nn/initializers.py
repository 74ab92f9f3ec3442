"""yax.nn.initializers: functions that build parameter initializers, as jax.nn.initializers.

An initializer is a function `init(key, shape, dtype=...) -> Array`. Random ones draw with
yax.random, whose draws are bit-identical to jax.random, and apply jax's arithmetic (a draw times
an array scale), so for the same key they return the same arrays as jax's.

    import yax.nn.initializers as init
    w = init.glorot_uniform()(yax.random.key(0), (784, 128))

The variance-scaling family sets Var(w) = scale / n with n the fan-in, fan-out, their mean
(`fan_avg`) or geometric mean (`fan_geo_avg`); for convolution kernels the fans include the
receptive field (the product of the axes that are neither the in, out nor batch axes).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

import yax.numpy as jnp
from yax import random
from yax.core import dtypes

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

Initializer = Callable  # init(key, shape, dtype) -> Array


def _dtype(dtype):
    return dtypes.default_float() if dtype is None else dtype


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(key, shape, dtype=None):
    """An array of zeros (the key is ignored)."""
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None):
    """An array of ones (the key is ignored)."""
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None) -> Initializer:
    """An initializer returning arrays full of `value`.

    Example:
      >>> constant(-7.0)(yax.random.key(0), (2, 3))  # doctest: +SKIP
    """
    def init(key, shape, dtype=dtype):
        return jnp.full(_shape(shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """An initializer drawing uniformly from [0, scale)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, _shape(shape), dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and std `stddev`."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.normal(key, _shape(shape), dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer drawing standard normals truncated to (lower, upper), times `stddev`
    (no variance correction is applied, as in jax)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        draws = random.truncated_normal(key, lower, upper, _shape(shape), dtype)
        return draws * jnp.array(stddev, dtype)
    return init


def _prod_axes(shape, axes) -> int:
    if isinstance(axes, (int, np.integer)):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight shape, counting the receptive field of conv kernels."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            f"tensor with the default in_axis: give a shape of rank >= 2 or pass in_axis.")
    in_size = _prod_axes(shape, in_axis)
    out_size = _prod_axes(shape, out_axis)
    batch_size = _prod_axes(shape, batch_axis)
    receptive_field = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field, out_size * receptive_field


def _complex_uniform(key, shape, dtype):
    """Uniform in the disk of radius sqrt(2) (zero mean, unit variance)."""
    key_r, key_theta = random.split(key)
    real = np.array(0, dtype).real.dtype
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex normal of unit variance with its modulus truncated to `upper`."""
    key_r, key_theta = random.split(key)
    real = np.array(0, dtype).real.dtype
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale, mode: str, distribution: str, in_axis=-2, out_axis=-1,
                     batch_axis=(), dtype=None) -> Initializer:
    """An initializer whose draws have variance `scale / n`, n given by `mode`.

    Args:
      scale: the variance numerator.
      mode: 'fan_in', 'fan_out', 'fan_avg' or 'fan_geo_avg'.
      distribution: 'truncated_normal' (a normal truncated to two standard deviations and
        rescaled to the variance), 'normal' or 'uniform'. Complex dtypes draw from the
        matching distributions on the complex plane.
      in_axis, out_axis, batch_axis: the axes (ints or sequences) that count as input,
        output and batch dimensions; the rest form the receptive field.
      dtype: default dtype of the result.
    Returns:
      `init(key, shape, dtype)`.

    Example:
      >>> w = variance_scaling(2.0, "fan_in", "normal")(yax.random.key(0), (3, 4))
    """
    if mode not in _MODES:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = jnp.array(scale / denominator, dtype=dtype)
        is_float = dtypes.is_float(np.dtype(dtypes.dtype(dtype)))
        if distribution == "truncated_normal":
            if is_float:
                # .8796... is the std of a standard normal truncated to (-2, 2).
                stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if is_float:
            return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    return init


def _family(scale, mode, distribution, name, doc):
    def builder(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    builder.__name__ = builder.__qualname__ = name
    builder.__doc__ = (f"{doc}: `variance_scaling({scale}, {mode!r}, {distribution!r})`, "
                       f"with the same in/out/batch axes and dtype arguments.")
    return builder


glorot_uniform = _family(1.0, "fan_avg", "uniform", "glorot_uniform", "Glorot (Xavier) uniform")
glorot_normal = _family(1.0, "fan_avg", "truncated_normal", "glorot_normal",
                        "Glorot (Xavier) normal")
lecun_uniform = _family(1.0, "fan_in", "uniform", "lecun_uniform", "LeCun uniform")
lecun_normal = _family(1.0, "fan_in", "truncated_normal", "lecun_normal", "LeCun normal")
he_uniform = _family(2.0, "fan_in", "uniform", "he_uniform", "He (Kaiming) uniform")
he_normal = _family(2.0, "fan_in", "truncated_normal", "he_normal", "He (Kaiming) normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer returning `scale` times a Haar-random matrix with orthonormal columns
    (or rows, when there are fewer rows), the other axes flattened into the rows."""
    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """The delta-orthogonal initializer for 3-, 4- and 5-d conv kernels (Xiao et al., 2018):
    zeros except an orthogonal matrix (over the last two axes) at the spatial centre."""
    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(matrix)
    return init
