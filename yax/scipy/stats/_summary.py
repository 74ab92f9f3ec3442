"""Summary statistics of jax.scipy.stats: mode, rankdata and sem.

mode and rankdata compare every pair of elements along the axis (O(n^2) work, but one fused
elementwise program with no data-dependent shapes, so they jit and vmap)."""

from __future__ import annotations

from typing import NamedTuple

import yax.numpy as jnp

__all__ = ["mode", "rankdata", "sem", "ModeResult"]


class ModeResult(NamedTuple):
    mode: object
    count: object


def _along_last(a, axis):
    if axis is None:
        return jnp.ravel(a), None
    return jnp.moveaxis(a, axis, -1), axis


def mode(a, axis=0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most frequent value along `axis` (the smallest among ties, as scipy) and its count."""
    if nan_policy != "propagate":
        raise NotImplementedError("mode: only nan_policy='propagate' is supported")
    a = jnp.asarray(a)
    x, ax = _along_last(a, axis)
    if x.shape[-1] == 0:
        raise ValueError("mode of an empty axis")
    counts = jnp.sum(x[..., :, None] == x[..., None, :], axis=-1)
    best = jnp.max(counts, axis=-1, keepdims=True)
    # among the values reaching the top count, the smallest
    big = jnp.where(counts == best, x, jnp.max(x, axis=-1, keepdims=True))
    value = jnp.min(big, axis=-1)
    count = best[..., 0]
    if keepdims:
        if ax is None:
            value = jnp.reshape(value, (1,) * a.ndim)
            count = jnp.reshape(count, (1,) * a.ndim)
        else:
            value, count = jnp.expand_dims(value, ax), jnp.expand_dims(count, ax)
    return ModeResult(value, count)


def rankdata(a, method: str = "average", *, axis=None, nan_policy: str = "propagate"):
    """Ranks 1..n of the data along `axis` (None: flattened), ties resolved by `method`:
    'average', 'min', 'max', 'dense' or 'ordinal' (as scipy)."""
    if nan_policy != "propagate":
        raise NotImplementedError("rankdata: only nan_policy='propagate' is supported")
    a = jnp.asarray(a)
    x, ax = _along_last(a, axis)
    if method == "ordinal":
        order = jnp.argsort(x, axis=-1, stable=True)
        ranks = jnp.argsort(order, axis=-1, stable=True) + 1
    else:
        less = jnp.sum(x[..., None, :] < x[..., :, None], axis=-1)
        equal = jnp.sum(x[..., None, :] == x[..., :, None], axis=-1)
        if method == "min":
            ranks = less + 1
        elif method == "max":
            ranks = less + equal
        elif method == "average":
            ranks = less + (equal + 1) / 2
        elif method == "dense":
            # each distinct smaller value counts once: sum of 1/multiplicity over smaller ones
            smaller = (x[..., None, :] < x[..., :, None]) / equal[..., None, :]
            ranks = jnp.round(jnp.sum(smaller, axis=-1)).astype(less.dtype) + 1
        else:
            raise ValueError(f"rankdata: unknown method {method!r}")
    return ranks if ax is None else jnp.moveaxis(ranks, -1, ax)


def sem(a, axis=0, ddof: int = 1, nan_policy: str = "propagate", *, keepdims: bool = False):
    """The standard error of the mean, std(a, ddof) / sqrt(n) along `axis`."""
    if nan_policy != "propagate":
        raise NotImplementedError("sem: only nan_policy='propagate' is supported")
    a = jnp.asarray(a)
    n = a.size if axis is None else a.shape[axis]
    return jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(n)
