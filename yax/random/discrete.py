"""Discrete draws: raw bits, integers, Bernoulli, categorical, permutations and choice.

As in continuous.py, each public function checks its arguments in Python, then runs one cached
`yax.jit` kernel whose integer arithmetic mirrors jax's, so draws are bit-identical.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors, lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.core.trace import Tracer
from yax.lax._util import out_sharding_param
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random._opaque import opaque
from yax.random.continuous import _const, _gumbel, _uniform

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


# --- bits and integers ---------------------------------------------------------------------


def _clip_convert(val, dtype):
    """Convert integers to `dtype`, clipping to its range instead of wrapping."""
    vinfo, info = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = _const(max(info.min, vinfo.min), val.dtype)
    hi = _const(min(info.max, vinfo.max), val.dtype)
    return lax.convert_element_type(jnp.minimum(jnp.maximum(val, lo), hi), dtype)


def _as_int_array(x):
    x = jnp.asarray(x)
    return x if dtypes.is_int(x.dtype) else x.astype(dtypes.default_int())


def _randint(key, minval, maxval, shape, dtype):
    """minval + (a 2*nbits-bit random number mod span): the modulus is taken in two halves
    ((hi mod span) * (2**nbits mod span) + lo mod span) so nothing overflows."""
    minval, maxval = _as_int_array(minval), _as_int_array(maxval)
    top = min(dtypes.iinfo(dtype).max, dtypes.iinfo(maxval.dtype).max)
    # maxval above the dtype's range means "up to and including its maximum".
    maxval_out_of_range = lax.gt(jnp.broadcast_to(maxval, shape), _const(top, maxval.dtype))
    minval = jnp.broadcast_to(_clip_convert(minval, dtype), shape)
    maxval = jnp.broadcast_to(_clip_convert(maxval, dtype), shape)
    nbits = dtypes.iinfo(dtype).bits
    unsigned = _UINT[nbits]
    keys = threefry.split(key, (2,))
    higher = threefry.random_bits(keys[0], nbits, shape)
    lower = threefry.random_bits(keys[1], nbits, shape)
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned)
    one = jnp.ones_like(span)
    span = lax.select(lax.le(maxval, minval), one, span)  # an empty range returns minval
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, one), span)
    multiplier = lax.rem(jnp.broadcast_to(_const(2 ** (nbits // 2), unsigned), shape), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def _randint_narrow(key, minval, maxval, shape, dtype):
    """8- and 16-bit integers are drawn as int32 (less bias), then narrowed."""
    if dtypes.iinfo(dtype).bits >= 32:
        return _randint(key, minval, maxval, shape, dtype)
    info = dtypes.iinfo(dtype)
    minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
    maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min), int(info.max) + 1)
    return _randint(key, minval, maxval, shape, np.dtype(np.int32)).astype(dtype)


_bits_kernel = Kernel(threefry.random_bits)
_randint_kernel = Kernel(_randint_narrow)


@out_sharding_param("bits")
def bits(key, shape=(), dtype=None, out_sharding=None):
    """Uniform random unsigned integers (default uint64 with x64 on, else uint32).

    Example:
      >>> b = yax.random.bits(yax.random.PRNGKey(0), (4,))
    """
    key = _checks.as_key("bits", key)
    shape = _checks.static_shape("bits", shape)
    dt = dtypes.default_uint() if dtype is None else np.dtype(dtypes.dtype(dtype))
    if not dtypes.is_unsigned_int(dt):
        raise errors.DTypeError(f"yax.random.bits: dtype must be unsigned, got {dt}.")
    dt = dtypes.canonicalize(dt, warn=True)
    return _bits_kernel(key, bit_width=dt.itemsize * 8, shape=shape)


@out_sharding_param("randint")
def randint(key, shape, minval, maxval, dtype=None, out_sharding=None):
    """Uniform random integers in [minval, maxval) (default dtype int64 with x64 on, else
    int32), bit-identical to `jax.random.randint` (including its slight modulo bias).

    Example:
      >>> dice = yax.random.randint(yax.random.PRNGKey(0), (5,), 1, 7)
    """
    key = _checks.as_key("randint", key)
    shape = _checks.static_shape("randint", shape)
    dtype = _checks.int_dtype("randint", dtype)
    _checks.check_shape("randint", shape, _checks.shape_of(minval), _checks.shape_of(maxval))
    return _randint_kernel(key, _checks.operand("randint", minval),
                           _checks.operand("randint", maxval), shape=shape, dtype=dtype)


# --- Bernoulli and categorical --------------------------------------------------------------


def _bernoulli(key, p, shape, mode):
    dtype = p.dtype
    if mode == "high":
        both = _uniform(key, (2, *shape), dtype)
        u2 = lax.mul(both[1], _const(2.0 ** -dtypes.finfo(dtype).nmant, dtype))
        return lax.lt(u2, jnp.broadcast_to(p, shape) - both[0])
    return lax.lt(_uniform(key, shape, dtype), jnp.broadcast_to(p, shape))


_bernoulli_kernel = Kernel(_bernoulli)


@out_sharding_param("bernoulli")
def bernoulli(key, p=0.5, shape=None, mode="low", out_sharding=None):
    """Boolean draws that are True with probability `p` (a float or float array).

    `shape` defaults to `p`'s shape; mode 'high' uses two uniforms per value for accuracy at
    tiny `p`.
    """
    key = _checks.as_key("bernoulli", key)
    _checks.check_mode("bernoulli", mode, ("high", "low"))
    dtype = _checks.dtype_of(p)
    if not dtypes.is_float(dtype):
        raise errors.DTypeError(
            f"yax.random.bernoulli: the probability p must be a float, got dtype {dtype}.")
    p = jnp.asarray(p, dtype=dtype)
    if shape is None:
        shape = _checks.shape_of(p)
    else:
        shape = _checks.static_shape("bernoulli", shape)
        _checks.check_shape("bernoulli", shape, _checks.shape_of(p))
    return _bernoulli_kernel(key, p, shape=shape, mode=mode)


def _top_k_indices(x, k: int):
    """Indices (int32) of the k largest entries along the last axis, largest first, ties by
    lower index (a stable ascending sort of -x)."""
    last = x.ndim - 1
    iota = lax.broadcasted_iota(np.int32, x.shape, last)
    _, idx = lax.sort_key_val(lax.neg(x), iota, dimension=last, is_stable=True)
    return lax.slice_in_dim(idx, 0, k, axis=last)


def _categorical(key, logits, shape, axis, replace, mode):
    ndim = logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        axis = axis - ndim if axis >= 0 else axis
        draw_shape = list(shape[len(shape) - len(batch_shape):])
        draw_shape.insert(axis % ndim, logits.shape[axis])
        noise = _gumbel(key, (*prefix, *draw_shape), logits.dtype, mode)
        scores = noise + lax.expand_dims(logits, tuple(range(len(prefix))))
        return jnp.argmax(scores, axis=axis)
    logits = logits + _gumbel(key, logits.shape, logits.dtype, mode)
    k = math.prod(prefix)
    indices = _top_k_indices(jnp.moveaxis(logits, axis, -1), k)
    order = (indices.ndim - 1, *range(indices.ndim - 1))  # the k samples lead
    return lax.reshape(lax.transpose(indices, order), shape)


_categorical_kernel = Kernel(_categorical)


@out_sharding_param("categorical")
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, out_sharding=None):
    """Draw category indices from unnormalised log-probabilities `logits` along `axis`
    (the Gumbel-max trick; without replacement, the Gumbel top-k trick).

    Returns integers of shape `shape` (default: `logits.shape` without `axis`).

    Example:
      >>> yax.random.categorical(yax.random.PRNGKey(0), jnp.log(jnp.array([.2, .8])), shape=(3,))
    """
    key = _checks.as_key("categorical", key)
    logits = jnp.asarray(logits)
    if not dtypes.is_float(logits.dtype):
        raise errors.DTypeError(
            f"yax.random.categorical: logits must be floats, got {logits.aval.str_short()}.")
    mode = "low" if mode is None else mode
    _checks.check_mode("categorical", mode, ("highest", "high", "low"))
    if not -logits.ndim <= axis < logits.ndim:
        raise errors.ShapeError(
            f"yax.random.categorical: axis {axis} is out of range for logits "
            f"{logits.aval.str_short()}.")
    axis = axis % logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _checks.static_shape("categorical", shape)
        _checks.check_shape("categorical", shape, batch_shape)
    if not replace:
        k = math.prod(shape[:len(shape) - len(batch_shape)])
        if k > logits.shape[axis]:
            raise _checks.RandomArgumentError(
                f"yax.random.categorical: {k} samples without replacement cannot exceed the "
                f"{logits.shape[axis]} categories of logits {logits.aval.str_short()}.")
    return _categorical_kernel(key, logits, shape=shape, axis=axis, replace=bool(replace),
                               mode=mode)


# --- permutations and choice ----------------------------------------------------------------


def _shuffle(key, x, axis: int):
    """Sort by random 32-bit keys; repeat with fresh keys often enough that ties (which a stable
    sort would leave in input order) are unlikely to bias the result."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = threefry.split(key, (2,))
        key, subkey = keys[0], keys[1]
        sort_keys = threefry.random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, dimension=axis, is_stable=True)
    return x


def _permutation(key, x, axis, independent):
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, order, axis=axis)


_shuffle_kernel = Kernel(_shuffle)
_permutation_kernel = Kernel(_permutation)
_arange_shuffle_kernel = Kernel(lambda key, n: _shuffle(key, jnp.arange(n), 0))


def _concrete_int(name: str, x, what: str) -> int:
    if isinstance(x, Tracer):
        raise errors.ConcretizationError(
            f"yax.random.{name}: {what} must be a concrete integer (it sets the result's size), "
            f"got a traced {x.aval.str_short()}; pass a Python int or an array.")
    if not dtypes.is_int(_checks.dtype_of(x)):
        raise errors.DTypeError(
            f"yax.random.{name}: {what} must be an integer or an array of rank >= 1, got {x!r}.")
    return int(x)


def _canonical_axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(
            f"yax.random.{name}: axis {axis} is out of range for an array of rank {ndim}.")
    return axis % ndim


@out_sharding_param("permutation")
def permutation(key, x, axis=0, independent=False, out_sharding=None):
    """A random permutation of `jnp.arange(x)` (int x) or of `x` along `axis`.

    With `independent=True` every slice along `axis` is shuffled separately.

    Example:
      >>> yax.random.permutation(yax.random.PRNGKey(0), 5)
    """
    key = _checks.as_key("permutation", key)
    if not _checks.shape_of(x):
        axis = _canonical_axis("permutation", axis, 1)
        n = _concrete_int("permutation", x, "x")
        return _arange_shuffle_kernel(key, n=n)
    x = jnp.asarray(x)
    axis = _canonical_axis("permutation", axis, x.ndim)
    return _permutation_kernel(key, x, axis=axis, independent=bool(independent))


def shuffle(key, x, axis=0):
    """Shuffle the entries of `x` along `axis`, each 1-d slice independently (the removed
    `jax.random.shuffle`; equal to `permutation(key, x, axis, independent=True)`)."""
    key = _checks.as_key("shuffle", key)
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise errors.ShapeError("yax.random.shuffle: x must have rank >= 1, got a scalar.")
    return _shuffle_kernel(key, x, axis=_canonical_axis("shuffle", axis, x.ndim))


def _searchsorted_left(sorted_1d, values):
    """For each value, the number of entries of the ascending `sorted_1d` below it."""
    below = jnp.less(sorted_1d, lax.expand_dims(values, (values.ndim,)))
    return jnp.sum(below, axis=-1, dtype=dtypes.default_int())


def _choice_indices(key, p, shape, replace, mode, n_inputs):
    """Indices drawn with probabilities `p` (with replacement: inverse CDF; without: the
    Gumbel top-k trick)."""
    if replace:
        p_cuml = jnp.cumsum(p)
        r = p_cuml[-1] * (1 - _uniform(key, shape, p_cuml.dtype))
        return _searchsorted_left(p_cuml, r)
    g = _gumbel(key, (n_inputs,), p.dtype, mode) + jnp.log(opaque(p, key))
    return _top_k_indices(g, math.prod(shape)).astype(dtypes.default_int())


def _choice(key, arr, p, shape, replace, axis, mode, n_inputs, scalar_a):
    n_draws = math.prod(shape)
    if p is not None:
        ind = _choice_indices(key, p, shape, replace, mode, n_inputs)
        result = ind if scalar_a else jnp.take(arr, ind, axis=axis)
    elif replace:
        ind = _randint(key, 0, n_inputs, shape, dtypes.default_int())
        result = ind if scalar_a else jnp.take(arr, ind, axis=axis)
    else:
        perm = _permutation(key, jnp.arange(n_inputs) if scalar_a else arr, axis, False)
        result = lax.slice_in_dim(perm, 0, n_draws, axis=axis)
    out_shape = shape if scalar_a else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return jnp.reshape(result, out_shape)


_choice_kernel = Kernel(_choice)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples of `a` (an array, sampled along `axis`, or an int n meaning arange(n)).

    Args:
      key: a PRNG key.
      a: array or int.
      shape: static shape of the samples. Default ().
      replace: sample with replacement (default True).
      p: optional 1-d probabilities of the entries of `a` along `axis`.
      axis: the axis of `a` to sample along.
      mode: 'low'/'high' Gumbel mode when `p` is given and `replace=False`.

    Example:
      >>> yax.random.choice(yax.random.PRNGKey(0), 10, (3,), replace=False)
    """
    key = _checks.as_key("choice", key)
    shape = _checks.static_shape("choice", shape)
    scalar_a = not _checks.shape_of(a)
    if scalar_a:
        arr = None
        n_inputs = _concrete_int("choice", a, "a")
    else:
        arr = jnp.asarray(a)
        axis = _canonical_axis("choice", axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=dtypes.default_int() if scalar_a else arr.dtype)
    if n_inputs <= 0:
        raise _checks.RandomArgumentError(
            "yax.random.choice: `a` must have at least one entry unless no samples are taken.")
    if not replace and n_draws > n_inputs:
        raise _checks.RandomArgumentError(
            f"yax.random.choice: cannot take {n_draws} samples (shape {shape}) without "
            f"replacement from a population of {n_inputs}; use replace=True or fewer samples.")
    if p is not None:
        p = jnp.asarray(p)
        if not dtypes.is_inexact(p.dtype):
            p = p.astype(dtypes.default_float())
        if p.shape != (n_inputs,):
            raise errors.ShapeError(
                f"yax.random.choice: p must be a 1-d vector of size a.shape[axis] = "
                f"{n_inputs}, got {p.aval.str_short()}.")
    mode = "low" if mode is None else mode
    _checks.check_mode("choice", mode, ("highest", "high", "low"))
    return _choice_kernel(key, arr, p, shape=shape, replace=bool(replace), axis=axis, mode=mode,
                          n_inputs=n_inputs, scalar_a=scalar_a)
