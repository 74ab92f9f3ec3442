"""yax.numpy functions whose output size depends on the data: nonzero, argwhere, flatnonzero,
one-argument where, bincount, unique (and its array-API variants), union1d, intersect1d,
setdiff1d, setxor1d; plus isin/in1d (static size, listed here as they are set tests).

The static `size=` rule: under jit, vmap or grad, shapes must be known when tracing, so these
functions need `size=` (the output length; shorter results are padded with `fill_value`, longer
ones truncated). Without `size=` they run on concrete arrays only, and a traced input raises a
ConcretizationError that names the function and the fix.

The algorithms are sort based (one stable multi-key sort, then masks and running sums), so the
same code runs eagerly, under jit and under vmap.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.trace import current_trace
from yax.interpreters.staging import StagingTrace
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr, canon_axis, index_dtype, need_size
from yax.numpy._promote import (
    broadcast_shapes,
    check_arraylike,
    promote_dtypes,
    promote_shapes,
    shape_of,
)
from yax.numpy.searching import searchsorted
from yax.numpy.ufunc_comparisons import _to_bool, promote_args
from yax.transforms.jit import jit

__all__ = ["nonzero", "argwhere", "flatnonzero", "where", "bincount", "unique",
           "unique_values", "unique_counts", "unique_inverse", "unique_all", "union1d",
           "intersect1d", "setdiff1d", "setxor1d", "isin", "in1d"]


def true_positions(mask, size: int):
    """The positions of the true entries of the 1-D `mask` (ascending), padded or cut to
    `size`, and how many there are. Padding positions hold len(mask)."""
    n = mask.shape[0]
    key = manipulation.astype(ufuncs.logical_not(mask), np.int32)
    iota = lax.iota(index_dtype(), n)
    _, order = lax.sort((key, iota), dimension=0, num_keys=1)
    count = reductions.sum(mask, dtype=index_dtype())
    if size > n:
        order = manipulation.concatenate([order, creation.full((size - n,), n, index_dtype())])
    order = order[:size]
    valid = lax.iota(index_dtype(), size) < count
    return ufuncs.where(valid, order, n), valid, count


def _fill_values(fill_value, ndim: int) -> list:
    if fill_value is None:
        return [0] * ndim
    if np.ndim(fill_value) == 0 and not isinstance(fill_value, (tuple, list)):
        return [fill_value] * ndim
    fills = list(fill_value)
    if len(fills) != ndim:
        raise ValueError(f"jnp.nonzero: fill_value has {len(fills)} entries for an array of "
                         f"rank {ndim}; give a scalar or one per dimension")
    return fills


def nonzero(a, *, size: int | None = None, fill_value=None):
    """Indices of the nonzero elements, one index array per dimension.

    Under jit/vmap/grad pass a static `size=`; missing entries are `fill_value` (default 0).

    Example:
      >>> jnp.nonzero(jnp.array([0, 3, 0, 4]), size=3)
      (Array([1, 3, 0], dtype=int32),)
    """
    a = arr("nonzero", a)
    if a.ndim == 0:
        raise ValueError("jnp.nonzero of a 0-d array is not supported; use jnp.atleast_1d "
                         "first")
    mask = manipulation.ravel(a != 0 if not dtypes.is_bool(a.dtype) else a)
    if size is None:
        need_size("nonzero", a)
        flat = np.nonzero(np.asarray(mask))[0]
        return tuple(creation.asarray(i.astype(index_dtype()))
                     for i in np.unravel_index(flat, a.shape))
    pos, valid, _ = true_positions(mask, int(size))
    pos = ufuncs.minimum(pos, max(mask.shape[0] - 1, 0))
    idx = _unravel_static(pos, a.shape)
    fills = _fill_values(fill_value, a.ndim)
    return tuple(ufuncs.where(valid, i, manipulation.astype(arr("nonzero", f), i.dtype))
                 for i, f in zip(idx, fills, strict=True))


def _unravel_static(flat, shape) -> list:
    out = []
    for d in reversed(shape):
        out.append(ufuncs.remainder(flat, d) if d else flat)
        flat = ufuncs.floor_divide(flat, d) if d else flat
    return out[::-1]


def flatnonzero(a, *, size: int | None = None, fill_value=None):
    """Indices of the nonzero elements of the flattened `a` (`size=` under jit)."""
    if size is None:
        need_size("flatnonzero", a)
    return nonzero(manipulation.ravel(arr("flatnonzero", a)), size=size,
                   fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
    """Indices of the nonzero elements as a (count, ndim) array (`size=` under jit)."""
    a = arr("argwhere", a)
    if size is None:
        need_size("argwhere", a)
    if a.ndim == 0:
        out = argwhere(manipulation.reshape(a, (1,)), size=size, fill_value=fill_value)
        return out[:, :0]
    idx = nonzero(a, size=size, fill_value=fill_value)
    return manipulation.stack(idx, axis=1)


def where(condition, x=None, y=None, /, *, size: int | None = None, fill_value=None):
    """`x` where `condition` is true, else `y`; with one argument, `nonzero(condition)`.

    Example:
      >>> jnp.where(jnp.arange(3) > 0, 1.0, -1.0)
      Array([-1.,  1.,  1.], dtype=float32)
    """
    if x is None and y is None:
        if size is None:
            need_size("where", condition, what="with one argument its output shape depends on "
                      "the values")
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("jnp.where: size and fill_value only apply to the one-argument form")
    if isinstance(current_trace(), StagingTrace):
        # JAX's jnp.where is a jitted `_where` (promotion and broadcasts inside it), so a staged
        # program shows a `jit[name=_where]` equation; eagerly there is nothing to stage
        return _where_jit(condition, x, y)
    return ufuncs.where(condition, x, y)


def _where(condition, x, y):
    """`where` as JAX stages it: promoted, then every operand broadcast to the result shape
    (scalars too: yax's select_n would take them as they are)."""
    check_arraylike("where", condition, x, y)
    cond = _to_bool(condition)
    x, y = promote_args("where", x, y)
    cond, x, y = promote_shapes("where", cond, x, y)
    shape = broadcast_shapes(*(shape_of(v) for v in (cond, x, y)), name="where")
    if shape:
        x, y = (lax.broadcast_in_dim(v, shape, ()) if np.ndim(v) == 0 else v for v in (x, y))
        if np.ndim(cond) != 0:
            cond = cond if np.shape(cond) == shape else lax.broadcast_in_dim(cond, shape, ())
    return lax.select(cond, x, y)


_where_jit = jit(_where)


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """Counts (or summed `weights`) of each non-negative integer in the 1-D `x`.

    The output length is max(x) + 1 (at least `minlength`); under jit pass `length=`.
    Negative values count in bin 0 and values >= length are dropped (as in JAX)."""
    x = arr("bincount", x)
    if x.ndim != 1:
        raise errors.ShapeError(f"jnp.bincount: x must be 1-D, got shape {x.shape}")
    if not dtypes.is_int(x.dtype) and not dtypes.is_bool(x.dtype):
        raise TypeError(f"jnp.bincount: x must be integers, got {x.dtype}")
    if length is None:
        need_size("bincount", x, what="the output length is max(x) + 1")
        top = int(np.max(np.asarray(x))) + 1 if x.shape[0] else 0
        length = max(int(minlength), top)
    length = int(length)
    if weights is None:
        w = creation.ones(x.shape, index_dtype())
    else:
        w = manipulation.broadcast_to(arr("bincount", weights), x.shape)
    idx = ufuncs.maximum(manipulation.astype(x, index_dtype()), 0)
    return creation.zeros((length,), w.dtype).at[idx].add(w, mode="drop")


# --- unique and the set operations ---------------------------------------------------------


def _neq(a, b, equal_nan: bool):
    ne = a != b
    if equal_nan and dtypes.is_inexact(a.dtype):
        ne = ufuncs.logical_and(ne, ufuncs.logical_not(
            ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b))))
    return ne


def _sorted_groups(cols, valid, equal_nan: bool):
    """Sort rows (given as columns) with invalid rows last; mark the first row of each group.

    Returns (perm, sorted columns, first-of-group mask, number of valid rows)."""
    n = cols[0].shape[0]
    # complex columns sort by real part, then imaginary part (sort keys must be real)
    cols = [part for c in cols for part in ((ufuncs.real(c), ufuncs.imag(c))
                                            if dtypes.is_complex(c.dtype) else (c,))]
    key = manipulation.astype(ufuncs.logical_not(valid), np.int32)
    iota = lax.iota(index_dtype(), n)
    out = lax.sort((key, *cols, iota), dimension=0, num_keys=1 + len(cols))
    scols, perm = out[1:-1], out[-1]
    svalid = out[0] == 0
    differs = creation.zeros((max(n - 1, 0),), np.bool_)
    for c in scols:
        differs = ufuncs.logical_or(differs, _neq(c[1:], c[:-1], equal_nan))
    first = manipulation.concatenate([creation.ones((min(n, 1),), np.bool_), differs])
    return perm, scols, ufuncs.logical_and(first, svalid), reductions.sum(valid,
                                                                          dtype=index_dtype())


class _Unique(NamedTuple):
    values: object
    index: object
    inverse: object
    counts: object


def _unique_core(name, mat, valid, size, fill_value, equal_nan, want_inverse=False):
    """Unique rows of the 2-D `mat` among rows where `valid` holds (sorted)."""
    n = mat.shape[0]
    cols = [mat[:, j] for j in range(mat.shape[1])] if n else []
    if not cols or n == 0:
        return _empty_unique(name, mat, size, fill_value)
    perm, scols, first, nvalid = _sorted_groups(cols, valid, equal_nan)
    if size is None:
        need_size(name, mat, valid)
        size = int(np.sum(np.asarray(first)))
    # one position more than requested, so a truncated result still counts its last group
    pos_all, ok_all, _ = true_positions(first, int(size) + 1)
    pos_c = ufuncs.where(ok_all, pos_all, nvalid)  # past the last group: counts come out 0
    counts = pos_c[1:] - pos_c[:-1]
    pos, ok = pos_all[:size], ok_all[:size]
    safe = ufuncs.minimum(pos, n - 1)
    rows = perm[safe]
    values = mat[rows]
    fill = values[0:1] if fill_value is None else manipulation.astype(
        arr(name, fill_value), mat.dtype)
    values = ufuncs.where(ok[:, None], values, fill)
    index = ufuncs.where(ok, rows, rows[0])  # JAX pads indices with the first one
    inverse = None
    if want_inverse:
        group = reductions.cumsum(first, dtype=index_dtype()) - 1
        inverse = creation.zeros((n,), index_dtype()).at[perm].set(group)
    return _Unique(values, index, inverse, counts)


def _empty_unique(name, mat, size, fill_value):
    size = 0 if size is None else int(size)
    if size and fill_value is None:  # no smallest value to pad with (JAX raises too)
        raise ValueError(f"jnp.{name}: a zero-size input with size={size} needs an explicit "
                         f"fill_value")
    fill = 0 if fill_value is None else fill_value
    values = creation.full((size, mat.shape[1]), fill, mat.dtype)
    zeros = creation.zeros((size,), index_dtype())
    return _Unique(values, zeros, creation.zeros((mat.shape[0],), index_dtype()), zeros)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None, sorted: bool = True):
    """The sorted unique elements of `ar` (or unique slices along `axis`).

    Under jit/vmap/grad pass a static `size=`; missing entries are `fill_value` (default: the
    smallest unique value). Optional extra results: first indices, the inverse (to rebuild
    `ar`) and counts.

    Example:
      >>> jnp.unique(jnp.array([3, 1, 3, 2]))
      Array([1, 2, 3], dtype=int32)
    """
    a = arr("unique", ar)
    if axis is None:
        mat, out_shape = manipulation.reshape(a, (a.size, 1)), None
    else:
        axis = canon_axis("unique", axis, a.ndim)
        moved = manipulation.moveaxis(a, axis, 0)
        mat = manipulation.reshape(moved, (moved.shape[0], -1)) if moved.shape[0] else \
            manipulation.reshape(moved, (0, int(np.prod(moved.shape[1:]))))
        out_shape = moved.shape[1:]
    valid = creation.ones((mat.shape[0],), np.bool_)
    res = _unique_core("unique", mat, valid, size, fill_value, equal_nan, return_inverse)
    if axis is None:
        values = res.values[:, 0]
    else:
        values = manipulation.reshape(res.values, (res.values.shape[0], *out_shape))
        values = manipulation.moveaxis(values, 0, axis)
    extra = []
    if return_index:
        extra.append(res.index)
    if return_inverse:
        inv = res.inverse
        extra.append(manipulation.reshape(inv, a.shape) if axis is None else inv)
    if return_counts:
        extra.append(res.counts)
    return (values, *extra) if extra else values


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    """The array API's `unique` without extra results."""
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size: int | None = None, fill_value=None):
    """Unique values and how often each occurs."""
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size: int | None = None, fill_value=None):
    """Unique values and the indices that rebuild `x` from them (shaped like `x`)."""
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size,
                                       fill_value=fill_value))


def unique_all(x, /, *, size: int | None = None, fill_value=None):
    """Unique values, first indices, inverse indices and counts."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, size=size, fill_value=fill_value))


def _flat(name, a):
    return manipulation.ravel(arr(name, a))


def _set_result(name, values, valid, size, fill_value):
    mat = manipulation.reshape(values, (values.shape[0], 1))
    if size is None:
        need_size(name, values, valid)
    return _unique_core(name, mat, valid, size, fill_value, equal_nan=True)


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """The sorted unique values found in either array (`size=` under jit)."""
    a, b = promote_dtypes(_flat("union1d", ar1), _flat("union1d", ar2))
    both = manipulation.concatenate([a, b])
    valid = creation.ones(both.shape, np.bool_)
    return _set_result("union1d", both, valid, size, fill_value).values[:, 0]


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value=None):
    """The sorted unique values found in both arrays (`size=` under jit).

    With return_indices, also the indices of their first occurrences in each array."""
    a, b = promote_dtypes(_flat("intersect1d", ar1), _flat("intersect1d", ar2))
    res = _set_result("intersect1d", a, isin(a, b), size, fill_value)
    values = res.values[:, 0]
    if not return_indices:
        return values
    perm_b = lax.sort((b, lax.iota(index_dtype(), b.shape[0])), dimension=0, num_keys=1)
    pos = ufuncs.minimum(searchsorted(perm_b[0], values), max(b.shape[0] - 1, 0))
    ind2 = perm_b[1][pos]
    if size is not None:  # JAX pads the indices with the lengths of the inputs
        ok = res.counts > 0
        return (values, ufuncs.where(ok, res.index, a.shape[0]),
                ufuncs.where(ok, ind2, b.shape[0]))
    return values, res.index, ind2


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
              fill_value=None):
    """The sorted unique values of `ar1` that are not in `ar2` (`size=` under jit)."""
    a, b = promote_dtypes(_flat("setdiff1d", ar1), _flat("setdiff1d", ar2))
    keep = ufuncs.logical_not(isin(a, b))
    fill_value = 0 if fill_value is None else fill_value  # JAX's default here (not the min)
    return _set_result("setdiff1d", a, keep, size, fill_value).values[:, 0]


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
             fill_value=None):
    """The sorted unique values found in exactly one of the arrays (`size=` under jit)."""
    a, b = promote_dtypes(_flat("setxor1d", ar1), _flat("setxor1d", ar2))
    both = manipulation.concatenate([a, b])
    keep = ufuncs.logical_xor(isin(both, a), isin(both, b))
    return _set_result("setxor1d", both, keep, size, fill_value).values[:, 0]


_COMPARE_ALL_LIMIT = 1 << 16


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto"):
    """Whether each element of `element` occurs in `test_elements` (shape of `element`).

    method: 'compare_all' (all pairs), 'sort' (binary search in the sorted test elements) or
    'auto' (pairs when small)."""
    e, t = promote_dtypes(arr("isin", element), _flat("isin", test_elements))
    if method not in ("auto", "compare_all", "sort", "binary_search"):
        raise ValueError(f"jnp.isin: unknown method {method!r}")
    flat = manipulation.ravel(e)
    if t.shape[0] == 0:
        found = creation.zeros(flat.shape, np.bool_)
    elif method == "compare_all" or dtypes.is_complex(t.dtype) or (
            method == "auto" and flat.shape[0] * t.shape[0] <= _COMPARE_ALL_LIMIT):
        found = reductions.any(flat[:, None] == t[None, :], axis=1)
    else:
        st = lax.sort(t, dimension=0)
        pos = ufuncs.minimum(searchsorted(st, flat), t.shape[0] - 1)
        found = st[pos] == flat
    found = manipulation.reshape(found, e.shape)
    return ufuncs.logical_not(found) if invert else found


def in1d(ar1, ar2, assume_unique: bool = False, invert: bool = False, *, method: str = "auto"):
    """`isin` of the flattened `ar1` (NumPy's older name)."""
    return isin(_flat("in1d", ar1), ar2, assume_unique, invert, method=method)

