"""yax.numpy rearranging functions: tile, repeat, roll, rot90, append, insert, delete, resize,
select, piecewise, ravel_multi_index and unravel_index.

Output shapes are static: repeat counts, insertion and deletion positions must be Python values
(or concrete arrays) unless a static length is given (`repeat(..., total_repeat_length=)`,
`delete(..., assume_unique_indices=True)`), in which case the values may be traced.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr, canon_axis, concrete, index_dtype, is_traced, need_size
from yax.numpy._promote import promote_dtypes
from yax.numpy.indexing import take
from yax.numpy.setops import nonzero

__all__ = ["tile", "repeat", "roll", "rot90", "append", "insert", "delete", "resize", "select",
           "piecewise", "ravel_multi_index", "unravel_index", "rollaxis", "extract", "compress",
           "place", "put", "choose", "put_along_axis", "hsplit", "vsplit", "dsplit"]


def tile(A, reps):
    """`A` repeated `reps` times along each axis (reps may be longer than A's rank)."""
    a = arr("tile", A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    ndim = max(len(reps), a.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    a = manipulation.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    # broadcast to (r0, s0, r1, s1, ...) and merge each pair
    inter = tuple(d for pair in zip(reps, a.shape, strict=True) for d in pair)
    b = lax.broadcast_in_dim(a, inter, tuple(range(1, 2 * ndim, 2)))
    return lax.reshape(b, tuple(r * s for r, s in zip(reps, a.shape, strict=True)))


def _repeat_static(a, counts: np.ndarray, axis: int):
    counts = np.broadcast_to(counts.ravel(), (a.shape[axis],))
    if np.any(counts < 0):
        raise ValueError("jnp.repeat: repeats may not be negative")
    idx = np.repeat(np.arange(a.shape[axis]), counts)
    return take(a, idx.astype(np.int32), axis=axis)


def repeat(a, repeats, axis: int | None = None, *, total_repeat_length: int | None = None):
    """Repeat each element of `a` along `axis` (flattened if None) `repeats` times.

    `repeats` may be traced only with a static `total_repeat_length` (the output length: longer
    outputs repeat the last element, shorter ones are truncated).
    """
    a = arr("repeat", a)
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = canon_axis("repeat", axis, a.ndim)
    if total_repeat_length is None:
        if is_traced(repeats):
            raise errors.ConcretizationError(
                f"jnp.repeat: `repeats` is traced ({repeats.aval.str_short()}), so the output "
                f"length is unknown under jit/vmap/grad. Pass a static total_repeat_length=..., "
                f"or make repeats a Python int / concrete array.")
        counts = np.asarray(repeats)
        if a.ndim == 0:
            return creation.full((int(counts.sum()),), a)
        if counts.ndim == 0:
            r = int(counts)
            shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
            b = lax.broadcast_in_dim(a, shape, tuple(i for i in range(a.ndim + 1)
                                                     if i != axis + 1))
            out = list(a.shape)
            out[axis] *= r
            return lax.reshape(b, tuple(out))
        return _repeat_static(a, counts, axis)
    return _repeat_traced(a, repeats, axis, int(total_repeat_length))


def _repeat_traced(a, repeats, axis: int, total: int):
    if a.ndim == 0:
        return creation.full((total,), a)
    n = a.shape[axis]
    reps = manipulation.broadcast_to(manipulation.ravel(arr("repeat", repeats)), (n,))
    ends = reductions.cumsum(reps)
    pos = lax.iota(ends.dtype, total)
    # element j of the output comes from the first input whose running end exceeds j
    src = reductions.sum(ends[None, :] <= pos[:, None], axis=1)
    src = ufuncs.minimum(src, n - 1)
    return take(a, src, axis=axis)


def _roll_static(a, shift: int, axis: int):
    n = a.shape[axis]
    if n == 0:
        return a
    shift %= n
    if shift == 0:
        return a
    head = lax.slice_in_dim(a, n - shift, n, axis=axis)
    tail = lax.slice_in_dim(a, 0, n - shift, axis=axis)
    return lax.concatenate([head, tail], axis)


def _roll_traced(a, shift, axis: int):
    n = a.shape[axis]
    if n == 0:
        return a
    shift = manipulation.astype(shift, np.int32) % n
    doubled = lax.concatenate([a, a], axis)
    return lax.dynamic_slice_in_dim(doubled, n - shift, n, axis=axis)


def roll(a, shift, axis=None):
    """Shift elements along `axis` cyclically (the flattened array if None).

    `shift` and `axis` may be tuples of the same length; `shift` may be traced.
    """
    a = arr("roll", a)
    if axis is None:
        return manipulation.reshape(roll(manipulation.ravel(a), shift, 0), a.shape)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if is_traced(shift):
        shifts = [shift] if shift.ndim == 0 else [shift[i] for i in range(shift.shape[0])]
    else:
        shifts = list(np.atleast_1d(np.asarray(shift)))
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"jnp.roll: shift and axis must have the same length, got "
                         f"{len(shifts)} and {len(axes)}")
    for s, ax in zip(shifts, axes, strict=True):
        ax = canon_axis("roll", ax, a.ndim)
        a = _roll_traced(a, s, ax) if is_traced(s) else _roll_static(a, int(s), ax)
    return a


def rollaxis(a, axis: int, start: int = 0):
    """Move `axis` so it comes before position `start` (prefer `moveaxis`)."""
    a = arr("rollaxis", a)
    axis = canon_axis("rollaxis", axis, a.ndim)
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return manipulation.moveaxis(a, axis, start)


def rot90(m, k: int = 1, axes=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane of `axes` (from the first towards the
    second axis)."""
    m = arr("rot90", m)
    if m.ndim < 2:
        raise errors.ShapeError(f"jnp.rot90 needs rank >= 2, got shape {m.shape}")
    ax0, ax1 = (canon_axis("rot90", x, m.ndim) for x in axes)
    if ax0 == ax1:
        raise ValueError("jnp.rot90: the two axes must differ")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return manipulation.flip(m, (ax0, ax1))
    if k == 1:
        return manipulation.swapaxes(manipulation.flip(m, ax1), ax0, ax1)
    return manipulation.flip(manipulation.swapaxes(m, ax0, ax1), ax1)


def append(arr_, values, axis: int | None = None):
    """`values` appended at the end of `arr` along `axis` (both flattened if None)."""
    a, v = arr("append", arr_), arr("append", values)
    if axis is None:
        return manipulation.concatenate([manipulation.ravel(a), manipulation.ravel(v)])
    return manipulation.concatenate([a, v], axis=axis)


def _static_positions(name, obj, n: int) -> np.ndarray:
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    idx = concrete(name, obj, "the index `obj`")
    if idx.dtype == np.bool_:
        raise TypeError(f"jnp.{name}: boolean indices are not supported; use jnp.nonzero first")
    return idx.astype(np.int64)


def delete(arr_, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """`arr` without the entries `obj` (an int, slice or index array) along `axis`.

    Traced `obj` needs `assume_unique_indices=True` (then the output length is known)."""
    a = arr("delete", arr_)
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = canon_axis("delete", axis, a.ndim)
    n = a.shape[axis]
    if is_traced(obj):
        if not assume_unique_indices:
            concrete("delete", obj, "the index `obj` (or pass assume_unique_indices=True)")
        obj = manipulation.ravel(obj)
        keep = creation.ones((n,), np.bool_).at[obj].set(False)
        (kept,) = nonzero(keep, size=n - obj.shape[0])
        return take(a, kept, axis=axis)
    idx = _static_positions("delete", obj, n)
    if np.any((idx < -n) | (idx >= n)):
        raise IndexError(f"jnp.delete: index {idx} is out of bounds for axis {axis} with "
                         f"size {n}")
    keep = np.ones(n, bool)
    keep[idx % n if n else idx] = False
    return take(a, np.nonzero(keep)[0].astype(np.int32), axis=axis)


def insert(arr_, obj, values, axis: int | None = None):
    """`arr` with `values` inserted before the positions `obj` (static) along `axis`."""
    a = arr("insert", arr_)
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = canon_axis("insert", axis, a.ndim)
    n = a.shape[axis]
    scalar_obj = not isinstance(obj, slice) and np.ndim(concrete("insert", obj, "`obj`")) == 0
    idx = _static_positions("insert", obj, n).ravel()
    if np.any((idx < -n) | (idx > n)):
        raise IndexError(f"jnp.insert: index {idx} is out of bounds for axis {axis} with "
                         f"size {n}")
    idx = np.where(idx < 0, idx + n, idx)
    v = manipulation.astype(arr("insert", values), a.dtype)
    if idx.size == 1:
        v = manipulation.reshape(v, (1,) * (a.ndim - v.ndim) + v.shape) if v.ndim < a.ndim \
            else v
        if scalar_obj:
            v = manipulation.moveaxis(v, 0, axis)
        numnew = v.shape[axis]
        new_pos = idx[0] + np.arange(numnew)
    else:
        numnew = idx.size
        order = np.argsort(idx, kind="stable")
        new_pos = np.empty(numnew, np.int64)
        new_pos[order] = idx[order] + np.arange(numnew)
    block_shape = a.shape[:axis] + (numnew,) + a.shape[axis + 1:]
    v = manipulation.broadcast_to(v, block_shape)
    old_pos = np.ones(n + numnew, bool)
    old_pos[new_pos] = False
    # gather from concatenate([arr, values]): each output position names its source
    perm = np.empty(n + numnew, np.int64)
    perm[np.nonzero(old_pos)[0]] = np.arange(n)
    perm[new_pos] = n + np.arange(numnew)
    return take(manipulation.concatenate([a, v], axis=axis), perm.astype(np.int32), axis=axis)


def resize(a, new_shape):
    """An array of `new_shape` filled with the flattened `a`, repeated as needed."""
    a = arr("resize", a)
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"jnp.resize: all dimensions must be non-negative, got {shape}")
    size = math.prod(shape)
    flat = manipulation.ravel(a)
    if flat.shape[0] == 0:
        return creation.zeros(shape, a.dtype)
    reps = -(-size // flat.shape[0])
    flat = tile(flat, reps)[:size]
    return manipulation.reshape(flat, shape)


def select(condlist, choicelist, default=0):
    """`choicelist[i]` where `condlist[i]` is the first true condition, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"jnp.select: condlist and choicelist must have the same length, got "
                         f"{len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise ValueError("jnp.select: condlist must be non-empty")
    *choices, default = promote_dtypes(*choicelist, default)
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choices), strict=True):
        cond = arr("select", cond)
        if not dtypes.is_bool(cond.dtype):
            raise TypeError(f"jnp.select: condlist entries must be boolean, got {cond.dtype}")
        out = ufuncs.where(cond, choice, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """Evaluate `funclist[i](x)` where `condlist[i]` holds (later conditions win); an extra
    last function is the 'otherwise' value. Every function is evaluated on all of `x`."""
    x = arr("piecewise", x)
    if isinstance(condlist, (list, tuple)):
        conds = [arr("piecewise", c) for c in condlist]
    else:  # one boolean array: a single condition, or a stack of them along axis 0
        c = arr("piecewise", condlist)
        conds = [c] if c.ndim <= x.ndim else [c[i] for i in range(c.shape[0])]
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"jnp.piecewise: with {len(conds)} conditions funclist needs "
                         f"{len(conds)} or {len(conds) + 1} entries, got {len(funclist)}")
    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return manipulation.broadcast_to(manipulation.astype(arr("piecewise", v), x.dtype),
                                         x.shape)
    out = value(funclist[-1]) if len(funclist) == len(conds) + 1 else \
        creation.zeros(x.shape, x.dtype)
    for cond, f in zip(conds, funclist[:len(conds)], strict=True):
        out = ufuncs.where(cond, value(f), out)
    return out


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    """Flat indices into an array of shape `dims` from a tuple of index arrays.

    mode: 'raise' (checked on concrete indices; traced ones need 'clip' or 'wrap'), 'clip' or
    'wrap'."""
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"jnp.ravel_multi_index: {len(multi_index)} index arrays for "
                         f"{len(dims)} dimensions")
    if order not in ("C", "F"):
        raise ValueError(f"jnp.ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    idx = [arr("ravel_multi_index", i) for i in multi_index]
    for i in idx:
        if not dtypes.is_int(i.dtype):
            raise TypeError(f"jnp.ravel_multi_index: indices must be integers, got {i.dtype}")
    if mode == "raise":
        if is_traced(*idx):
            raise errors.ConcretizationError(
                "jnp.ravel_multi_index: mode='raise' needs concrete indices to check bounds, "
                "but they are traced; use mode='clip' or mode='wrap' under jit/vmap/grad.")
        for i, d in zip(idx, dims, strict=True):
            v = np.asarray(i)
            if np.any((v < 0) | (v >= d)):
                raise ValueError("jnp.ravel_multi_index: invalid entry in coordinates array")
    elif mode == "clip":
        idx = [ufuncs.clip(i, 0, d - 1) for i, d in zip(idx, dims, strict=True)]
    elif mode == "wrap":
        idx = [ufuncs.remainder(i, d) for i, d in zip(idx, dims, strict=True)]
    else:
        raise ValueError(f"jnp.ravel_multi_index: invalid mode {mode!r}")
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    strides = strides[::-1] if order == "C" else strides
    idx = manipulation.broadcast_arrays(*idx)
    dt = index_dtype()
    out = creation.zeros(idx[0].shape if idx else (), dt)
    for i, s in zip(idx, strides, strict=True):
        out = out + manipulation.astype(i, dt) * int(s)
    return out


def unravel_index(indices, shape):
    """The tuple of index arrays that `indices` (flat, negative allowed) reach in `shape`.

    Out-of-bound indices are clipped to the nearest valid position (as in JAX)."""
    idx = arr("unravel_index", indices)
    if not dtypes.is_int(idx.dtype):
        raise TypeError(f"jnp.unravel_index: indices must be integers, got {idx.dtype}")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    total = math.prod(shape)
    if not dtypes.is_unsigned_int(idx.dtype):
        # negative flat indices count from the end; clip after wrapping once
        idx = ufuncs.where(idx < 0, idx + total, idx)
    idx = ufuncs.clip(idx, 0, max(total - 1, 0))
    out = [None] * len(shape)
    for i in range(len(shape) - 1, -1, -1):
        out[i] = ufuncs.remainder(idx, shape[i]) if i else idx
        idx = ufuncs.floor_divide(idx, shape[i])
    return tuple(out)


def extract(condition, arr_, *, size: int | None = None, fill_value=0):
    """The elements of the flattened `arr` where `condition` is true (needs `size=` under
    jit)."""
    a = manipulation.ravel(arr("extract", arr_))
    cond = manipulation.ravel(arr("extract", condition))
    if size is None:
        need_size("extract", cond)
    (idx,) = nonzero(cond, size=size, fill_value=-1)
    vals = a[ufuncs.maximum(idx, 0)] if a.shape[0] else creation.zeros(idx.shape, a.dtype)
    if size is None:
        return vals
    return ufuncs.where(idx >= 0, vals, manipulation.astype(arr("extract", fill_value),
                                                            a.dtype))


def compress(condition, a, axis: int | None = None, *, size: int | None = None,
             fill_value=0):
    """The slices of `a` along `axis` where the 1-D `condition` is true."""
    a = arr("compress", a)
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = canon_axis("compress", axis, a.ndim)
    cond = manipulation.ravel(arr("compress", condition))[:a.shape[axis]]
    (idx,) = nonzero(cond, size=size, fill_value=-1)
    out = take(a, ufuncs.maximum(idx, 0), axis=axis)
    if size is None:
        return out
    shape = [1] * a.ndim
    shape[axis] = idx.shape[0]
    ok = manipulation.reshape(idx >= 0, tuple(shape))
    return ufuncs.where(ok, out, manipulation.astype(arr("compress", fill_value), a.dtype))


def place(arr_, mask, vals, *, inplace: bool = True):
    """A copy of `arr` where masked positions take `vals` in order (cycled); inplace=False."""
    if inplace:
        raise NotImplementedError("jnp.place cannot modify arrays in place; pass "
                                  "inplace=False and use the returned array")
    a = arr("place", arr_)
    m = manipulation.ravel(arr("place", mask))
    v = manipulation.ravel(manipulation.astype(arr("place", vals), a.dtype))
    if v.shape[0] == 0:
        raise ValueError("jnp.place: vals must not be empty")
    # the k-th masked position takes vals[k % len(vals)]: a running count, no data-dependent
    # shapes, so this also works under jit
    k = reductions.cumsum(m, dtype=np.int32) - 1
    taken = v[ufuncs.remainder(ufuncs.maximum(k, 0), v.shape[0])]
    return manipulation.reshape(ufuncs.where(m, taken, manipulation.ravel(a)), a.shape)


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """A copy of `a` with flat positions `ind` set to `v`; inplace=False."""
    if inplace:
        raise NotImplementedError("jnp.put cannot modify arrays in place; pass inplace=False "
                                  "and use the returned array")
    a = arr("put", a)
    ind = manipulation.ravel(arr("put", ind))
    v = manipulation.ravel(manipulation.astype(arr("put", v), a.dtype))
    v = resize(v, ind.shape) if not is_traced(v) or v.shape != ind.shape else v
    if mode == "clip":
        ind = ufuncs.clip(ind, 0, a.size - 1)
    elif mode == "wrap":
        ind = ufuncs.remainder(ind, a.size)
    return manipulation.reshape(manipulation.ravel(a).at[ind].set(v), a.shape)


def choose(a, choices, out=None, mode: str = "raise"):
    """`choices[a[i]][i]` for each position (all broadcast together).

    mode: 'raise' (checked on concrete `a`; under jit use 'clip' or 'wrap'), 'clip', 'wrap'."""
    if out is not None:
        raise ValueError("jnp.choose: the `out` argument is not supported")
    idx = arr("choose", a)
    chs = [arr("choose", c) for c in promote_dtypes(*choices)]
    n = len(chs)
    if mode == "raise":
        if is_traced(idx):
            raise errors.ConcretizationError(
                "jnp.choose: mode='raise' needs a concrete index array to check bounds, but it "
                "is traced; use mode='clip' or mode='wrap' under jit/vmap/grad.")
        v = np.asarray(idx)
        if np.any((v < 0) | (v >= n)):
            raise ValueError("jnp.choose: invalid entry in choice array")
    elif mode == "wrap":
        idx = ufuncs.remainder(idx, n)
    elif mode == "clip":
        idx = ufuncs.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"jnp.choose: invalid mode {mode!r}")
    parts = manipulation.broadcast_arrays(idx, *chs)
    idx, chs = parts[0], parts[1:]
    out = chs[-1]
    for i in range(n - 2, -1, -1):
        out = ufuncs.where(idx == i, chs[i], out)
    return out


def put_along_axis(arr_, indices, values, axis, inplace: bool = True, *, mode=None):
    """A copy of `arr` with `values` written at `indices` along `axis` (inplace=False)."""
    if inplace:
        raise NotImplementedError("jnp.put_along_axis cannot modify arrays in place; pass "
                                  "inplace=False and use the returned array")
    a = arr("put_along_axis", arr_)
    idx = arr("put_along_axis", indices)
    if axis is None:
        a_flat = manipulation.ravel(a)
        return a_flat.at[manipulation.ravel(idx)].set(values, mode=mode)
    axis = canon_axis("put_along_axis", axis, a.ndim)
    if idx.ndim != a.ndim:
        raise errors.ShapeError(f"jnp.put_along_axis: indices of shape {idx.shape} need the "
                                f"rank of arr {a.shape}")
    shape = tuple(max(p, q) if p == 1 or q == 1 else p for p, q in zip(
        a.shape, idx.shape, strict=True))
    shape = tuple(idx.shape[i] if i == axis else shape[i] for i in range(a.ndim))
    idx = manipulation.broadcast_to(idx, shape)
    full = tuple(idx if i == axis else lax.broadcasted_iota(idx.dtype, shape, i)
                 for i in range(a.ndim))
    return a.at[full].set(values, mode=mode)


def hsplit(ary, indices_or_sections):
    """`split` along axis 1 (axis 0 for 1-D arrays)."""
    a = arr("hsplit", ary)
    return manipulation.split(a, indices_or_sections, axis=1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """`split` along axis 0 (rank >= 2)."""
    a = arr("vsplit", ary)
    if a.ndim < 2:
        raise errors.ShapeError("jnp.vsplit needs rank >= 2")
    return manipulation.split(a, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """`split` along axis 2 (rank >= 3)."""
    a = arr("dsplit", ary)
    if a.ndim < 3:
        raise errors.ShapeError("jnp.dsplit needs rank >= 3")
    return manipulation.split(a, indices_or_sections, axis=2)
