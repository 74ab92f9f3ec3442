"""yax.numpy integer functions: gcd (Euclid's algorithm in a while loop that stops when every
lane is done, so it batches under vmap), lcm and bitwise_count.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.core import dtypes
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr
from yax.numpy._promote import promote_dtypes

__all__ = ["gcd", "lcm", "bitwise_count"]


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
