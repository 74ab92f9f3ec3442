"""yax.numpy statistics: quantiles (quantile, percentile, median and their NaN-ignoring forms),
NaN-ignoring variance, arg-extrema and running sums, covariance and correlation, histograms.

Quantiles sort along the reduced axis and interpolate between two gathered order statistics,
so they are differentiable (almost everywhere) in the data and in `q`, and batch under vmap.
The NaN-ignoring forms count the non-NaN entries per slice (NaNs sort last) and gather at
traced positions, so they need no data-dependent shapes either.
"""

from __future__ import annotations

import builtins

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.numpy import creation, indexing, manipulation, reductions, sorting, ufuncs
from yax.numpy._arguments import arr, index_dtype
from yax.numpy._promote import promote_dtypes_inexact
from yax.numpy.construction import linspace
from yax.numpy.contractions import matmul
from yax.numpy.reductions import canonical_axes
from yax.numpy.searching import searchsorted

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "nanvar", "nanstd", "nanargmax", "nanargmin", "nancumsum", "nancumprod",
           "nancumulative_sum", "cov", "corrcoef", "histogram", "histogram_bin_edges",
           "histogram2d", "histogramdd"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
            "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
            "normal_unbiased")


def _to_last(a, axis):
    """Move the reduced axes of `a` to one last axis; also the shape for keepdims."""
    axes = canonical_axes("quantile", axis, a.ndim)
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = manipulation.transpose(a, tuple(rest) + axes) if a.ndim else a
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    flat = manipulation.reshape(moved, tuple(a.shape[i] for i in rest) + (n,))
    return flat, keep_shape, tuple(a.shape[i] for i in rest)


def _positions(method, q, count):
    """Fractional 0-based positions of quantile `q` among `count` sorted values."""
    if method in ("linear", "lower", "higher", "nearest", "midpoint"):
        return q * (count - 1)
    if method == "inverted_cdf":  # the smallest x with CDF(x) >= q: a step function of q
        return ufuncs.clip(ufuncs.ceil(q * count) - 1, 0, count - 1)
    # continuous sample-quantile estimators: position = q*n + alpha + q*(1-alpha-beta) - 1
    alpha_beta = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
                  "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8)}
    if method in alpha_beta:
        al, be = alpha_beta[method]
        pos = q * count + al + q * (1 - al - be) - 1
        return ufuncs.clip(pos, 0, count - 1)
    raise AssertionError(method)


def _interpolate(method, lo_v, hi_v, frac, pos, lo):
    if method in ("lower", "inverted_cdf"):
        return lo_v
    if method == "higher":
        return hi_v
    if method == "midpoint":
        return (lo_v + hi_v) * 0.5
    if method == "nearest":
        # round half to even on the position, as NumPy does
        pick_hi = ufuncs.round(pos) > lo
        return ufuncs.where(pick_hi, hi_v, lo_v)
    return lo_v + (hi_v - lo_v) * frac


def _quantile(name, a, q, axis, method, keepdims, ignore_nan):
    if method not in _METHODS:
        raise ValueError(f"jnp.{name}: method {method!r} is not supported; use one of "
                         f"{', '.join(_METHODS)}")
    a, = promote_dtypes_inexact(arr(name, a))
    a = arr(name, a)
    q = manipulation.astype(arr(name, q), a.dtype)  # the data's dtype decides (as in JAX)
    if dtypes.is_complex(a.dtype):
        raise TypeError(f"jnp.{name}: complex inputs are not supported")
    if q.ndim > 1:
        raise errors.ShapeError(f"jnp.{name}: q must be a scalar or 1-D, got shape {q.shape}")
    flat, keep_shape, batch = _to_last(a, axis)
    n = flat.shape[-1]
    if n == 0:
        raise ValueError(f"jnp.{name}: cannot take a quantile of an empty slice")
    if flat.size == 0:  # nothing to reduce into: an empty result of the right shape
        shape = (q.size,) + (keep_shape if keepdims else batch)
        out = creation.zeros(shape, a.dtype)
        return out[0] if q.ndim == 0 else out
    srt = sorting.sort(flat, axis=-1)
    isnan = ufuncs.isnan(flat)
    if ignore_nan:
        count = reductions.sum(ufuncs.logical_not(isnan), axis=-1, keepdims=True,
                               dtype=a.dtype)
    else:
        count = creation.full(batch + (1,), n, a.dtype)
    qv = manipulation.reshape(q, (1,) * len(batch) + (q.size,))
    pos = _positions(method, qv, count)
    lo = ufuncs.floor(pos)
    hi = ufuncs.ceil(pos)
    idx_lo = manipulation.astype(ufuncs.clip(lo, 0, n - 1), np.int32)
    idx_hi = manipulation.astype(ufuncs.clip(hi, 0, n - 1), np.int32)
    idx_lo, idx_hi = (manipulation.broadcast_to(i, batch + (q.size,)) for i in (idx_lo, idx_hi))
    lo_v = indexing.take_along_axis(srt, idx_lo, axis=-1)
    hi_v = indexing.take_along_axis(srt, idx_hi, axis=-1)
    out = _interpolate(method, lo_v, hi_v, pos - lo, pos, lo)
    bad = count < 1 if ignore_nan else reductions.any(isnan, axis=-1, keepdims=True)
    out = ufuncs.where(bad, creation.full((), np.nan, a.dtype), out)
    # (batch..., nq) -> (nq, batch...) then the requested shape
    out = manipulation.moveaxis(out, -1, 0)
    out = manipulation.reshape(out, (q.size,) + (keep_shape if keepdims else batch))
    return out[0] if q.ndim == 0 else out


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, interpolation=None):
    """The `q`-th quantile(s) of `a` over `axis` (q in [0, 1]; NaN if a slice has a NaN).

    The result has q's shape in front of the reduced shape.

    Example:
      >>> jnp.quantile(jnp.array([1., 2., 3., 4.]), 0.5)
      Array(2.5, dtype=float32)
    """
    _check(out, interpolation, "quantile")
    return _quantile("quantile", a, q, axis, method, keepdims, ignore_nan=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, interpolation=None):
    """`quantile` ignoring NaNs (NaN only for an all-NaN slice)."""
    _check(out, interpolation, "nanquantile")
    return _quantile("nanquantile", a, q, axis, method, keepdims, ignore_nan=True)


def _check(out, interpolation, name):
    if out is not None:
        raise ValueError(f"jnp.{name}: the `out` argument is not supported; use the return "
                         f"value")
    if interpolation is not None:
        raise TypeError(f"jnp.{name}: `interpolation` was renamed to `method`")


def _hundredth(name, q):
    q = arr(name, q)
    return ufuncs.true_divide(q, 100.0)


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, interpolation=None):
    """The `q`-th percentile(s) of `a` (q in [0, 100]); see `quantile`."""
    _check(out, interpolation, "percentile")
    a = arr("percentile", a)
    q, = promote_dtypes_inexact(arr("percentile", q))
    return _quantile("percentile", a, _hundredth("percentile", q), axis, method, keepdims,
                     ignore_nan=False)


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, interpolation=None):
    """`percentile` ignoring NaNs."""
    _check(out, interpolation, "nanpercentile")
    return _quantile("nanpercentile", a, _hundredth("nanpercentile", q), axis, method,
                     keepdims, ignore_nan=True)


def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median over `axis` (the mean of the two middle values for even lengths)."""
    return quantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """`median` ignoring NaNs."""
    return nanquantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)


def _not_nan(a):
    if dtypes.is_inexact(a.dtype):
        return ufuncs.logical_not(ufuncs.isnan(a))
    return None


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False, *, where=None,
           correction=None):
    """`var` of the non-NaN elements (NaN where none remain after `ddof`)."""
    a = arr("nanvar", a)
    valid = _not_nan(a)
    if valid is not None:
        where = valid if where is None else ufuncs.logical_and(valid, where)
        a = ufuncs.where(valid, a, creation.zeros((), a.dtype))
    if correction is not None:
        ddof = correction
    out_v = reductions.var(a, axis, dtype, out, ddof, keepdims, where=where)
    count = reductions.sum(creation.ones(a.shape, np.int32) if where is None else where,
                           axis=axis, keepdims=keepdims)
    # NaN (not a negative zero) when no degrees of freedom remain, as NumPy and JAX
    return ufuncs.where(count - ddof <= 0, creation.full((), np.nan, out_v.dtype), out_v)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False, *, where=None,
           correction=None):
    """`std` of the non-NaN elements."""
    return ufuncs.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where,
                              correction=correction))


def _nanarg(name, fn, fill, a, axis, out, keepdims):
    a = arr(name, a)
    if not dtypes.is_inexact(a.dtype):
        return fn(a, axis, out, keepdims)
    nan = ufuncs.isnan(a)
    idx = fn(ufuncs.where(nan, creation.full((), fill, a.dtype), a), axis, out, keepdims)
    all_nan = reductions.all(nan, axis=axis, keepdims=bool(keepdims))
    # JAX's convention: -1 for a slice that is entirely NaN
    return ufuncs.where(all_nan, creation.full((), -1, idx.dtype), idx)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """`argmax` ignoring NaNs (-1 for an all-NaN slice)."""
    return _nanarg("nanargmax", reductions.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """`argmin` ignoring NaNs (-1 for an all-NaN slice)."""
    return _nanarg("nanargmin", reductions.argmin, np.inf, a, axis, out, keepdims)


def _nan_to(a, value):
    a = arr("nancumsum", a)
    if not dtypes.is_inexact(a.dtype):
        return a
    return ufuncs.where(ufuncs.isnan(a), creation.full((), value, a.dtype), a)


def nancumsum(a, axis=None, dtype=None, out=None):
    """`cumsum` treating NaNs as zero."""
    return reductions.cumsum(_nan_to(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """`cumprod` treating NaNs as one."""
    return reductions.cumprod(_nan_to(a, 1), axis, dtype, out)


def nancumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """`cumulative_sum` treating NaNs as zero."""
    return reductions.cumulative_sum(_nan_to(x, 0), axis=axis, dtype=dtype,
                                     include_initial=include_initial)


def _cov_weights(n, fweights, aweights, dt):
    w = None
    if fweights is not None:
        f = arr("cov", fweights)
        if f.ndim != 1 or f.shape[0] != n:
            raise errors.ShapeError(f"jnp.cov: fweights must be 1-D of length {n}, got shape "
                                    f"{f.shape}")
        w = manipulation.astype(f, dt)
    if aweights is not None:
        aw = arr("cov", aweights)
        if aw.ndim != 1 or aw.shape[0] != n:
            raise errors.ShapeError(f"jnp.cov: aweights must be 1-D of length {n}, got shape "
                                    f"{aw.shape}")
        aw = manipulation.astype(aw, dt)
        w = aw if w is None else w * aw
    return w


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None, dtype=None):
    """The covariance matrix of the variables in `m` (rows, or columns if rowvar=False).

    Optional frequency weights `fweights` and observation weights `aweights` as in NumPy."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("jnp.cov: ddof must be an integer")
    x = arr("cov", m)
    if x.ndim > 2:
        raise errors.ShapeError(f"jnp.cov: m must have rank <= 2, got shape {x.shape}")
    x = manipulation.atleast_2d(x)
    if not rowvar and x.shape[0] != 1:
        x = manipulation.transpose(x)
    if y is not None:
        yy = manipulation.atleast_2d(arr("cov", y))
        if not rowvar and yy.shape[0] != 1:
            yy = manipulation.transpose(yy)
        x = manipulation.concatenate([x, yy], axis=0)
    x, = promote_dtypes_inexact(x)
    if dtype is not None:
        x = manipulation.astype(x, dtype)
    x = arr("cov", x)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = _cov_weights(n, fweights, aweights, ufuncs.real(x).dtype)
    if w is None:
        avg = reductions.mean(x, axis=1)
        w_sum = float(n)
        fact = float(n - ddof)
    else:
        avg, w_sum = reductions.average(x, axis=1, weights=w, returned=True)
        w_sum = w_sum[0]
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * reductions.sum(w * manipulation.astype(
                arr("cov", aweights), w.dtype)) / w_sum
    xc = x - avg[:, None]
    xw = xc if w is None else xc * w
    c = _matmul(xw, ufuncs.conjugate(manipulation.transpose(xc)))
    c = c / fact
    return manipulation.squeeze(c) if c.shape == (1, 1) else c


def _matmul(a, b):
    return matmul(a, b, precision="highest")


def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients (the covariance normalised by the standard
    deviations; real parts clipped to [-1, 1])."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = ufuncs.real(manipulation.reshape(c, (-1,))[::c.shape[0] + 1])
    s = ufuncs.sqrt(d)
    c = c / s[:, None]
    c = c / s[None, :]
    if dtypes.is_complex(c.dtype):
        return ufuncs.clip(ufuncs.real(c), -1, 1) + 1j * ufuncs.clip(ufuncs.imag(c), -1, 1)
    return ufuncs.clip(c, -1, 1)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Bin edges for `histogram`: `bins` equal-width bins over `range` (default: min..max),
    or the given edge array."""
    a = arr("histogram_bin_edges", a)
    if not isinstance(bins, int) and np.ndim(bins) == 1:
        edges, = promote_dtypes_inexact(arr("histogram_bin_edges", bins))
        return edges
    if isinstance(bins, str):
        raise NotImplementedError("jnp.histogram_bin_edges: string bin rules are not supported")
    nbins = int(bins)
    if nbins < 1:
        raise ValueError("jnp.histogram: bins must be positive")
    a, = promote_dtypes_inexact(manipulation.ravel(a))
    dt = a.dtype
    if range is None:
        lo, hi = reductions.min(a), reductions.max(a)
    else:
        lo, hi = (manipulation.astype(arr("histogram", r), dt) for r in range)
    lo, hi = manipulation.astype(lo, dt), manipulation.astype(hi, dt)
    same = lo == hi
    lo = ufuncs.where(same, lo - 0.5, lo)
    hi = ufuncs.where(same, hi + 0.5, hi)
    return linspace(lo, hi, nbins + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or summed `weights`) of `a` in each bin; returns (hist, bin_edges).

    The last bin includes its right edge; values outside the range are not counted."""
    a = arr("histogram", a)
    edges = histogram_bin_edges(a, bins, range, weights)
    flat = manipulation.ravel(a)
    nb = edges.shape[0] - 1
    idx = searchsorted(edges, flat, side="right")
    idx = ufuncs.where(flat == edges[-1], nb, idx)
    if weights is None:
        w = creation.ones(flat.shape, edges.dtype)
    else:  # weights and data promote together, so counts are never integers (as in JAX)
        _, w = promote_dtypes_inexact(flat, manipulation.ravel(arr("histogram", weights)))
        w = arr("histogram", w)
    counts = creation.zeros((nb + 2,), w.dtype).at[idx].add(w)[1:-1]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = manipulation.astype(counts, edges.dtype)
        counts = counts / (reductions.sum(counts) * widths)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """A D-dimensional histogram of an (N, D) sample; returns (hist, list of edges)."""
    s = arr("histogramdd", sample)
    if s.ndim != 2:
        raise errors.ShapeError(f"jnp.histogramdd: sample must be (N, D), got {s.shape}")
    d = s.shape[1]
    bins_list = bins if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = range if range is not None else [None] * d
    edges, flat_idx, sizes = [], None, []
    for k in builtins.range(d):
        col = s[:, k]
        e = histogram_bin_edges(col, bins_list[k], ranges[k])
        nb = e.shape[0] - 1
        i = searchsorted(e, col, side="right")
        i = ufuncs.where(col == e[-1], nb, i)
        edges.append(e)
        sizes.append(nb + 2)
        flat_idx = i if flat_idx is None else flat_idx * (nb + 2) + i
    # JAX counts in the default int type here (histogram counts in floats)
    w = creation.ones((s.shape[0],), index_dtype()) if weights is None else \
        arr("histogramdd", weights)
    if density:
        w = manipulation.astype(w, edges[0].dtype)
    counts = creation.zeros((int(np.prod(sizes)),), w.dtype).at[flat_idx].add(w)
    counts = manipulation.reshape(counts, tuple(sizes))
    counts = counts[tuple(slice(1, -1) for _ in builtins.range(d))]
    if density:
        vol = creation.ones((), counts.dtype)
        for k, e in enumerate(edges):
            shape = [1] * d
            shape[k] = -1
            vol = vol * manipulation.reshape(e[1:] - e[:-1], tuple(shape))
        counts = counts / (reductions.sum(counts) * vol)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """A 2-D histogram of points (x, y); returns (hist, x_edges, y_edges)."""
    sample = manipulation.stack([arr("histogram2d", x), arr("histogram2d", y)], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]

