"""Binomial and multinomial draws (float counts, as jax returns them).

Binomial(n, p) works with q = min(p, 1 - p) and reflects at the end (n - k when p >= 1/2).
Where n q <= 10 it uses inversion by geometric waiting times (count the Geometric(q) gaps
whose running sum stays <= n); elsewhere Hormann's BTRS transformed rejection ("The generation
of binomial random variates", 1993) with Stirling-series tails for the log factorials. As in
jax (which follows TensorFlow), both loops run over the whole array, every lane stepping with the
same keys, and the result is selected per element, so the draws are bit-identical to
`jax.random.binomial`. Multinomial counts come from a scan of conditional binomials over the
categories (remaining trials, p_i / sum_{j >= i} p_j), one key per category.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random.continuous import _uniform

# log(k!) - Stirling's approximation of it, exactly, for k = 0..9.
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: the table for k <= 9, else the series."""
    table = jnp.asarray(np.array(_STIRLING_TAIL), dtype=k.dtype)
    small = k <= 9
    k = lax.clamp(jnp.zeros_like(k), k, jnp.full_like(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(small, table[jnp.floor(k).astype(np.int32)], series)


def _binomial_inversion(key, count, prob, shape, dtype):
    log1m_prob = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        keys = threefry.split(key, (2,))
        subkey, key = keys[0], keys[1]
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(subkey, shape, prob.dtype)
        geom_sum = geom_sum + jnp.ceil(jnp.log(u) / log1m_prob)
        return i + 1, num_geom, geom_sum, key

    zeros = jnp.zeros(shape, prob.dtype)
    init = (0, zeros, zeros, key)
    k = lax.while_loop(lambda c: jnp.any(c[2] <= count), body, init)[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype):
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        keys = threefry.split(key, (3,))
        key = keys[0]
        u = _uniform(keys[1], shape, prob.dtype) - 0.5
        v = _uniform(keys[2], shape, prob.dtype)
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = accept1 | (~reject & (v <= bound))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    init = (0, jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, bool), key)
    return lax.while_loop(lambda c: jnp.any(~c[2]), body, init)[1].astype(dtype)


def _binomial(key, count, prob, shape, dtype):
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_neg = q < 0.0
    q = lax.select(q_is_nan | q_neg, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    # Lanes the other algorithm handles get harmless parameters (cheap, always accepted soon).
    count_inv = lax.select(use_inversion, count, jnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, jnp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, jnp.full_like(q, 0.5), q)
    samples = lax.select(use_inversion, _binomial_inversion(key, count_inv, q, shape, dtype),
                         _btrs(key, count_btrs, q_btrs, shape, dtype))
    invalid = q_neg | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return lax.select(keep, samples, count.astype(dtype) - samples)


def _multinomial(key, n, p, shape, dtype):
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = threefry.split(key, (ratios.shape[0],))

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial(k, remainder, jnp.clip(ratio, 0, 1), remainder.shape,
                          remainder.dtype)
        return remainder - count, count

    _, counts = lax.scan(step, n, (ratios, keys))
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


_binomial_kernel = Kernel(_binomial)
_multinomial_kernel = Kernel(_multinomial)


def _as_inexact(x):
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float())


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) draws as floats (n may be a float; it is floored). NaN for a negative or
    NaN `n` or an invalid `p`, inf for an infinite `n`. `shape` defaults to the broadcast shape
    of `n` and `p`.

    Example:
      >>> yax.random.binomial(yax.random.key(0), 10, 0.3, (4,))  # doctest: +SKIP
    """
    key = _checks.as_key("binomial", key)
    dtype = _checks.float_dtype("binomial", dtype)
    params = (_checks.shape_of(n), _checks.shape_of(p))
    if shape is None:
        shape = _checks.broadcast_shapes(*params)
    else:
        shape = _checks.static_shape("binomial", shape)
        _checks.check_shape("binomial", shape, *params)
    return _binomial_kernel(key, _checks.operand("binomial", n), _as_inexact(p), shape=shape,
                            dtype=dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of `n` trials over the outcomes on the last axis of `p`.

    Returns floats of shape `p.shape` (or `shape`, whose last entry must be `p.shape[-1]`).
    `unroll` is accepted for jax compatibility and ignored.
    """
    del unroll
    key = _checks.as_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    dt = jnp.result_type(n, p)
    dt = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    n, p = n.astype(dt), p.astype(dt)
    if p.ndim < 1:
        raise errors.ShapeError("yax.random.multinomial: p must have rank >= 1 (outcomes on "
                                f"its last axis), got {p.aval.str_short()}.")
    shape = tuple(p.shape) if shape is None else _checks.static_shape("multinomial", shape)
    dtype = _checks.float_dtype("multinomial", dtype)
    return _multinomial_kernel(key, n, p, shape=shape, dtype=dtype)
