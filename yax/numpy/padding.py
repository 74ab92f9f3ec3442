"""yax.numpy `pad` with NumPy's modes: constant, edge, reflect, symmetric, wrap, linear_ramp,
maximum, minimum, mean, median and empty.

Pad widths are static. Axes are padded one after another on the growing array, as NumPy does,
so corners come out the same. The index modes (edge, reflect, symmetric, wrap) become one gather
per axis whose indices NumPy computes at trace time by padding an `arange`; reflect_type='odd'
is linear in the input, so it becomes a small integer matrix applied along the axis.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.numpy import creation, indexing, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr, is_traced
from yax.numpy.contractions import matmul
from yax.numpy.statistics import median

__all__ = ["pad"]

_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")
_STAT_MODES = ("maximum", "minimum", "mean", "median")


def _pairs(name, value, ndim: int, what: str, allow_traced=False):
    """NumPy's broadcasting of pad widths / per-axis values to ((before, after),) * ndim."""
    if allow_traced and is_traced(value):
        v = value
        if v.ndim == 0:
            return [(v, v)] * ndim
        v = manipulation.broadcast_to(v, (ndim, 2))
        return [(v[i, 0], v[i, 1]) for i in range(ndim)]
    try:
        v = np.broadcast_to(np.asarray(value, dtype=object), (ndim, 2))
    except ValueError:
        raise errors.ShapeError(f"jnp.{name}: {what} {value!r} cannot be broadcast to "
                                f"({ndim}, 2)") from None
    return [(v[i, 0], v[i, 1]) for i in range(ndim)]


def _widths(pad_width, ndim: int):
    if is_traced(pad_width):
        raise errors.ConcretizationError("jnp.pad: pad_width must be static (Python ints), but "
                                         "it is traced; the output shape depends on it")
    pairs = _pairs("pad", np.asarray(pad_width).tolist() if hasattr(pad_width, "shape")
                   else pad_width, ndim, "pad_width")
    out = []
    for b, a in pairs:
        b, a = int(b), int(a)
        if b < 0 or a < 0:
            raise ValueError(f"jnp.pad: pad widths must be non-negative, got {pad_width}")
        out.append((b, a))
    return out


def _slab(x, axis: int, value, width: int):
    shape = list(x.shape)
    shape[axis] = width
    v = manipulation.astype(arr("pad", value), x.dtype)
    return manipulation.broadcast_to(v, tuple(shape))


def _constant(x, axis, before, after, values):
    cb, ca = values
    parts = []
    if before:
        parts.append(_slab(x, axis, cb, before))
    parts.append(x)
    if after:
        parts.append(_slab(x, axis, ca, after))
    return manipulation.concatenate(parts, axis=axis) if len(parts) > 1 else x


def _index_mode(x, axis, before, after, mode, reflect_type):
    n = x.shape[axis]
    if n == 0:
        raise ValueError(f"jnp.pad: can't extend an empty axis {axis} with mode {mode!r}")
    if mode in ("reflect", "symmetric") and reflect_type == "odd":
        eye = np.eye(n, dtype=np.int64)
        mat = np.pad(eye, ((before, after), (0, 0)), mode=mode, reflect_type="odd")
        m = creation.asarray(mat.astype(x.dtype) if not dtypes.is_bool(x.dtype) else mat)
        moved = manipulation.moveaxis(x, axis, -1)
        out = matmul(moved, manipulation.transpose(m), precision="highest")
        return manipulation.moveaxis(manipulation.astype(out, x.dtype), -1, axis)
    idx = np.pad(np.arange(n), (before, after), mode=mode)
    return indexing.take(x, idx.astype(np.int32), axis=axis)


def _ramp_part(x, axis, lo: int, width: int, end, comp, flip: bool):
    """`width` values going from `end` towards the edge slice at `lo` (edge excluded)."""
    edge = manipulation.astype(lax.slice_in_dim(x, lo, lo + 1, axis=axis), comp)
    end = manipulation.astype(arr("pad", end), comp)
    shape = [1] * x.ndim
    shape[axis] = width
    t = np.arange(width, dtype=comp) / np.asarray(width, comp)  # in comp precision, like JAX
    t = creation.asarray(t[::-1] if flip else t, comp)
    t = manipulation.reshape(t, tuple(shape))
    return end * (1 - t) + edge * t


def _ramp(x, axis, before, after, end_values):
    n = x.shape[axis]
    comp = x.dtype if dtypes.is_inexact(x.dtype) else dtypes.canonicalize(
        dtypes.default_float())
    parts = []
    if before:
        parts.append(_ramp_part(x, axis, 0, before, end_values[0], comp, flip=False))
    parts.append(manipulation.astype(x, comp))
    if after:
        parts.append(_ramp_part(x, axis, n - 1, after, end_values[1], comp, flip=True))
    out = manipulation.concatenate(parts, axis=axis)
    if dtypes.is_int(x.dtype):
        out = ufuncs.floor(out)  # integer ramps round down, as JAX's linspace does
    return manipulation.astype(out, x.dtype)


def _stat(x, mode, axis, keep):
    if mode == "maximum":
        return reductions.max(x, axis=axis, keepdims=True)
    if mode == "minimum":
        return reductions.min(x, axis=axis, keepdims=True)
    if mode == "mean":
        v = reductions.mean(x, axis=axis, keepdims=True)
    else:
        v = median(x, axis=axis, keepdims=True)
    if not dtypes.is_inexact(x.dtype):
        v = ufuncs.round(v)
    return manipulation.astype(v, x.dtype)


def _stat_mode(x, axis, before, after, mode, stat_length):
    n = x.shape[axis]
    if n == 0:
        raise ValueError(f"jnp.pad: can't compute the {mode} of an empty axis {axis}")
    lb, la = stat_length
    lb = n if lb is None else max(1, min(int(lb), n))
    la = n if la is None else max(1, min(int(la), n))
    parts = []
    if before:
        v = _stat(lax.slice_in_dim(x, 0, lb, axis=axis), mode, axis, True)
        parts.append(_slab(x, axis, v, before))
    parts.append(x)
    if after:
        v = _stat(lax.slice_in_dim(x, n - la, n, axis=axis), mode, axis, True)
        parts.append(_slab(x, axis, v, after))
    return manipulation.concatenate(parts, axis=axis) if len(parts) > 1 else x


def pad(array, pad_width, mode: str = "constant", **kwargs):
    """Pad `array` by `pad_width` ((before, after) per axis; an int or a pair broadcasts).

    Modes and their options: 'constant' (constant_values), 'edge', 'reflect'/'symmetric'
    (reflect_type 'even' or 'odd'), 'wrap', 'linear_ramp' (end_values), 'maximum', 'minimum',
    'mean', 'median' (stat_length), 'empty'.

    Example:
      >>> jnp.pad(jnp.array([1, 2, 3]), (1, 2), mode="edge")
      Array([1, 1, 2, 3, 3, 3], dtype=int32)
    """
    x = arr("pad", array)
    if callable(mode):
        raise NotImplementedError("jnp.pad: a callable mode is not supported")
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               "linear_ramp": {"end_values"}, **{m: {"stat_length"} for m in _STAT_MODES}}
    if mode not in allowed:
        raise ValueError(f"jnp.pad: unknown mode {mode!r}; use one of {sorted(allowed)}")
    extra = set(kwargs) - allowed[mode]
    if extra:
        raise ValueError(f"jnp.pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(extra)}")
    widths = _widths(pad_width, x.ndim)
    if mode in ("constant", "empty"):
        values = _pairs("pad", kwargs.get("constant_values", 0), x.ndim, "constant_values",
                        allow_traced=True)
    elif mode == "linear_ramp":
        values = _pairs("pad", kwargs.get("end_values", 0), x.ndim, "end_values",
                        allow_traced=True)
    elif mode in _STAT_MODES:
        values = _pairs("pad", kwargs.get("stat_length", None), x.ndim, "stat_length")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        if mode in ("constant", "empty"):
            x = _constant(x, axis, before, after, values[axis])
        elif mode in _INDEX_MODES:
            x = _index_mode(x, axis, before, after, mode, reflect_type)
        elif mode == "linear_ramp":
            x = _ramp(x, axis, before, after, values[axis])
        else:
            x = _stat_mode(x, axis, before, after, mode, values[axis])
    return x
