"""The threefry2x32 counter-based hash and the key operations built on it.

Threefry-2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) maps a key
(two uint32 words) and a counter (two uint32 words) to two pseudo-random uint32 words with 20
rounds of add / rotate / xor, injecting the key schedule every 4 rounds. It is written here with
yax.lax uint32 operations (which wrap modulo 2**32 in XLA), so under `jit` it is part of one
fused program and under `vmap` it batches like any elementwise code.

The functions below follow jax's default ("partitionable") threefry mode bit for bit:

* counters for an array of shape `s` are the flat (row-major) index of each element as a 64-bit
  number, split into a high and a low uint32 word;
* `random_bits(key, 32, s)` is `x1 ^ x2` of the hash of those counters; 64-bit draws are
  `(x1 << 32) | x2`; 8/16-bit draws truncate `x1 ^ x2`;
* `split(key, s)` returns the pair `(x1, x2)` for each counter as the new keys;
* `fold_in(key, d)` hashes the single counter `(0, d)`.

Everything here works on traced values: the public wrappers in `keys.py` and the samplers call
these inside `yax.jit`-compiled kernels.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors, lax

# Rotation distances of the 20 rounds: groups of 4, alternating between the two rows.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The key-schedule parity constant of Threefry (the third key word is k0 ^ k1 ^ this).
_PARITY = 0x1BD11BDA

_UINT_BY_WIDTH = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
                  64: np.dtype(np.uint64)}


def _rotate_left(x, distance: int):
    return lax.bitwise_or(lax.shift_left(x, distance), lax.shift_right_logical(x, 32 - distance))


def threefry2x32(k1, k2, x1, x2):
    """Hash the counter words `(x1, x2)` under the key words `(k1, k2)`.

    All four are uint32 arrays of one shape (a key word may also be a scalar, which broadcasts).
    Returns the two output words, each of the counters' shape.
    """
    schedule = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _PARITY))
    x1 = lax.add(x1, schedule[0])
    x2 = lax.add(x2, schedule[1])
    for block in range(5):
        for distance in _ROTATIONS[block % 2]:
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(x1, _rotate_left(x2, distance))
        # Key injection after every 4 rounds; the injection counter keeps the blocks distinct.
        x1 = lax.add(x1, schedule[(block + 1) % 3])
        x2 = lax.add(lax.add(x2, schedule[(block + 2) % 3]), block + 1)
    return x1, x2


def iota_2x32(shape: tuple) -> tuple:
    """The flat index of every element of `shape`, as (high, low) uint32 words."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise errors.ShapeError(
            f"yax.random draws at most 2**32 - 1 values per call; shape {shape} has {size}. "
            f"Split the key and draw in several calls.")
    low = lax.reshape(lax.iota(np.uint32, size), shape)
    high = lax.broadcast_in_dim(lax.convert_element_type(0, np.uint32), shape, ())
    return high, low


def _key_words(key, shape: tuple) -> tuple:
    """The two words of a uint32[2] key, broadcast to `shape`."""
    k1 = lax.squeeze(lax.slice(key, (0,), (1,)), (0,))
    k2 = lax.squeeze(lax.slice(key, (1,), (2,)), (0,))
    return lax.broadcast_in_dim(k1, shape, ()), lax.broadcast_in_dim(k2, shape, ())


def hash_counters(key, shape: tuple) -> tuple:
    """The two hash words for the counters 0 .. prod(shape)-1 laid out in `shape`."""
    high, low = iota_2x32(shape)
    k1, k2 = _key_words(key, shape)
    return threefry2x32(k1, k2, high, low)


def random_bits(key, bit_width: int, shape: tuple):
    """Uniform random unsigned integers of `bit_width` bits (8, 16, 32 or 64) and `shape`."""
    x1, x2 = hash_counters(key, shape)
    dtype = _UINT_BY_WIDTH[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(x1, dtype)
        low = lax.convert_element_type(x2, dtype)
        return lax.bitwise_or(lax.shift_left(high, 32), low)
    mixed = lax.bitwise_xor(x1, x2)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, dtype)


def split(key, shape: tuple):
    """New keys of shape `(*shape, 2)` derived from `key`."""
    x1, x2 = hash_counters(key, shape)
    nd = len(shape)
    return lax.concatenate([lax.expand_dims(x1, (nd,)), lax.expand_dims(x2, (nd,))], nd)


def fold_in(key, data):
    """A new key from `key` and the uint32 scalar `data`: the hash of the counter (0, data)."""
    k1, k2 = _key_words(key, ())
    x1, x2 = threefry2x32(k1, k2, lax.convert_element_type(0, np.uint32), data)
    return lax.concatenate([lax.expand_dims(x1, (0,)), lax.expand_dims(x2, (0,))], 0)


def seed(seed_value):
    """The key of an integer scalar seed: (high, low) 32-bit words of its two's complement.

    Seeds of 32 bits or fewer have a zero high word; wider seeds (only present with x64 on)
    contribute their upper 32 bits, as jax does.
    """
    dtype = np.dtype(seed_value.dtype)
    low = lax.convert_element_type(seed_value, np.uint32)
    if dtype.itemsize == 8:
        unsigned = lax.bitcast_convert_type(seed_value, np.uint64) if dtype.kind == "i" \
            else seed_value
        high = lax.convert_element_type(lax.shift_right_logical(unsigned, 32), np.uint32)
    else:
        high = lax.convert_element_type(0, np.uint32)
    return lax.concatenate([lax.expand_dims(high, (0,)), lax.expand_dims(low, (0,))], 0)
