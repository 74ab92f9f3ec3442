"""More of jax.nn's activations: celu, selu, glu, mish, the hard_* family, soft_sign,
squareplus, sparse_plus/sparse_sigmoid, log1mexp, logmeanexp, tanh and identity.

Compositions of yax.numpy, like functions.py, with the same "double where" habit: a branch that
would be inf or NaN where it is not taken is fed a safe input, so gradients stay finite.
"""

from __future__ import annotations

import math

import yax.numpy as jnp
from yax.nn.functions import _inexact, elu, logsumexp, relu6, sigmoid, softplus

__all__ = [
    "celu", "selu", "glu", "mish", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "soft_sign", "squareplus", "sparse_plus", "sparse_sigmoid", "log1mexp", "logmeanexp",
    "tanh", "identity",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _inexact("celu", x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    """Scaled ELU, scale * elu(x, alpha) with the self-normalising constants of Klambauer et al.
    (2017): alpha ~ 1.6733, scale ~ 1.0507."""
    return _SELU_SCALE * elu(_inexact("selu", x), _SELU_ALPHA)


def glu(x, axis=-1):
    """Gated linear unit: split `x` in two halves along `axis`, return a * sigmoid(b).

    The size of `axis` must be even.
    """
    x = _inexact("glu", x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of x (shape {x.shape}) must have an even size, "
                         f"got {size}")
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def mish(x):
    """x * tanh(softplus(x)) (Misra, 2019)."""
    x = _inexact("mish", x)
    return x * jnp.tanh(softplus(x))


def hard_sigmoid(x):
    """relu6(x + 3) / 6: a piecewise-linear sigmoid."""
    return relu6(_inexact("hard_sigmoid", x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (also called hard_swish)."""
    x = _inexact("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
    """x clipped to [-1, 1] (derivative 0 outside, 1 inside)."""
    x = _inexact("hard_tanh", x)
    one = jnp.ones_like(x)
    return jnp.where(x > 1, one, jnp.where(x < -1, -one, x))


def soft_sign(x):
    """x / (|x| + 1)."""
    x = _inexact("soft_sign", x)
    return x / (jnp.abs(x) + 1)


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, a smooth ReLU (Barron, 2021)."""
    x = _inexact("squareplus", x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between (a once-differentiable ReLU)."""
    x = _inexact("sparse_plus", x)
    return jnp.where(x <= -1.0, jnp.zeros_like(x), jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """The derivative of sparse_plus: clip((x + 1) / 2, 0, 1)."""
    x = _inexact("sparse_sigmoid", x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate both near 0 (via log(-expm1(-x))) and for large x
    (via log1p(-exp(-x))), switching at log 2 (Maechler, 2012)."""
    x = _inexact("log1mexp", x)
    small = x < math.log(2)
    # Each branch gets a safe input where it is not taken, so its gradient there is finite.
    x_small = jnp.where(small, x, jnp.ones_like(x))
    x_large = jnp.where(small, jnp.ones_like(x), x)
    return jnp.where(small, jnp.log(-jnp.expm1(-x_small)), jnp.log1p(-jnp.exp(-x_large)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along `axis`, computed stably as logsumexp(x) - log(n).

    Args:
      x: input array.
      axis: int, tuple of ints, or None (all axes).
      where: optional boolean mask of the entries that count (others are left out of both the
        sum and the count).
      keepdims: keep the reduced axes with size 1.
    """
    x = _inexact("logmeanexp", x)
    if where is None:
        n = jnp.sum(jnp.ones_like(x), axis=axis, keepdims=keepdims)
        return logsumexp(x, axis=axis, keepdims=keepdims) - jnp.log(n)
    where = jnp.broadcast_to(jnp.asarray(where), x.shape)
    n = jnp.sum(where.astype(x.dtype), axis=axis, keepdims=keepdims)
    lse = logsumexp(x, axis=axis, b=where.astype(x.dtype), keepdims=keepdims)
    return lse - jnp.log(n)


def tanh(x):
    """The hyperbolic tangent (jax.nn.tanh is jax.numpy.tanh)."""
    return jnp.tanh(x)


def identity(x):
    """x itself, as an array (a no-op activation)."""
    return jnp.asarray(x)
