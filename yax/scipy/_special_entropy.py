"""scipy.special's information-theory functions: entr, rel_entr and kl_div.
"""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy._special_gamma import _promoted

__all__ = ["entr", "rel_entr", "kl_div"]


def entr(x, /):
    """-x log(x) for x > 0, 0 at x = 0, -inf for x < 0."""
    (x,) = _promoted("entr", x)
    safe = jnp.where(x > 0, x, 1.0)
    return jnp.where(x > 0, -safe * jnp.log(safe), jnp.where(x == 0, 0.0, -jnp.inf))


def rel_entr(x, y, /):
    """x log(x / y) for x, y > 0; 0 where x = 0 and y >= 0; inf otherwise."""
    x, y = _promoted("rel_entr", x, y)
    both = (x > 0) & (y > 0)
    sx, sy = jnp.where(both, x, 1.0), jnp.where(both, y, 1.0)
    return jnp.where(both, sx * jnp.log(sx / sy), jnp.where((x == 0) & (y >= 0), 0.0, jnp.inf))


def kl_div(x, y, /):
    """x log(x / y) - x + y for x, y > 0; y where x = 0 and y >= 0; inf otherwise."""
    x, y = _promoted("kl_div", x, y)
    both = (x > 0) & (y > 0)
    sx, sy = jnp.where(both, x, 1.0), jnp.where(both, y, 1.0)
    return jnp.where(both, sx * jnp.log(sx / sy) - sx + sy,
                     jnp.where((x == 0) & (y >= 0), y, jnp.inf))
