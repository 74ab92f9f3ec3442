"""lax.rng_bit_generator and lax.rng_uniform: XLA's random-number ops (the primitives and
their rules are in yax/primitives/rng.py). Most code wants yax.random instead."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.trace import bind
from yax.primitives.rng import RandomAlgorithm, rng_bit_generator_p, rng_uniform_p
from yax.runtime.values import as_operand

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """Uniform random bits from XLA's stateless RngBitGenerator.

    Args:
      key: uint32[4], the generator state.
      shape: the shape of the bits.
      dtype: uint8, uint16, uint32 or uint64 (uint64 becomes uint32 unless x64 is on).
      algorithm: a RandomAlgorithm (RNG_DEFAULT, the backend's choice, RNG_THREE_FRY or
        RNG_PHILOX).
      out_sharding: only None.
    Returns:
      (new_key, bits): the next state, uint32[4], and the bits. On one backend the same key
      gives jax's bits.

    Example: `key, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (2, 3))`.
    """
    if out_sharding is not None:
        raise errors.InvalidArgumentError(
            "rng_bit_generator: out_sharding is not supported; constrain the result with "
            "lax.with_sharding_constraint")
    key = as_operand(key)
    shape = _as_shape(shape)
    dtype = dtypes.canonicalize(dtype, warn=True)
    new_key, bits = bind(rng_bit_generator_p, key, shape=shape, dtype=dtype,
                         algorithm=RandomAlgorithm(algorithm), out_sharding=None)
    return new_key, bits


def rng_uniform(a, b, shape):
    """Numbers uniform in [a, b) from XLA's stateful generator (a fresh draw each run).

    Args:
      a, b: scalars of one dtype (float or integer); the result is unspecified for b <= a.
      shape: the shape of the result.
    Returns:
      An array of `shape` and a's dtype. Not differentiable, no vmap (as in jax).

    Example: `lax.rng_uniform(0.0, 1.0, (3,))`.
    """
    a, b = as_operand(a), as_operand(b)
    return bind(rng_uniform_p, a, b, shape=_as_shape(shape))


def _as_shape(shape) -> tuple:
    if np.ndim(shape) == 0 and not isinstance(shape, tuple):
        return (int(shape),)
    return tuple(int(d) for d in shape)
