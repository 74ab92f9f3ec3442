"""scipy.special's hypergeometric functions hyp1f1 and hyp2f1, summed as series, with
derivatives in x from their closed forms (custom_jvp).
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.primitives.special import iterate_while_active
from yax.scipy._special_gamma import _promoted
from yax.transforms.custom_derivatives import custom_jvp

__all__ = ["hyp1f1", "hyp2f1"]


def _hyp_series(coef, x, n_params):
    """sum_k t_k with t_0 = 1, t_k = t_{k-1} coef(k - 1) x / k, until the terms are negligible."""
    eps = float(np.finfo(x.dtype).eps)

    def body(c):
        k, term, s, active = c
        term = term * coef(k) * x / (k + 1)
        s = s + term
        return k + 1, term, s, active & (jnp.abs(term) > eps * jnp.abs(s))
    zero = jnp.zeros_like(x)
    return iterate_while_active(body, (zero, zero + 1, zero + 1, zero == 0), 3)[2]


@custom_jvp
def _hyp1f1(a, b, x):
    # Kummer's transformation M(a, b, x) = e^x M(b - a, b, -x) keeps the series' terms from
    # cancelling for negative x
    neg = x < 0
    aa = jnp.where(neg, b - a, a)
    series = _hyp_series(lambda k: (aa + k) / (b + k), jnp.abs(x), 2)
    return jnp.where(neg, jnp.exp(x) * series, series)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (_, _, t) = primals, tangents
    out = _hyp1f1(a, b, x)
    return out, t * a / b * _hyp1f1(a + 1, b + 1, x)


def hyp1f1(a, b, x, /):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!.
    Differentiable in x (as JAX)."""
    a, b, x = _promoted("hyp1f1", a, b, x)
    return _hyp1f1(a, b, x)


@custom_jvp
def _hyp2f1(a, b, c, x):
    # Pfaff's transformation maps x < 0 into [0, 1/2): (1 - x)^-a 2F1(a, c - b; c; x / (x - 1))
    neg = x < 0
    bb = jnp.where(neg, c - b, b)
    xx = jnp.where(neg, x / (x - 1), x)
    series = _hyp_series(lambda k: (a + k) * (bb + k) / (c + k), xx, 3)
    return jnp.where(neg, (1 - x) ** -a * series, series)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    (a, b, c, x), (_, _, _, t) = primals, tangents
    out = _hyp2f1(a, b, c, x)
    return out, t * a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x)


def hyp2f1(a, b, c, x, /):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for x < 1 by its series (with Pfaff's
    transformation for x < 0); it converges slowly as x approaches 1 and is NaN for x >= 1
    (unlike scipy, which continues analytically). Differentiable in x."""
    a, b, c, x = _promoted("hyp2f1", a, b, c, x)
    value = _hyp2f1(a, b, c, jnp.where(x < 1, x, 0.0))
    return jnp.where(x < 1, value, jnp.nan)
