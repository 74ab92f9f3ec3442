"""yax.numpy searching and partial sorting: searchsorted, digitize, lexsort, partition,
argpartition.

`searchsorted` is a branch-free binary search: ceil(log2(n + 1)) rounds, each one gather and
one select, so it is the same program eagerly, under jit and under vmap. Comparisons use the
sort order (NaN after every number), so it agrees with `jnp.sort`.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.numpy import creation, manipulation, reductions, sorting, ufuncs
from yax.numpy._arguments import arr, canon_axis, index_dtype
from yax.numpy._promote import promote_dtypes

__all__ = ["searchsorted", "digitize", "lexsort", "partition", "argpartition", "sort_complex"]


def _less(x, y):
    """x < y in sort order: NaN is larger than every number (and equal to NaN); complex values
    in lexicographic order (real part first), as `jnp.sort`."""
    lt = x < y
    if dtypes.is_inexact(x.dtype):
        lt = ufuncs.logical_or(lt, ufuncs.logical_and(ufuncs.isnan(y),
                                                      ufuncs.logical_not(ufuncs.isnan(x))))
    return lt


def _binary_search(a, v, side: str):
    n = a.shape[0]
    dt = index_dtype()
    lo = creation.zeros(v.shape, dt)
    hi = creation.full(v.shape, n, dt)
    for _ in range(max(1, math.ceil(math.log2(n + 1)))):
        mid = (lo + hi) // 2
        am = a[ufuncs.minimum(mid, n - 1)]
        # go right while a[mid] sorts before v (left) / not after v (right)
        go = _less(am, v) if side == "left" else ufuncs.logical_not(_less(v, am))
        go = ufuncs.logical_and(go, lo < hi)
        lo = ufuncs.where(go, mid + 1, lo)
        hi = ufuncs.where(go, hi, ufuncs.where(lo < hi, mid, hi))
    return lo


def _compare_all(a, v, side: str):
    flat = manipulation.ravel(v)
    if side == "left":
        hits = _less(a[None, :], flat[:, None])
    else:
        hits = ufuncs.logical_not(_less(flat[:, None], a[None, :]))
    count = reductions.sum(hits, axis=1, dtype=index_dtype())
    return manipulation.reshape(count, v.shape)


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Indices at which to insert `v` into the sorted 1-D `a` to keep it sorted.

    side='left' gives the first suitable position, 'right' the last. method: 'scan' /
    'scan_unrolled' / 'sort' (binary search) or 'compare_all' (all pairs, fast for small `a`).

    Example:
      >>> jnp.searchsorted(jnp.array([1., 2., 3.]), jnp.array([2., 2.5]))
      Array([1, 2], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"jnp.searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"jnp.searchsorted: unknown method {method!r}")
    a, v = promote_dtypes(arr("searchsorted", a), arr("searchsorted", v))
    a, v = arr("searchsorted", a), arr("searchsorted", v)
    if a.ndim != 1:
        raise errors.ShapeError(f"jnp.searchsorted: a must be 1-D, got shape {a.shape}")
    if sorter is not None:
        a = a[arr("searchsorted", sorter)]
    if a.shape[0] == 0:
        return creation.zeros(v.shape, _position_dtype(0))
    out = _compare_all(a, v, side) if method == "compare_all" else _binary_search(a, v, side)
    return manipulation.astype(out, _position_dtype(a.shape[0]))


def _position_dtype(n: int):
    """int32 whenever the positions fit (JAX's choice, also with x64), else the index type."""
    return np.dtype(np.int32) if n < np.iinfo(np.int32).max else index_dtype()


def digitize(x, bins, right: bool = False):
    """Index of the bin of each `x` for monotonic `bins` (increasing or decreasing).

    Increasing bins: bins[i-1] <= x < bins[i] gives i (with right=True, bins[i-1] < x <=
    bins[i])."""
    x, bins = arr("digitize", x), arr("digitize", bins)
    if bins.ndim != 1:
        raise errors.ShapeError(f"jnp.digitize: bins must be 1-D, got shape {bins.shape}")
    if bins.shape[0] == 0:
        return creation.zeros(x.shape, _position_dtype(0))
    side = "left" if right else "right"
    up = searchsorted(bins, x, side=side)
    down = bins.shape[0] - searchsorted(manipulation.flip(bins), x, side=side)
    return ufuncs.where(bins[-1] >= bins[0], up, down)


def lexsort(keys, axis: int = -1):
    """Indices that sort by several keys, the last key primary (stable).

    `keys` is a sequence of same-shape arrays or a 2-D array whose rows are the keys."""
    if hasattr(keys, "shape") and not isinstance(keys, (list, tuple)):
        k = arr("lexsort", keys)
        if k.ndim == 0:
            raise errors.ShapeError("jnp.lexsort: keys must have rank >= 1")
        keys = [k[i] for i in range(k.shape[0])]
    keys = [arr("lexsort", k) for k in keys]
    if not keys:
        raise TypeError("jnp.lexsort: need at least one key")
    shape = keys[0].shape
    for k in keys:
        if k.shape != shape:
            raise errors.ShapeError(f"jnp.lexsort: all keys need one shape, got {shape} and "
                                    f"{k.shape}")
    if not shape:
        return creation.zeros((), index_dtype())
    ax = canon_axis("lexsort", axis, len(shape))
    iota = lax.broadcasted_iota(index_dtype(), shape, ax)
    out = lax.sort((*keys[::-1], iota), dimension=ax, num_keys=len(keys))
    return out[-1]


def _kth(name, kth, n: int) -> int:
    k = int(np.asarray(kth)) if np.ndim(kth) == 0 else None
    if k is None:
        raise NotImplementedError(f"jnp.{name}: kth must be a single int")
    if not -n <= k < n:
        raise ValueError(f"jnp.{name}: kth {k} out of bounds for axis of size {n}")
    return k % n


def partition(a, kth: int, axis: int = -1):
    """`a` rearranged so the element at `kth` is where a full sort puts it, smaller ones before
    and larger ones after. yax returns the fully sorted array, which satisfies this."""
    a = arr("partition", a)
    ax = canon_axis("partition", axis, a.ndim)
    _kth("partition", kth, a.shape[ax])
    return sorting.sort(a, axis=ax)


def argpartition(a, kth: int, axis: int = -1):
    """Indices that `partition` `a` (yax returns a stable full argsort, which qualifies)."""
    a = arr("argpartition", a)
    ax = canon_axis("argpartition", axis, a.ndim)
    _kth("argpartition", kth, a.shape[ax])
    return manipulation.astype(sorting.argsort(a, axis=ax), np.int32)  # int32, as JAX


def sort_complex(a):
    """Sort by real part, then imaginary part; the result is complex."""
    a = arr("sort_complex", a)
    if not dtypes.is_complex(a.dtype):
        a = ufuncs.add(a, 0j)  # the weak complex zero picks complex64/complex128 by promotion
    re, im = ufuncs.real(a), ufuncs.imag(a)
    _, _, out = lax.sort((re, im, a), dimension=-1, num_keys=2)
    return out
