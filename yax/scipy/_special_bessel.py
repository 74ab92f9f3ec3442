"""scipy.special's Bessel functions: the modified ones of order 0 and 1 (i0, i1 and their
exponentially scaled forms i0e, i1e) and bessel_jn (J_v for v = 0..n by recurrence).
"""

from __future__ import annotations

import yax.numpy as jnp
from yax import lax
from yax.scipy._special_gamma import _promoted

__all__ = ["i0", "i0e", "i1", "i1e", "bessel_jn"]


def i0e(x, /):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    (x,) = _promoted("i0e", x)
    return lax.bessel_i0e(x)


def i1e(x, /):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    (x,) = _promoted("i1e", x)
    return lax.bessel_i1e(x)


def i0(x, /):
    """The modified Bessel function of order 0, I0(x) = exp(|x|) i0e(x)."""
    (x,) = _promoted("i0", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x, /):
    """The modified Bessel function of order 1, I1(x) = exp(|x|) i1e(x)."""
    (x,) = _promoted("i1", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """Bessel functions of the first kind J_0(z), ..., J_v(z), stacked along a new leading axis
    (shape (v + 1, *z.shape)), by Miller's backward recurrence started at order
    max(v, n_iter), run on the ratios r_k = J_k / J_{k-1} = z / (2k - z r_{k+1}) (which neither
    overflow nor divide by z) and normalised by J_0 + 2 sum_k J_2k = 1. Accurate while |z| is
    well below the starting order (JAX uses the same scheme)."""
    v, n_iter = int(v), int(n_iter)
    (z,) = _promoted("bessel_jn", z)
    start = max(v, n_iter) + 1
    ratio = jnp.zeros_like(z)
    ratios = {}
    for k in range(start, 0, -1):
        ratio = z / (2 * k - z * ratio)
        ratios[k] = ratio
    product, norm = jnp.ones_like(z), jnp.ones_like(z)
    products = [product]
    for k in range(1, start + 1):
        product = product * ratios[k]
        if k <= v:
            products.append(product)
        if k % 2 == 0:
            norm = norm + 2 * product
    return jnp.stack(products) / norm
