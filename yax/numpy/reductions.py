"""yax.numpy reductions: sum, prod, max, min, mean, var, std, all, any, argmax, argmin,
cumulative sums and products, and NaN-ignoring variants, with NumPy's `axis`, `keepdims`,
`dtype`, `where=` and `initial=` arguments.

Results are never weakly typed (as in JAX). Sums and products of bools and small integers
accumulate in the default integer width of their signedness; means and variances of integers
are floats; float16/bfloat16 means accumulate in float32.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.trace import Tracer, bind, is_eager
from yax.interpreters.eager import one_operand_op
from yax.numpy import manipulation, ufuncs
from yax.numpy._promote import (
    INEXACT_DTYPES,
    broadcast_shapes,
    check_arraylike,
    promote_dtypes_inexact,
    shape_of,
    to_operand,
)
from yax.numpy.creation import asarray, full, full_like
from yax.numpy.manipulation import broadcast_to, expand_dims, ravel, reshape
from yax.primitives.dim_as_value import dimension_as_value
from yax.runtime.array import Array
from yax.transforms.jit import jit

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "all", "any",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
           "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "count_nonzero", "ptp", "average"]


def _operand(name, a):
    if type(a) is Array or isinstance(a, Tracer):  # already an operand: nothing to convert
        return a
    check_arraylike(name, a)
    return asarray(to_operand(a))


def canonical_axes(name: str, axis, ndim: int) -> tuple:
    """`axis` (None, an int or a tuple; negatives count from the end) as sorted axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for ax in axes:
        ax = int(ax.__index__())
        if not -ndim <= ax < ndim:
            raise errors.ShapeError(f"{name}: axis {ax} is out of bounds for an array of "
                                    f"rank {ndim}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise errors.ShapeError(f"{name}: repeated axis in {axes}")
    return tuple(sorted(out))


def _keepdims(x, shape, axes):
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return reshape(x, kept)


def _strong(x, dt):
    """Convert to `dt` and drop the weak type (reductions never return weak values)."""
    return lax.convert_element_type(x, dt)


def _sum_dtype(dt, dtype, promote_integers: bool = True):
    if dtype is not None:
        return dtypes.canonicalize(dtypes.dtype(dtype), warn=True)
    if promote_integers and dtypes.is_bool(dt):
        return dtypes.canonicalize(dtypes.default_int())
    if promote_integers and dtypes.is_int(dt):
        wide = dtypes.default_uint() if dtypes.is_unsigned_int(dt) else dtypes.default_int()
        wide = dtypes.canonicalize(wide)
        return wide if np.dtype(dt).itemsize < wide.itemsize else np.dtype(dt)
    return np.dtype(dt)


def _check_out(name, out):
    if out is not None:
        raise ValueError(f"{name}: the `out` argument is not supported (arrays are immutable); "
                         f"use the return value")


def _apply_where(name, a, where, fill):
    """Replace masked-out elements by the reduction's identity `fill`."""
    if where is None:
        return a
    shape = broadcast_shapes(shape_of(a), shape_of(where), name=name)
    a = broadcast_to(a, shape)
    return ufuncs.where(where, a, lax.convert_element_type(fill, a.dtype))


def _reduce(name, lax_fn, a, axis, keepdims, dt, where, fill):
    a = _operand(name, a)
    a = _strong(a, dt)
    a = _apply_where(name, a, where, fill)
    axes = canonical_axes(name, axis, a.ndim)
    out = lax_fn(a, axes)
    if out is a:  # no axes: lax returns the operand itself
        out = lax.convert_element_type(a, dt)
    return _keepdims(out, a.shape, axes) if keepdims else out


_ALL_AXES = tuple(tuple(range(n)) for n in range(8))


def _binds_full_reduction(aval) -> bool:
    """Whether `sum(x)` of this aval is the reduction over all axes and nothing else: a strongly
    typed inexact operand of rank >= 1 (`_reduce` would convert nothing and check nothing)."""
    return not aval.weak_type and 0 < len(aval.shape) < len(_ALL_AXES) and (
        aval.dtype in INEXACT_DTYPES)


def _sum_every_axis(a):
    """`sum(a)` with every option at its default (fast path, issue 11: an Array or tracer the
    reduction takes as it is binds it directly)."""
    if (type(a) is Array or isinstance(a, Tracer)) and _binds_full_reduction(a.aval):
        return bind(lax.reduce_sum.primitive, a, axes=_ALL_AXES[len(a.aval.shape)])
    return _sum(a, None, None, False, None, True)


# and an eager repeat of it runs the executable of its last run right away
_sum_of_all = one_operand_op(lax.reduce_sum.primitive, _sum_every_axis, _binds_full_reduction,
                             lambda aval: {"axes": _ALL_AXES[len(aval.shape)]})


# `sum(a, axis=k)` for an int k, the other options at their defaults: one op per k, so that an
# eager repeat runs the executable of its last run right away too (a bounded few: an axis is
# a small int)
_SUM_ALONG: dict = {}
_MAX_AXES_KEPT = 32


def _sum_along(axis: int):
    def binds_one_axis(aval) -> bool:  # `_sum` binds the reduction over it and does nothing else
        return _binds_full_reduction(aval) and -len(aval.shape) <= axis < len(aval.shape)

    op = one_operand_op(lax.reduce_sum.primitive,
                        lambda a: _sum(a, axis, None, False, None, True), binds_one_axis,
                        lambda aval: {"axes": (axis % len(aval.shape),)})
    return _SUM_ALONG.setdefault(axis, op)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers: bool = True):
    """Sum over `axis` (all axes by default).

    Bools and small integers accumulate in the default integer width (int32, or int64 with
    x64) of their signedness unless `promote_integers=False` or `dtype` is given.

    Example:
      >>> jnp.sum(jnp.ones((2, 3)), axis=0)
      Array([2., 2., 2.], dtype=float32)
    """
    if (dtype is None and out is None and not keepdims and initial is None and where is None
            and promote_integers is True):
        if axis is None:
            return _sum_of_all(a)
        if type(axis) is int:
            along = _SUM_ALONG.get(axis)
            if along is not None or len(_SUM_ALONG) < _MAX_AXES_KEPT:
                return (along or _sum_along(axis))(a)
    _check_out("sum", out)
    return _sum(a, axis, dtype, keepdims, initial, promote_integers, where)


def _sum(a, axis, dtype, keepdims, initial, promote_integers, where=None):
    dt = _sum_dtype(_operand("sum", a).dtype, dtype, promote_integers)
    result = _reduce("sum", lax.reduce_sum, a, axis, keepdims, dt, where, 0)
    return result if initial is None else ufuncs.add(result, _strong(initial, dt))


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers: bool = True):
    """Product over `axis` (all axes by default); integer promotion as in `sum`."""
    _check_out("prod", out)
    dt = _sum_dtype(_operand("prod", a).dtype, dtype, promote_integers)
    result = _reduce("prod", lax.reduce_prod, a, axis, keepdims, dt, where, 1)
    return result if initial is None else ufuncs.multiply(result, _strong(initial, dt))


def _extremum(name, lax_fn, combine, a, axis, out, keepdims, initial, where):
    _check_out(name, out)
    a = _operand(name, a)
    axes = canonical_axes(name, axis, a.ndim)
    empty = builtins.any(a.shape[i] == 0 for i in axes)
    if initial is None and (empty or where is not None):
        why = "a `where` mask" if where is not None and not empty else "a zero-size array"
        raise ValueError(f"{name}: reduction of {why} has no identity; pass `initial=`")
    if empty:
        shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape)) if keepdims else \
            tuple(d for i, d in enumerate(a.shape) if i not in axes)
        return full(shape, initial, a.dtype)
    fill = initial if where is not None else None
    result = _reduce(name, lax_fn, a, axis, keepdims, a.dtype, where, fill)
    return result if initial is None else combine(result, _strong(initial, a.dtype))


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over `axis` (NaN propagates). Needs `initial` for empty or masked reductions."""
    if axis is None and out is None and not keepdims and initial is None and where is None:
        return _max_of_all(a)
    return _extremum("max", lax.reduce_max, ufuncs.maximum, a, axis, out, keepdims, initial,
                     where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over `axis` (NaN propagates). Needs `initial` for empty or masked reductions."""
    if axis is None and out is None and not keepdims and initial is None and where is None:
        return _min_of_all(a)
    return _extremum("min", lax.reduce_min, ufuncs.minimum, a, axis, out, keepdims, initial,
                     where)


def _binds_extremum(aval) -> bool:
    """Whether `max(x)`/`min(x)` of this aval is the reduction over all axes and nothing else:
    a strongly typed real operand of rank >= 1 with no empty axis (`_extremum` converts and
    checks nothing; complex operands are ordered lexicographically instead)."""
    return not aval.weak_type and 0 < len(aval.shape) < len(_ALL_AXES) and (
        0 not in aval.shape) and not dtypes.is_complex(aval.dtype)


def _extremum_of_all(name, lax_fn, combine):
    """`max(x)`/`min(x)` with every option at its default, as an op whose eager repeat runs its
    last executable right away (eager.one_operand_op)."""
    return one_operand_op(
        lax_fn.primitive,
        lambda a: _extremum(name, lax_fn, combine, a, None, None, False, None, None),
        _binds_extremum, lambda aval: {"axes": _ALL_AXES[len(aval.shape)]})


_max_of_all = _extremum_of_all("max", lax.reduce_max, ufuncs.maximum)
_min_of_all = _extremum_of_all("min", lax.reduce_min, ufuncs.minimum)


amax, amin = max, min


def _to_bool(a):
    a = _operand("all/any", a)
    if dtypes.is_bool(a.dtype):
        return a
    return ufuncs.not_equal(a, 0)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """True if every element along `axis` is nonzero."""
    _check_out("all", out)
    return _reduce("all", lax.reduce_and, _to_bool(a), axis, keepdims, dtypes.bool_, where, True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """True if some element along `axis` is nonzero."""
    _check_out("any", out)
    return _reduce("any", lax.reduce_or, _to_bool(a), axis, keepdims, dtypes.bool_, where, False)


def _mean_dtypes(dt, dtype):
    """(result dtype, accumulation dtype) of mean/var: inexact, f16/bf16 accumulate in f32."""
    if dtype is not None:
        out = dtypes.canonicalize(dtypes.dtype(dtype), warn=True)
    elif dtypes.is_inexact(dt):
        out = np.dtype(dt)
    else:
        out = dtypes.canonicalize(dtypes.default_float())
    acc = dtypes.float32 if out in (dtypes.float16, dtypes.bfloat16) else out
    if not dtypes.is_inexact(acc):
        acc = dtypes.canonicalize(dtypes.default_float())
    return out, acc


def _count(a, axes, where, keepdims):
    """The number of elements averaged over (a Python int, or an array under `where`)."""
    if where is None:
        # math.prod, then dimension_as_value: under yax.export a size may be symbolic (`b`), and
        # the count is then computed from the argument shapes at run time
        return dimension_as_value(math.prod(a.shape[i] for i in axes))
    mask = broadcast_to(where, broadcast_shapes(shape_of(a), shape_of(where), name="mean"))
    return sum(mask, axis=axes, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over `axis` (integers give the default float type).

    Example:
      >>> jnp.mean(jnp.arange(4))
      Array(1.5, dtype=float32)
    """
    if dtype is None and out is None and not keepdims and where is None:
        if axis is None and type(a) is Array and is_eager():
            return _mean_program(a)
        fast = _fast_full_mean(a, axis)
        if fast is not None:
            return fast
    _check_out("mean", out)
    a = _operand("mean", a)
    out_dt, acc_dt = _mean_dtypes(a.dtype, dtype)
    axes = canonical_axes("mean", axis, a.ndim)
    total = sum(a, axis=axes, dtype=acc_dt, keepdims=keepdims, where=where)
    count = _count(a, axes, where, keepdims)
    if isinstance(count, int):
        count = float(count)
    return _strong(ufuncs.divide(total, _strong(count, acc_dt)), out_dt)


_mean = mean  # `var`'s parameter `mean` shadows the function

_MEAN_FAST_DTYPES = INEXACT_DTYPES - {dtypes.float16, dtypes.bfloat16}  # these accumulate in f32


def _fast_full_mean(a, axis):
    """`mean(x)` over all axes of a strongly typed Array/tracer of static shape whose dtype is
    its own accumulator: the reduce_sum and the division by a constant that the general path
    binds, without its conversions (each a no-op here) and checks (the last op of most losses,
    so part of every eager grad call). None for everything else."""
    if axis is not None or not (type(a) is Array or isinstance(a, Tracer)):
        return None
    aval = a.aval
    shape = aval.shape
    if (aval.weak_type or aval.dtype not in _MEAN_FAST_DTYPES or not 0 < len(shape) < len(
            _ALL_AXES) or not builtins.all(type(d) is int for d in shape)):
        return None
    total = bind(lax.reduce_sum.primitive, a, axes=_ALL_AXES[len(shape)])
    key = (math.prod(shape), aval.dtype)
    count = _mean_counts.get(key)
    if count is None:  # the constant the general path divides by (a strongly typed literal)
        count = lax.convert_element_type(float(key[0]), aval.dtype)
        if len(_mean_counts) >= 1024:
            _mean_counts.clear()
        _mean_counts[key] = count
    return bind(lax.div.primitive, total, count)


_mean_counts: dict = {}


def _mean_of_all(a):
    return mean(a)


# `mean(x)` of a concrete Array: one compiled program (the sum and the division), called
# through jit's C++ path, as jax's jitted `jnp.mean` is one call, not an executable per op
_mean_program = jit(_mean_of_all)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Variance over `axis`: mean of |x - mean(x)|**2, divided by N - ddof instead of N.

    Complex inputs give a real variance. `correction` is the array-API name of `ddof`.
    `mean` (as in JAX): the mean already computed, with the keepdims=True shape of the result
    (so it is not computed again).
    """
    _check_out("var", out)
    if correction is not None:
        ddof = correction
    a = _operand("var", a)
    out_dt, acc_dt = _mean_dtypes(a.dtype, dtype)
    axes = canonical_axes("var", axis, a.ndim)
    centered = ufuncs.subtract(_strong(a, acc_dt), _given_mean(mean, a, acc_dt) if mean is not None
                               else _mean(a, axis=axes, dtype=acc_dt, keepdims=True,
                                          where=where))
    if dtypes.is_complex(acc_dt):
        sq = ufuncs.real(ufuncs.multiply(centered, ufuncs.conjugate(centered)))
        out_dt = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(
            out_dt, out_dt)
    else:
        sq = ufuncs.multiply(centered, centered)
    total = sum(sq, axis=axes, keepdims=keepdims, where=where)
    count = _count(a, axes, where, keepdims)
    denom = float(count - ddof) if isinstance(count, int) else ufuncs.subtract(count, ddof)
    return _strong(ufuncs.divide(total, _strong(denom, total.dtype)), out_dt)


def _given_mean(mean, a, acc_dt):
    mean = _strong(mean, acc_dt)
    if np.ndim(mean) not in (0, a.ndim):  # as in jax: a scalar, or broadcast at the input's rank
        raise TypeError(f"var: mean= must be a scalar or have the rank of the input ({a.ndim}: "
                        f"the keepdims=True shape of the result), got shape {np.shape(mean)}")
    return mean


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Standard deviation: sqrt of `var` (same arguments)."""
    return ufuncs.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                           correction=correction))


def _arg(name, lax_fn, a, axis, out, keepdims):
    _check_out(name, out)
    a = _operand(name, a)
    if axis is None:
        flat = ravel(a)
        if flat.shape[0] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        result = lax_fn(flat, 0, dtypes.default_int())
        return _keepdims(result, (1,) * a.ndim, set(range(a.ndim))) if keepdims else result
    (ax,) = canonical_axes(name, axis, a.ndim)
    if a.shape[ax] == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
    result = lax_fn(a, ax, dtypes.default_int())
    return _keepdims(result, a.shape, (ax,)) if keepdims else result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the first maximum along `axis` (of the flattened array by default)."""
    return _arg("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the first minimum along `axis` (of the flattened array by default)."""
    return _arg("argmin", lax.argmin, a, axis, out, keepdims)


def _cumulative(name, lax_fn, a, axis, dtype, out, reverse=False):
    _check_out(name, out)
    a = _operand(name, a)
    if axis is None:
        a, axis = ravel(a), 0
    (ax,) = canonical_axes(name, axis, a.ndim)
    if dtype is not None:
        dt = dtypes.canonicalize(dtypes.dtype(dtype), warn=True)
    elif dtypes.is_bool(a.dtype):
        dt = dtypes.canonicalize(dtypes.default_int())
    else:
        dt = a.dtype
    return lax_fn(_strong(a, dt), ax, reverse=reverse)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along `axis` (of the flattened array by default); bools count as ints."""
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along `axis` (of the flattened array by default)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out)


def _cumulative_include_initial(name, fn, x, axis, dtype, include_initial, identity):
    x = _operand(name, x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for arrays of rank > 1")
        axis = 0
    result = fn(x, axis=axis, dtype=dtype)
    if not include_initial:
        return result
    (ax,) = canonical_axes(name, axis, result.ndim)
    shape = tuple(1 if i == ax else d for i, d in enumerate(result.shape))
    return manipulation.concatenate([full(shape, identity, result.dtype), result], axis=ax)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """The array API's running sum (`axis` required for rank > 1)."""
    return _cumulative_include_initial("cumulative_sum", cumsum, x, axis, dtype,
                                       include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """The array API's running product (`axis` required for rank > 1)."""
    return _cumulative_include_initial("cumulative_prod", cumprod, x, axis, dtype,
                                       include_initial, 1)


def _nan_to(a, value):
    a = _operand("nan-reduction", a)
    if not dtypes.is_inexact(a.dtype):
        return a
    return ufuncs.where(ufuncs.isnan(a), lax.convert_element_type(value, a.dtype), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`sum` treating NaNs as zero."""
    return sum(_nan_to(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`prod` treating NaNs as one."""
    return prod(_nan_to(a, 1), axis, dtype, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`max` ignoring NaNs (NaN only where every element is NaN)."""
    a = _operand("nanmax", a)
    result = max(_nan_to(a, -np.inf), axis, out, keepdims, initial, where)
    if not dtypes.is_inexact(a.dtype):
        return result
    all_nan = all(ufuncs.isnan(a), axis, keepdims=keepdims)
    return ufuncs.where(all_nan, lax.convert_element_type(np.nan, a.dtype), result)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`min` ignoring NaNs (NaN only where every element is NaN)."""
    a = _operand("nanmin", a)
    result = min(_nan_to(a, np.inf), axis, out, keepdims, initial, where)
    if not dtypes.is_inexact(a.dtype):
        return result
    all_nan = all(ufuncs.isnan(a), axis, keepdims=keepdims)
    return ufuncs.where(all_nan, lax.convert_element_type(np.nan, a.dtype), result)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """`mean` of the non-NaN elements."""
    _check_out("nanmean", out)
    a = _operand("nanmean", a)
    if not dtypes.is_inexact(a.dtype):
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    valid = ufuncs.logical_not(ufuncs.isnan(a))
    if where is not None:
        valid = ufuncs.logical_and(valid, where)
    return mean(a, axis, dtype, keepdims=keepdims, where=valid)


def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements along `axis` (as the default int type)."""
    return sum(_to_bool(a), axis=axis, dtype=dtypes.default_int(), keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: max - min along `axis`."""
    return ufuncs.subtract(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """Weighted mean along `axis` (plain `mean` without weights); `returned` adds the sum of
    the weights."""
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        a = _operand("average", a)
        axes = canonical_axes("average", axis, a.ndim)
        count = float(np.prod([a.shape[i] for i in axes], dtype=np.int64))
        if not returned:
            return avg
        return avg, full_like(avg, count)
    a = _operand("average", a)
    w = _operand("average", weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise errors.ShapeError(f"average: weights of shape {w.shape} need the shape of "
                                    f"`a` {a.shape}, or be 1-D along a given axis")
        (ax,) = canonical_axes("average", axis, a.ndim)
        w = expand_dims(w, tuple(i for i in range(a.ndim) if i != ax))
    a, w = promote_dtypes_inexact(a, w)
    wsum = sum(broadcast_to(w, a.shape), axis, keepdims=keepdims)
    avg = ufuncs.divide(sum(ufuncs.multiply(a, w), axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg
