"""yax.numpy shape manipulation: reshape, transpose, broadcasting, joining and splitting.

All of these are static-shape operations: sizes, axes and split points are Python values known
at trace time, and each function becomes one or a few lax shape operations.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.avals import dims_of, is_symbolic_dim
from yax.lax._util import out_sharding_param
from yax.numpy import _promote
from yax.numpy._promote import check_arraylike, shape_of
from yax.numpy.creation import asarray

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
           "moveaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays",
           "broadcast_shapes", "concatenate", "concat", "stack", "vstack", "hstack", "dstack",
           "column_stack", "split", "array_split", "atleast_1d", "atleast_2d", "atleast_3d",
           "flip", "fliplr", "flipud", "astype", "shape", "ndim", "size", "unstack"]


def _asarray(name, a):
    check_arraylike(name, a)
    return asarray(a)


def _axis(name: str, axis, ndim: int) -> int:
    ax = int(axis.__index__())
    if not -ndim <= ax < ndim:
        raise errors.ShapeError(f"{name}: axis {ax} is out of bounds for an array of rank {ndim}")
    return ax % ndim


def _axes(name: str, axes, ndim: int) -> tuple:
    axes = (axes,) if not isinstance(axes, (tuple, list)) else tuple(axes)
    out = tuple(_axis(name, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise errors.ShapeError(f"{name}: repeated axis in {axes}")
    return out


def _check_order(name: str, order) -> None:
    if order not in ("C", None, "A", "K"):
        raise NotImplementedError(f"{name}: only order='C' (row-major) is supported, got "
                                  f"order={order!r}")


def _infer_shape(old_shape, newshape) -> tuple:
    newshape = (newshape,) if not isinstance(newshape, (tuple, list)) else tuple(newshape)
    newshape = dims_of(d if is_symbolic_dim(d) else d.__index__() for d in newshape)
    size = math.prod(old_shape)
    if newshape.count(-1) > 1:
        raise errors.ShapeError(f"reshape: only one dimension can be -1, got {newshape}")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or size % known:
            raise errors.ShapeError(f"reshape: cannot reshape an array of shape {old_shape} "
                                    f"(size {size}) into shape {newshape}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    if any(d < 0 for d in newshape) or math.prod(newshape) != size:
        raise errors.ShapeError(f"reshape: cannot reshape an array of shape {old_shape} "
                                f"(size {size}) into shape {newshape}")
    return newshape


@out_sharding_param("reshape", "reshape")
def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None, out_sharding=None):
    """Give `a` a new shape with the same number of elements; one dimension may be -1.

    `copy` is accepted as JAX's: Arrays are immutable, so whether the result shares `a`'s
    buffer cannot be observed (JAX too returns `a` itself when the shape does not change).
    `out_sharding`: only a sharding that shards nothing.

    Example:
      >>> jnp.reshape(jnp.arange(6), (2, -1)).shape
      (2, 3)
    """
    del copy
    if shape is None:
        shape = newshape
    _check_order("reshape", order)
    a = _asarray("reshape", a)
    new = _infer_shape(a.shape, shape)
    if new == a.shape:
        return a
    return lax.reshape(a, new)


def ravel(a, order: str = "C"):
    """The elements of `a` as a 1-D array (row-major)."""
    _check_order("ravel", order)
    a = _asarray("ravel", a)
    return a if a.ndim == 1 else lax.reshape(a, (a.size,))


def transpose(a, axes=None):
    """Permute the axes of `a` (reverse them by default)."""
    a = _asarray("transpose", a)
    perm = tuple(range(a.ndim))[::-1] if axes is None else _axes("transpose", axes, a.ndim)
    if len(perm) != a.ndim:
        raise errors.ShapeError(f"transpose: axes {axes} do not match an array of rank {a.ndim}")
    return a if perm == tuple(range(a.ndim)) else lax.transpose(a, perm)


def permute_dims(a, /, axes):
    """The array API's name of `transpose` (axes required)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes (a batch of matrices)."""
    x = _asarray("matrix_transpose", x)
    if x.ndim < 2:
        raise errors.ShapeError(f"matrix_transpose needs rank >= 2, got shape {x.shape}")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    """Exchange two axes."""
    a = _asarray("swapaxes", a)
    perm = list(range(a.ndim))
    i, j = _axis("swapaxes", axis1, a.ndim), _axis("swapaxes", axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, tuple(perm))


def moveaxis(a, source, destination):
    """Move axes `source` to positions `destination` (ints or tuples), keeping the others'
    order."""
    a = _asarray("moveaxis", a)
    src = _axes("moveaxis", source, a.ndim)
    dst = _axes("moveaxis", destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(a, tuple(perm))


def expand_dims(a, axis):
    """Insert axes of size 1 at positions `axis` (an int or a tuple) of the result."""
    a = _asarray("expand_dims", a)
    axes = _axes("expand_dims", axis, a.ndim + (len(axis) if isinstance(axis, (tuple, list))
                                                 else 1))
    shape = list(a.shape)
    for ax in sorted(axes):
        shape.insert(ax, 1)
    return lax.reshape(a, tuple(shape))


def squeeze(a, axis=None):
    """Remove axes of size 1 (all of them, or those in `axis`, which must have size 1)."""
    a = _asarray("squeeze", a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = _axes("squeeze", axis, a.ndim)
        bad = [ax for ax in axes if a.shape[ax] != 1]
        if bad:
            raise errors.ShapeError(f"squeeze: cannot remove axis {bad[0]} of size "
                                    f"{a.shape[bad[0]]} from shape {a.shape} (only size-1 axes)")
    if not axes:
        return a
    return lax.reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def broadcast_shapes(*shapes) -> tuple:
    """The shape that NumPy broadcasting of `shapes` gives (an error names them all)."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    return _promote.broadcast_shapes(*shapes, name="broadcast_shapes")


def broadcast_to(array, shape):
    """Broadcast `array` to `shape` NumPy-style (no copy in the program's semantics).

    An array kind that wraps its data (a typed PRNG key array) broadcasts itself through its
    `__yax_broadcast_to__(shape)` (yax.numpy cannot know its layout)."""
    # dims_of: ints, keeping yax.export's symbolic dimensions as they are
    shape = (shape,) if isinstance(shape, int) else dims_of(shape)
    if hasattr(type(array), "__yax_broadcast_to__"):
        return array.__yax_broadcast_to__(shape)
    a = _asarray("broadcast_to", array)
    if a.shape == shape:
        return a
    if len(shape) < a.ndim or _promote.broadcast_shapes(a.shape, shape,
                                                         name="broadcast_to") != shape:
        raise errors.ShapeError(f"broadcast_to: cannot broadcast an array of shape {a.shape} to "
                                f"shape {shape}")
    offset = len(shape) - a.ndim
    # broadcast_in_dim needs operand dims of size 1 or equal to the target; drop nothing
    return lax.broadcast_in_dim(a, shape, tuple(range(offset, len(shape))))


def broadcast_arrays(*args) -> list:
    """Broadcast all arguments against each other."""
    arrays = [_asarray("broadcast_arrays", a) for a in args]
    shape = _promote.broadcast_shapes(*(a.shape for a in arrays), name="broadcast_arrays")
    return [broadcast_to(a, shape) for a in arrays]


def _promote_all(name, arrays):
    arrays = [_asarray(name, a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name} needs at least one array")
    return _promote.promote_dtypes(*arrays) if len(arrays) > 1 else arrays


def concatenate(arrays, axis: int | None = 0, dtype=None):
    """Join arrays along an existing axis (`axis=None` flattens them first).

    Example:
      >>> jnp.concatenate([jnp.zeros(2), jnp.ones(1)])
      Array([0., 0., 1.], dtype=float32)
    """
    if hasattr(arrays, "aval") or isinstance(arrays, np.ndarray):
        arrays = list(arrays)  # an array concatenates its rows
    arrays = _promote_all("concatenate", list(arrays))
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise errors.ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = _axis("concatenate", axis, ndim)
    for a in arrays[1:]:
        if a.ndim != ndim or any(d != e for i, (d, e) in enumerate(zip(a.shape, arrays[0].shape))
                                 if i != ax):
            shown = " and ".join(str(x.shape) for x in arrays)
            raise errors.ShapeError(f"concatenate: shapes {shown} differ outside axis {ax}")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, ax)


concat = concatenate


def stack(arrays, axis: int = 0, dtype=None):
    """Join arrays of one shape along a new axis."""
    if hasattr(arrays, "aval") or isinstance(arrays, np.ndarray):
        arrays = list(arrays)
    arrays = _promote_all("stack", list(arrays))
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise errors.ShapeError(f"stack: all arrays need one shape, got "
                                f"{' and '.join(str(a.shape) for a in arrays)}")
    ax = _axis("stack", axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(a, ax) for a in arrays], ax, dtype)


def vstack(tup, dtype=None):
    """Stack along the first axis (1-D arrays become rows)."""
    return concatenate([atleast_2d(a) for a in tup], 0, dtype)


def hstack(tup, dtype=None):
    """Stack along the second axis (the first for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype)


def dstack(tup, dtype=None):
    """Stack along the third axis."""
    return concatenate([atleast_3d(a) for a in tup], 2, dtype)


def column_stack(tup):
    """Stack 1-D arrays as columns (2-D arrays are joined as they are)."""
    arrays = [_asarray("column_stack", a) for a in tup]
    arrays = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays]
    return concatenate(arrays, 1)


def _split_points(name, n: int, indices_or_sections, even: bool) -> list:
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: number of sections must be positive")
        if even and n % sections:
            raise ValueError(f"{name}: array split does not result in an equal division "
                             f"({n} elements into {sections} sections); use array_split")
        base, extra = divmod(n, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        return list(np.cumsum([0] + sizes))
    points = [int(i) for i in indices_or_sections]
    clipped = [builtins.min(builtins.max(p + n if p < 0 else p, 0), n) for p in points]
    return [0] + clipped + [n]


def _split(name, ary, indices_or_sections, axis, even):
    a = _asarray(name, ary)
    ax = _axis(name, axis, a.ndim)
    points = _split_points(name, a.shape[ax], indices_or_sections, even)
    out = []
    for lo, hi in zip(points[:-1], points[1:]):
        hi = builtins.max(lo, hi)
        start = [0] * a.ndim
        limit = list(a.shape)
        start[ax], limit[ax] = int(lo), int(hi)
        out.append(lax.slice(a, tuple(start), tuple(limit)))
    return out


def split(ary, indices_or_sections, axis: int = 0) -> list:
    """Split into equal sections (an int) or at the given indices (a sequence)."""
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary, indices_or_sections, axis: int = 0) -> list:
    """As `split`, but sections may differ in size by one (the first ones are larger)."""
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of `x` along `axis`, as a tuple of arrays of one rank less."""
    x = _asarray("unstack", x)
    ax = _axis("unstack", axis, x.ndim)
    return tuple(squeeze(s, ax) for s in split(x, x.shape[ax], ax))


def _atleast(name, rank, arrays, pad):
    out = []
    for a in arrays:
        a = _asarray(name, a)
        if a.ndim < rank:
            a = reshape(a, pad(a.shape))
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Arrays of rank at least 1 (scalars become shape (1,))."""
    return _atleast("atleast_1d", 1, arys, lambda s: (1,) if not s else s)


def atleast_2d(*arys):
    """Arrays of rank at least 2 (1-D arrays become one row)."""
    return _atleast("atleast_2d", 2, arys, lambda s: (1,) * (2 - len(s)) + s)


def atleast_3d(*arys):
    """Arrays of rank at least 3 (a 1-D array (N,) becomes (1, N, 1), 2-D (M, N) (M, N, 1))."""
    def pad(s):
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]
    return _atleast("atleast_3d", 3, arys, pad)


def flip(m, axis=None):
    """Reverse the order of elements along `axis` (all axes by default)."""
    m = _asarray("flip", m)
    axes = tuple(range(m.ndim)) if axis is None else _axes("flip", axis, m.ndim)
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    """Reverse the second axis."""
    return flip(m, 1)


def flipud(m):
    """Reverse the first axis."""
    return flip(m, 0)


def astype(x, dtype, /, *, copy: bool = False, device=None):
    """`x` converted to `dtype` (a strong type; complex to real keeps the real part)."""
    x = _asarray("astype", x)
    return lax.convert_element_type(x, dtypes.canonicalize(dtypes.dtype(dtype), warn=True))


def shape(a) -> tuple:
    """The shape of an array, tracer, NumPy array or scalar."""
    return tuple(shape_of(a))


def ndim(a) -> int:
    """The rank of `a`."""
    return len(shape_of(a))


def size(a, axis: int | None = None) -> int:
    """The number of elements of `a` (along `axis` if given)."""
    s = shape_of(a)
    return math.prod(s) if axis is None else s[_axis("size", axis, len(s))]
