"""Neural-network functions (jax.nn's): activations, softmax family, logsumexp, one_hot.

All of them are compositions of yax.numpy and yax.lax, so grad, vmap and jit see through
them. Two habits keep them finite at extreme inputs and under differentiation:

* reductions of exponentials subtract the (gradient-stopped) maximum first, and
* branches that would compute an inf or NaN on the side not taken are fed a safe input with a
  second `where` (the "double where"), because `where`'s gradient multiplies the untaken
  branch's derivative by zero, and 0 * inf is NaN.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.core import dtypes
from yax.numpy._promote import promote_arrays_inexact
from yax.numpy._ufunc_builders import one_program_when_eager

__all__ = [
    "relu", "relu6", "gelu", "silu", "swish", "sigmoid", "log_sigmoid", "softplus", "elu",
    "leaky_relu", "softmax", "log_softmax", "logsumexp", "one_hot", "standardize", "normalize",
]


# Python floats (weakly typed) so that float32 inputs stay float32 under x64.
_SQRT_2_OVER_PI = float(np.sqrt(2 / np.pi))
_INV_SQRT2 = float(1 / np.sqrt(2))


def _inexact(name, x):
    (x,) = promote_arrays_inexact(name, x)
    return x


def relu(x):
    """Rectified linear unit, max(x, 0), with derivative 0 at x == 0 (as jax.nn.relu).

    Example: `relu(jnp.array([-1., 0., 2.]))` is `[0., 0., 2.]`.
    """
    x = _inexact("relu", x)
    return jnp.where(x > 0, x, jnp.zeros_like(x))


def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at both kinks (x == 0 and x == 6)."""
    x = _inexact("relu6", x)
    zero = jnp.zeros_like(x)
    return jnp.where((x > 0) & (x < 6), x, jnp.where(x >= 6, zero + 6, zero))


@one_program_when_eager(static=("approximate",))
def gelu(x, approximate: bool = True):
    """Gaussian error linear unit.

    Args:
      x: input array.
      approximate: if True (the default, as jax.nn.gelu), the tanh approximation
        `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`; otherwise the exact
        `x/2 * (1 + erf(x / sqrt(2)))`.
    Returns:
      An array of x's (inexact) dtype.
    """
    x = _inexact("gelu", x)
    if approximate:
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + jnp.tanh(inner))
    return 0.5 * x * (1 + lax.erf(x * _INV_SQRT2))


def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x))."""
    return lax.logistic(_inexact("sigmoid", x))


def silu(x):
    """Sigmoid linear unit x * sigmoid(x) (also called swish)."""
    x = _inexact("silu", x)
    return x * lax.logistic(x)


swish = silu


def softplus(x):
    """log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) so that it neither overflows
    nor loses its gradient for large |x|; the derivative is sigmoid(x) everywhere, 0.5 at 0."""
    x = _inexact("softplus", x)
    # Branching with `where` (not max and abs, whose derivatives at 0 are conventions) keeps
    # the derivative exact at x == 0.
    tail = jnp.log1p(jnp.exp(jnp.where(x > 0, -x, x)))
    return jnp.where(x > 0, x + tail, tail)


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), finite for large negative x."""
    x = _inexact("log_sigmoid", x)
    return -softplus(-x)


def elu(x, alpha=1.0):
    """Exponential linear unit: x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _inexact("elu", x)
    safe_x = jnp.where(x > 0, jnp.zeros_like(x), x)  # exp of a large x would be inf
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise."""
    x = _inexact("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


def _shifted(x, axis, where=None):
    """x minus its maximum along `axis` (kept; over the `where` entries only when a mask is
    given), the maximum treated as a constant; a non-finite maximum (all -inf, say, or nothing
    selected) is replaced by 0 so that the shift does not make NaNs."""
    if where is None:
        x_max = jnp.max(x, axis=axis, keepdims=True)
    else:
        x_max = jnp.max(x, axis=axis, keepdims=True, where=where, initial=-np.inf)
    x_max = jnp.where(jnp.isfinite(x_max), x_max, jnp.zeros_like(x_max))
    return x - lax.stop_gradient(x_max)


def _exp_selected(shifted, where):
    """exp(shifted), 0 outside `where`: the masked entries are fed -inf (not masked after the
    exp), so a large masked input neither overflows nor turns the gradient into NaN."""
    if where is None:
        return jnp.exp(shifted)
    return jnp.exp(jnp.where(where, shifted, -np.inf))


def _nonzero_total(total, where):
    """A sum of exponentials with nothing selected (0) made 1, so that dividing by it or taking
    its log neither gives 0/0 nor a NaN gradient; the entries it feeds are masked anyway."""
    return total if where is None else jnp.where(total == 0, jnp.ones_like(total), total)


@one_program_when_eager(static=("axis",))
def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis` (an int, a tuple of ints, or None for all axes).

    Args:
      x: input array.
      axis: the axis or axes to normalise over.
      where: optional boolean mask (broadcast against `x`): only the selected entries take part,
        and the result is 0 elsewhere (also where nothing along `axis` is selected).

    Example: `softmax(jnp.array([0., jnp.log(3.)]))` is `[0.25, 0.75]`.
    """
    x = _inexact("softmax", x)
    unnormalized = _exp_selected(_shifted(x, axis, where), where)
    total = jnp.sum(unnormalized, axis=axis, keepdims=True)
    return unnormalized / _nonzero_total(total, where)


@one_program_when_eager(static=("axis",))
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`, computed stably; with a `where` mask only the selected
    entries count, and the result is -inf elsewhere."""
    x = _inexact("log_softmax", x)
    shifted = _shifted(x, axis, where)
    total = jnp.sum(_exp_selected(shifted, where), axis=axis, keepdims=True)
    out = shifted - jnp.log(_nonzero_total(total, where))
    return out if where is None else jnp.where(where, out, -np.inf)


@one_program_when_eager(static=("axis", "keepdims", "return_sign"))
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) along `axis`, computed stably (the maximum is subtracted first, as a
    constant, so large inputs neither overflow nor give NaN gradients).

    Args:
      a: input array.
      axis: int, tuple of ints, or None (all axes) to reduce over.
      b: optional weights broadcast against `a`; they may be negative or zero.
      keepdims: keep the reduced axes with size 1.
      return_sign: if True, return `(log|sum|, sign(sum))`; otherwise a negative sum gives NaN.
      where: optional boolean mask: only the selected entries are summed (nothing selected
        gives -inf, and sign 0).
    Returns:
      The reduction, or a pair with its sign when `return_sign` is set.

    Example: `logsumexp(jnp.array([1e4, 1e4]))` is `1e4 + log(2)`.
    """
    if b is None:
        a = _inexact("logsumexp", a)
        mask = where
    else:
        a, b = promote_arrays_inexact("logsumexp", a, b)
        # Entries with weight 0 do not count toward the maximum, even if a is +-inf there.
        mask = jnp.not_equal(b, 0) if where is None else jnp.logical_and(where, b != 0)
    masked = a if mask is None else jnp.where(mask, a, -np.inf)
    a_max = jnp.max(masked, axis=axis, keepdims=True)
    a_max = lax.stop_gradient(jnp.where(jnp.isfinite(a_max), a_max, jnp.zeros_like(a_max)))
    exp_a = jnp.exp(masked - a_max)
    if b is not None:
        exp_a = jnp.where(mask, exp_a * b, 0.0)
    sumexp = jnp.sum(exp_a, axis=axis, keepdims=keepdims)
    sign = jnp.sign(sumexp)
    if b is not None:
        sumexp = jnp.abs(sumexp)
    # Summing the size-1 kept axes of a_max squeezes them the same way the reduction did.
    out = jnp.log(_nonzero_total(sumexp, where)) + jnp.sum(a_max, axis=axis, keepdims=keepdims)
    if where is not None:
        out = jnp.where(sumexp == 0, -np.inf, out)
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, jnp.full_like(out, np.nan), out)
    return out


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """One-hot encoding: `out[..., k, ...] = (x[...] == k)` with the class axis at `axis`.

    Args:
      x: integer array of class indices (out-of-range indices give all-zero rows).
      num_classes: the size of the new axis.
      dtype: result dtype; default the default float type (float32, float64 under x64).
      axis: where the new axis goes in the result.
    Returns:
      An array of shape `x.shape` with `num_classes` inserted at `axis`.

    Example: `one_hot(jnp.array([0, 2]), 3)` is `[[1., 0., 0.], [0., 0., 1.]]`.
    """
    x = jnp.asarray(x)
    out_ndim = x.ndim + 1
    if not -out_ndim <= axis < out_ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for a result of rank {out_ndim}")
    axis = axis % out_ndim
    rhs_shape = [1] * out_ndim
    rhs_shape[axis] = int(num_classes)
    classes = jnp.reshape(jnp.arange(int(num_classes), dtype=x.dtype), rhs_shape)
    dtype = dtypes.default_float() if dtype is None else dtype
    return jnp.asarray(jnp.expand_dims(x, axis) == classes, dtype=dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
    """(x - mean) / sqrt(variance + epsilon), the statistics along `axis` unless given.

    Args:
      x: input array.
      axis: int, tuple of ints or None (all axes).
      mean, variance: the statistics to use; computed (over the `where` entries) when None.
      epsilon: added to the variance.
      where: optional boolean mask of the entries the statistics are computed from (every entry
        is standardised).
      algorithm: how the variance is computed, as in jax: "fast" is mean(x^2) - mean^2 (one pass,
        clamped at 0; it can cancel catastrophically for large offsets), "stable" the two-pass
        mean((x - mean)^2).
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm must be 'fast' or 'stable', got {algorithm!r}")
    x = _inexact("standardize", x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "fast":
            second = jnp.mean(jnp.square(x), axis=axis, keepdims=True, where=where)
            variance = jnp.maximum(0.0, second - jnp.square(mean))
        else:
            variance = jnp.mean(jnp.square(x - mean), axis=axis, keepdims=True, where=where)
    return (x - mean) / jnp.sqrt(variance + epsilon)


normalize = standardize
