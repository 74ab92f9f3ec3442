"""scipy.special's transforms of data: the Box-Cox transforms (boxcox, boxcox1p) and
softmax/log_softmax (yax.nn's).
"""

from __future__ import annotations

import yax.numpy as jnp
from yax import nn
from yax.scipy._special_gamma import _promoted

__all__ = ["boxcox", "boxcox1p", "softmax", "log_softmax"]


def boxcox(x, lmbda, /):
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda = 0."""
    x, lmbda = _promoted("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda, /):
    """The Box-Cox transform of 1 + x: ((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda = 0."""
    x, lmbda = _promoted("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def _boxcox_of_log(log_x, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, 1.0, lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (None: all axes, as scipy and jax.scipy)."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) over `axis` (None: all axes, as scipy and jax.scipy)."""
    return nn.log_softmax(x, axis=axis)
