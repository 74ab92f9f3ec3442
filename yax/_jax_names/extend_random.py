"""`jax.extend.random` (alias mode serves this module under that name): PRNG implementations
as objects, and the raw threefry hash.

yax has one PRNG implementation, threefry2x32 (`threefry_prng_impl`): keys made from it with
`seed_with_impl`/`random_seed` are the typed keys of `yax.random.key`. Other implementations
(jax's rbg, or new ones through `define_prng_impl`) are not offered.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from yax.lax.shape import concatenate, reshape
from yax.random import keys as _keys
from yax.random import threefry as _threefry
from yax.runtime.values import as_operand
from yax.transforms.vmap import vmap

__all__ = ["PRNGImpl", "random_seed", "seed_with_impl", "threefry_2x32",
           "threefry_prng_impl"]


class PRNGImpl(NamedTuple):
    """A PRNG implementation: the shape of its raw key data and its key functions."""

    key_shape: tuple
    seed: Callable
    split: Callable
    random_bits: Callable
    fold_in: Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def pprint(self) -> str:
        return f"{self.name} ({self.tag}): key shape {self.key_shape}"


threefry_prng_impl = PRNGImpl(key_shape=(2,), seed=_threefry.seed, split=_threefry.split,
                              random_bits=_threefry.random_bits, fold_in=_threefry.fold_in,
                              name="threefry2x32", tag="fry")


def _check(impl) -> None:
    if impl is not threefry_prng_impl and getattr(impl, "name", impl) != "threefry2x32":
        raise ValueError(f"yax has one PRNG implementation, threefry2x32 "
                         f"(yax.extend.random.threefry_prng_impl); got {impl!r}")


def seed_with_impl(impl, seed):
    """The typed key of an integer `seed` under `impl` (as `yax.random.key(seed)`)."""
    _check(impl)
    return _keys.key(seed)


def random_seed(seeds, impl):
    """Typed keys for an array of integer seeds (one key per seed, the seeds' shape)."""
    _check(impl)
    seeds = as_operand(seeds)
    make = _keys.key
    for _ in range(seeds.ndim):  # one vmap per axis of seeds
        make = vmap(make)
    return make(seeds)


def threefry_2x32(keypair, count):
    """The Threefry-2x32 hash of the uint32 array `count` under the key words `keypair`
    `(k1, k2)`: the flattened counts are hashed as two halves (padded with a zero to an even
    size) and the result has `count`'s shape."""
    k1, k2 = (as_operand(k) for k in keypair)
    count = as_operand(count)
    for word in (k1, k2, count):
        if np.dtype(word.dtype) != np.uint32:
            raise TypeError(f"threefry_2x32 needs uint32 keys and counts, got {word.dtype}")
    flat = reshape(count, (count.size,))
    odd = count.size % 2
    if odd:
        flat = concatenate([flat, as_operand(np.zeros(1, np.uint32))], 0)
    half = flat.shape[0] // 2
    x1, x2 = _threefry.threefry2x32(k1, k2, flat[:half], flat[half:])
    out = concatenate([x1, x2], 0)
    if odd:
        out = out[:-1]
    return reshape(out, count.shape)
