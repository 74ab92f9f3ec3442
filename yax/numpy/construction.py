"""yax.numpy array construction from structure: triangles and diagonals (tril, triu, diag,
diagonal, trace, fill_diagonal), index grids (meshgrid, indices, ix_, tril_indices, ...),
evenly and log-spaced ranges (linspace, logspace, geomspace) and `block`.

Everything here has static shapes: sizes, offsets and diagonals are Python values, so index
arrays are computed with NumPy at trace time and applied with one gather, scatter or select.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.trace import Tracer
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr, canon_axis, index_dtype, is_traced
from yax.numpy._promote import dtype_and_weak
from yax.numpy.rearrange import resize
from yax.numpy.setops import nonzero

__all__ = ["tril", "triu", "tril_indices", "triu_indices", "tril_indices_from",
           "triu_indices_from", "diag_indices", "diag_indices_from", "mask_indices", "meshgrid",
           "indices", "ix_", "diag", "diagflat", "diagonal", "trace", "fill_diagonal",
           "linspace", "logspace", "geomspace", "block", "vander"]


def _int_array(x):
    return creation.asarray(np.asarray(x).astype(index_dtype()))


def _triangle(name, m, k, lower: bool):
    m = arr(name, m)
    if m.ndim < 2:
        raise errors.ShapeError(f"jnp.{name} needs an array of rank >= 2, got shape {m.shape}")
    n_rows, n_cols = m.shape[-2:]
    rows = lax.broadcasted_iota(np.int32, (n_rows, n_cols), 0)
    cols = lax.broadcasted_iota(np.int32, (n_rows, n_cols), 1)
    diff = cols - rows
    mask = diff <= k if lower else diff >= k
    return ufuncs.where(mask, m, creation.zeros((), m.dtype))


def tril(m, k: int = 0):
    """The lower triangle of the last two axes of `m` (elements above diagonal `k` zeroed)."""
    return _triangle("tril", m, int(k), lower=True)


def triu(m, k: int = 0):
    """The upper triangle of the last two axes of `m` (elements below diagonal `k` zeroed)."""
    return _triangle("triu", m, int(k), lower=False)


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """Row and column indices of the lower triangle of an (n, m) array."""
    return tuple(_int_array(i) for i in np.tril_indices(int(n), int(k), m))


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """Row and column indices of the upper triangle of an (n, m) array."""
    return tuple(_int_array(i) for i in np.triu_indices(int(n), int(k), m))


def tril_indices_from(arr_, k: int = 0):
    """`tril_indices` for the shape of a 2-D array."""
    n, m = np.shape(arr_) if not hasattr(arr_, "shape") else arr_.shape
    return tril_indices(n, k, m)


def triu_indices_from(arr_, k: int = 0):
    """`triu_indices` for the shape of a 2-D array."""
    n, m = np.shape(arr_) if not hasattr(arr_, "shape") else arr_.shape
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2):
    """Indices of the main diagonal of an n x ... x n array of rank `ndim`."""
    i = _int_array(np.arange(int(n)))
    return (i,) * int(ndim)


def diag_indices_from(arr_):
    """`diag_indices` for a square array of any rank."""
    shape = arr_.shape
    if len(set(shape)) > 1 or len(shape) < 2:
        raise errors.ShapeError(f"jnp.diag_indices_from needs a square array of rank >= 2, got "
                                f"shape {shape}")
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func, k: int = 0):
    """Indices where `mask_func(ones((n, n)), k)` is nonzero (e.g. mask_func=jnp.triu)."""
    mask = np.asarray(mask_func(creation.ones((n, n), np.int32), k)) != 0
    return tuple(_int_array(i) for i in np.nonzero(mask))


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-D coordinate vectors ('xy': Cartesian, 'ij': matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"jnp.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [manipulation.ravel(arr("meshgrid", x)) for x in xi]
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        axis = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and len(xs) >= 2 else i
        view = [1] * len(xs)
        view[axis] = x.shape[0]
        x = manipulation.reshape(x, tuple(view))
        out.append(x if sparse else manipulation.broadcast_to(x, tuple(shape)))
    return out


def indices(dimensions, dtype=None, sparse: bool = False):
    """An index grid: `out[i][...]` is the index along axis i (shape (len(dims), *dims))."""
    dims = tuple(int(d) for d in dimensions)
    dt = index_dtype() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))
    grids = []
    for i, d in enumerate(dims):
        if sparse:
            shape = tuple(d if j == i else 1 for j in range(len(dims)))
            grids.append(lax.broadcasted_iota(dt, shape, i))
        else:
            grids.append(lax.broadcasted_iota(dt, dims, i))
    if sparse:
        return tuple(grids)
    return manipulation.stack(grids) if grids else creation.zeros((0,), dt)


def ix_(*args):
    """Open-mesh index arrays: `a[ix_(rows, cols)]` takes the cross product of the indices."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = arr("ix_", a)
        if a.ndim != 1:
            raise errors.ShapeError(f"jnp.ix_: arguments must be 1-D, got shape {a.shape}")
        if dtypes.is_bool(a.dtype):
            (a,) = nonzero(a)
        shape = tuple(a.shape[0] if j == i else 1 for j in range(n))
        out.append(manipulation.reshape(a, shape))
    return tuple(out)


def diag(v, k: int = 0):
    """The k-th diagonal of a 2-D array, or a 2-D array with the 1-D `v` on its k-th diagonal."""
    v = arr("diag", v)
    k = int(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise errors.ShapeError(f"jnp.diag: input must be 1-D or 2-D, got shape {v.shape}")
    n = v.shape[0] + abs(k)
    rows = np.arange(v.shape[0]) + max(-k, 0)
    cols = np.arange(v.shape[0]) + max(k, 0)
    return creation.zeros((n, n), v.dtype).at[rows, cols].set(v)


def diagflat(v, k: int = 0):
    """A 2-D array with the flattened `v` on its k-th diagonal."""
    return diag(manipulation.ravel(arr("diagflat", v)), k)


def _diag_positions(n: int, m: int, offset: int):
    length = max(0, min(n - max(-offset, 0), m - max(offset, 0)))
    rows = np.arange(length) + max(-offset, 0)
    return rows, rows + offset


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal of the (axis1, axis2) planes of `a`, as the last axis of the result."""
    a = arr("diagonal", a)
    if a.ndim < 2:
        raise errors.ShapeError(f"jnp.diagonal needs rank >= 2, got shape {a.shape}")
    ax1, ax2 = canon_axis("diagonal", axis1, a.ndim), canon_axis("diagonal", axis2, a.ndim)
    if ax1 == ax2:
        raise errors.ShapeError("jnp.diagonal: axis1 and axis2 must differ")
    a = manipulation.moveaxis(a, (ax1, ax2), (-2, -1))
    rows, cols = _diag_positions(a.shape[-2], a.shape[-1], int(offset))
    return a[..., rows, cols]


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """Sum along a diagonal (see `diagonal`); integers accumulate as in `sum`."""
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """A copy of `a` with its main diagonal set to `val` (repeated cyclically if shorter).

    yax arrays are immutable, so `inplace=False` is required (as in JAX)."""
    if inplace:
        raise NotImplementedError("jnp.fill_diagonal cannot modify arrays in place (yax arrays "
                                  "are immutable); call it with inplace=False and use the "
                                  "returned array")
    a = arr("fill_diagonal", a)
    if a.ndim < 2:
        raise errors.ShapeError(f"jnp.fill_diagonal needs rank >= 2, got shape {a.shape}")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise errors.ShapeError(f"jnp.fill_diagonal: all dimensions must be equal for rank > 2, "
                                f"got shape {a.shape}")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        step = 1 + int(np.sum(np.cumprod(a.shape[:-1])))
        end = a.size
    positions = np.arange(0, min(end, a.size), step)
    val = manipulation.astype(arr("fill_diagonal", val), a.dtype)
    if val.ndim:
        val = resize(val, (len(positions),))
    flat = manipulation.ravel(a).at[positions].set(val)
    return manipulation.reshape(flat, a.shape)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, device=None):
    """`num` evenly spaced samples from `start` to `stop` (`num` static; bounds may be traced
    or arrays, which add axes). Integer dtypes floor the samples, as NumPy does. `device`
    places the samples (and the step) as `yax.device_put` does.

    Example:
      >>> jnp.linspace(0, 1, 5)
      Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    num = int(creation._static_scalar(num, "linspace", "number of samples"))
    if num < 0:
        raise ValueError(f"linspace: number of samples must be non-negative, got {num}")
    comp_dt = dtypes.result_type(creation._leaf_type(start), creation._leaf_type(stop))[0]
    if not dtypes.is_inexact(comp_dt):
        comp_dt = dtypes.canonicalize(dtypes.default_float())
    out_dt = comp_dt if dtype is None else creation._canonical_dtype(dtype)
    div = (num - 1) if endpoint else num
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        out, step = _linspace_traced(start, stop, num, endpoint, div, comp_dt, axis)
    else:
        host_dt = np.complex128 if dtypes.is_complex(comp_dt) else np.float64
        lo = np.asarray(creation._to_host(start), host_dt)
        hi = np.asarray(creation._to_host(stop), host_dt)
        value, step = np.linspace(lo, hi, num, endpoint=endpoint, retstep=True, axis=axis)
        if dtypes.is_int(out_dt):
            value = np.floor(value)
        out = creation._const(value.astype(out_dt), out_dt)
        step = creation._const(np.asarray(step).astype(comp_dt), comp_dt)
    if out.dtype != out_dt:
        out = creation._astype(ufuncs.floor(out) if dtypes.is_int(out_dt) else out, out_dt)
    out = creation.placed(out, device)
    return (out, creation.placed(step, device)) if retstep else out


def _linspace_traced(start, stop, num, endpoint, div, comp_dt, axis):
    """start + i * step along a new leading axis (moved to `axis`), the last sample exactly
    `stop` when `endpoint`."""
    start, stop = creation.asarray(start, comp_dt), creation.asarray(stop, comp_dt)
    start, stop = manipulation.broadcast_arrays(start, stop)
    delta = ufuncs.subtract(stop, start)
    step = ufuncs.divide(delta, div) if div > 0 else ufuncs.multiply(delta, np.nan)
    ndim = start.ndim
    idx = np.arange(num).reshape((num,) + (1,) * ndim)
    ramp = creation._const(idx, comp_dt)
    out = ufuncs.add(start, ufuncs.multiply(ramp, step)) if div > 0 else ufuncs.add(
        start, ufuncs.multiply(ramp, 0.0))
    if endpoint and num > 1:
        last = creation._const(idx == num - 1, dtypes.bool_)
        out = ufuncs.where(last, stop, out)
    return manipulation.moveaxis(out, 0, axis), step


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
    """`base ** linspace(start, stop, num)`: numbers evenly spaced on a log scale."""
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    base = manipulation.astype(arr("logspace", base), lin.dtype) if is_traced(base) or \
        not isinstance(base, (int, float)) else base
    if not isinstance(base, (int, float)) and np.ndim(base):
        base = manipulation.expand_dims(base, axis)
    out = ufuncs.power(base, lin)
    return out if dtype is None else manipulation.astype(out, dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers evenly spaced on a log scale with endpoints `start` and `stop` (same sign)."""
    start_a, stop_a = arr("geomspace", start), arr("geomspace", stop)
    dt = dtypes.result_type(*(_dt(x) for x in (start, stop)))[0]
    if not dtypes.is_inexact(dt):
        dt = dtypes.canonicalize(dtypes.default_float())
    start_a, stop_a = manipulation.astype(start_a, dt), manipulation.astype(stop_a, dt)
    sign = ufuncs.sign(start_a)
    lo = ufuncs.log10(ufuncs.abs(start_a))
    hi = ufuncs.log10(ufuncs.abs(stop_a))
    out = logspace(lo, hi, num, endpoint=endpoint, base=10.0, axis=axis)
    if np.ndim(sign):
        sign = manipulation.expand_dims(sign, axis)
    out = manipulation.astype(out * sign, dt)
    return out if dtype is None else manipulation.astype(out, dtype)


def _dt(x):
    return dtype_and_weak(x)


def _block_depth(x) -> int:
    if isinstance(x, list):
        if not x:
            raise ValueError("jnp.block: lists cannot be empty")
        depths = {_block_depth(e) for e in x}
        if len(depths) != 1:
            raise ValueError("jnp.block: list depths are mismatched")
        return 1 + depths.pop()
    if isinstance(x, tuple):
        raise TypeError("jnp.block: use lists, not tuples, to describe the block structure")
    return 0


def _block_ndim(x) -> int:
    if isinstance(x, list):
        return max(_block_ndim(e) for e in x)
    return arr("block", x).ndim


def _block_join(x, depth: int, ndim: int):
    if not isinstance(x, list):
        a = arr("block", x)
        return manipulation.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    parts = [_block_join(e, depth - 1, ndim) for e in x]
    return manipulation.concatenate(parts, axis=-depth)


def block(arrays):
    """Assemble an array from nested lists of blocks (the innermost lists join the last axis).

    Example:
      >>> jnp.block([[jnp.eye(2), jnp.zeros((2, 1))]]).shape
      (2, 3)
    """
    depth = _block_depth(arrays)
    ndim = max(depth, _block_ndim(arrays))
    return _block_join(arrays, depth, ndim)


def vander(x, N: int | None = None, increasing: bool = False):
    """The Vandermonde matrix: columns are powers of the 1-D `x` (decreasing by default)."""
    x = arr("vander", x)
    if x.ndim != 1:
        raise errors.ShapeError(f"jnp.vander: x must be 1-D, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    cols = [ufuncs.power(x, int(p)) for p in powers]
    if not cols:
        return creation.zeros((x.shape[0], 0), x.dtype)
    return manipulation.stack(cols, axis=1)
