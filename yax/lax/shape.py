"""yax.lax shape operations: broadcasting, reshaping, transposing, padding, iota.

Wrappers mirror jax.lax's signatures, accept negative axes where jax.lax does, and bind nothing
when the operation is the identity (a jaxpr holds no no-op equations).
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import TypedScalar, dims_of
from yax.core.trace import bind
from yax.lax._util import is_python_scalar, python_scalar_as
from yax.primitives import shape as sp
from yax.runtime.values import as_operand, to_array

__all__ = ["broadcast_in_dim", "broadcast", "broadcast_to_rank", "reshape", "transpose", "squeeze",
           "expand_dims", "rev", "concatenate", "pad", "iota", "broadcasted_iota"]


def _shape(x) -> tuple:
    return tuple(x.aval.shape) if hasattr(x, "aval") else tuple(np.shape(x))


def _identity(x):
    """Return an operand unchanged, as an Array when it was host data."""
    return x if hasattr(x, "aval") and type(x) is not TypedScalar else to_array(x)


def _ints(name: str, values) -> tuple:
    try:
        return tuple(int(v) for v in values)
    except errors.ExportError:  # a symbolic dimension (yax.export) refuses int(): keep it
        return dims_of(values)
    except TypeError as e:
        raise errors.ShapeError(f"{name} needs a sequence of static ints, got {values!r}") from e


def _axes(name: str, axes, ndim: int) -> tuple:
    """Canonicalise possibly negative axes against rank `ndim`."""
    out = []
    for ax in _ints(name, axes):
        if not -ndim <= ax < ndim:
            raise errors.ShapeError(f"{name}: axis {ax} is out of range for rank {ndim}")
        out.append(ax % ndim)
    return tuple(out)


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """Broadcast `operand` to `shape`; operand axis i becomes result axis broadcast_dimensions[i].

    Example: broadcast_in_dim(x_f32[3], (2, 3), (1,)) repeats the row twice.
    """
    operand = as_operand(operand)
    shape, dims = _ints("broadcast_in_dim", shape), _ints("broadcast_in_dim", broadcast_dimensions)
    if shape == _shape(operand) and dims == tuple(range(len(shape))):
        return _identity(operand)
    return bind(sp.broadcast_in_dim_p, operand, shape=shape, broadcast_dimensions=dims)


def broadcast(operand, sizes):
    """Add leading axes of the given `sizes`: the result has shape (*sizes, *operand.shape)."""
    operand = as_operand(operand)
    sizes, shape = _ints("broadcast", sizes), _shape(operand)
    return broadcast_in_dim(operand, sizes + shape,
                            tuple(range(len(sizes), len(sizes) + len(shape))))


def broadcast_to_rank(x, rank: int):
    """Add leading size-1 axes until `x` has rank `rank` (unchanged if it already has)."""
    x = as_operand(x)
    ndim = len(_shape(x))
    if ndim >= rank:
        return _identity(x)
    return broadcast(x, (1,) * (rank - ndim))


def reshape(operand, new_sizes, dimensions=None):
    """Reshape (row-major) to `new_sizes`, after transposing by `dimensions` if given.

    One entry of `new_sizes` may be -1 (inferred), as in NumPy.
    """
    operand = as_operand(operand)
    shape = _shape(operand)
    new_sizes = _infer_size(shape, _ints("reshape", new_sizes))
    dims = None if dimensions is None else _ints("reshape", dimensions)
    if dims == tuple(range(len(shape))):
        dims = None
    if dims is None and new_sizes == shape:
        return _identity(operand)
    return bind(sp.reshape_p, operand, new_sizes=new_sizes, dimensions=dims)


def _infer_size(shape, new_sizes) -> tuple:
    if new_sizes.count(-1) != 1:
        return new_sizes
    known = math.prod(d for d in new_sizes if d != -1)  # math.prod: symbolic dims too
    total = math.prod(shape)
    if known == 0 or total % known:
        raise errors.ShapeError(f"reshape of shape {shape} to {new_sizes}: the -1 entry cannot be "
                                f"inferred")
    return tuple(total // known if d == -1 else d for d in new_sizes)


def transpose(operand, permutation):
    """Permute the axes: result axis i is operand axis permutation[i]."""
    operand = as_operand(operand)
    ndim = len(_shape(operand))
    perm = _ints("transpose", permutation)
    if perm == tuple(range(ndim)):
        return _identity(operand)
    return bind(sp.transpose_p, operand, permutation=perm)


def squeeze(array, dimensions):
    """Remove the size-1 axes `dimensions` (negative counts from the end)."""
    array = as_operand(array)
    dims = tuple(sorted(set(_axes("squeeze", dimensions, len(_shape(array))))))
    if not dims:
        return _identity(array)
    return bind(sp.squeeze_p, array, dimensions=dims)


def expand_dims(array, dimensions):
    """Insert size-1 axes at `dimensions` (positions in the result; negative from its end)."""
    array = as_operand(array)
    dims = _ints("expand_dims", dimensions)
    out_ndim = len(_shape(array)) + len(dims)
    dims = tuple(sorted(_axes("expand_dims", dims, out_ndim)))
    if not dims:
        return _identity(array)
    return bind(sp.expand_dims_p, array, dimensions=dims)


def rev(operand, dimensions):
    """Reverse the order of elements along each axis in `dimensions`."""
    operand = as_operand(operand)
    dims = _axes("rev", dimensions, len(_shape(operand)))
    if not dims:
        return _identity(operand)
    return bind(sp.rev_p, operand, dimensions=dims)


def concatenate(operands, dimension: int):
    """Join `operands` (same dtype and rank, equal sizes off `dimension`) along `dimension`."""
    operands = [as_operand(x) for x in operands]
    if not operands:
        raise errors.ShapeError("concatenate needs at least one operand")
    ndim = len(_shape(operands[0]))
    (dimension,) = _axes("concatenate", (dimension,), max(ndim, 1))
    if len(operands) == 1:
        return _identity(operands[0])
    return bind(sp.concatenate_p, *operands, dimension=dimension)


def pad(operand, padding_value, padding_config):
    """Pad with `padding_value` (a scalar of operand's dtype) per axis (lo, hi, interior).

    Negative lo/hi remove elements. Example: pad(x_f32[3], 0., [(1, 2, 1)]) has shape [8].
    """
    operand = as_operand(operand)
    if is_python_scalar(padding_value):
        padding_value = python_scalar_as(padding_value, _dtype(operand), "pad")
    padding_value = as_operand(padding_value)
    config = tuple(_ints("pad", triple) for triple in padding_config)
    if any(len(t) != 3 for t in config):
        raise errors.ShapeError(f"pad: padding_config {padding_config!r} must hold (lo, hi, "
                                f"interior) triples")
    if all(t == (0, 0, 0) for t in config) and len(config) == len(_shape(operand)):
        return _identity(operand)
    return bind(sp.pad_p, operand, padding_value, padding_config=config)


def _dtype(x):
    return x.aval.dtype if hasattr(x, "aval") else np.asarray(x).dtype


def iota(dtype, size: int):
    """[0, 1, ..., size - 1] as `dtype`."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension: int):
    """An array of `shape` whose value at each position is its index along `dimension`."""
    shape = _ints("broadcasted_iota", shape)
    (dimension,) = _axes("broadcasted_iota", (dimension,), max(len(shape), 1))
    dtype = dtypes.canonicalize(dtypes.dtype(dtype))
    return bind(sp.iota_p, dtype=dtype, shape=shape, dimension=dimension)
