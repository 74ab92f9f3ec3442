"""yax.numpy.linalg.norm: vector norms (any ord) and matrix norms (fro, nuc, +-1, +-2, +-inf)."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._promote import check_arraylike, promote_dtypes_inexact, to_operand
from yax.numpy.linalg._decomp import svd
from yax.numpy.linalg._util import compiled_when_eager


def _axes(name, axis, ndim):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise errors.ShapeError(f"{name}: axis {ax} is out of range for rank {ndim}")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise errors.ShapeError(f"{name}: repeated axis in {axes}")
    return tuple(out)


def _vector_norm(x, ord, axis, keepdims):
    ax = ufuncs.abs(x)
    if ord is None or ord == 2:
        squares = ufuncs.real(x * ufuncs.conj(x))
        return ufuncs.sqrt(reductions.sum(squares, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return reductions.max(ax, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return reductions.sum(ax != 0, axis=axis, keepdims=keepdims).astype(ax.dtype)
    if ord == 1:
        return reductions.sum(ax, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise errors.YaxError(f"norm: ord {ord!r} is only valid for matrix norms (two axes)")
    p = float(ord)
    return reductions.sum(ax ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    if ord is None or ord == "fro":
        out = ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axes))
    elif ord in (1, -1):
        red = reductions.max if ord == 1 else reductions.min
        out = red(reductions.sum(ufuncs.abs(x), axis=r), axis=c - 1 if c > r else c)
    elif ord in (np.inf, -np.inf):
        red = reductions.max if ord == np.inf else reductions.min
        out = red(reductions.sum(ufuncs.abs(x), axis=c), axis=r - 1 if r > c else r)
    elif ord in (2, -2, "nuc"):
        s = svd(manipulation.moveaxis(x, (r, c), (-2, -1)), compute_uv=False)
        out = {2: lambda: reductions.max(s, axis=-1), -2: lambda: reductions.min(s, axis=-1),
               "nuc": lambda: reductions.sum(s, axis=-1)}[ord]()
    else:
        raise errors.YaxError(f"norm: invalid ord {ord!r} for a matrix norm; use None, 'fro', "
                              f"'nuc', 1, -1, 2, -2, inf or -inf")
    if keepdims:
        out = manipulation.expand_dims(out, tuple(sorted(axes)))
    return out


@compiled_when_eager
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector or matrix norm, with NumPy's semantics.

    Args:
      x: array. ord: the norm order (see numpy.linalg.norm).
      axis: None (the whole array: a vector norm for 1-D, a matrix norm for 2-D, the
        flattened 2-norm for ord=None), an int (vector norms) or a pair (matrix norms).
      keepdims: keep the reduced axes with size 1.
    Returns:
      The norm, real.

    Example: `jnp.linalg.norm(x, ord="fro")`.
    """
    check_arraylike("norm", x)
    x, = promote_dtypes_inexact(to_operand(x))
    x = creation.asarray(x)
    if axis is None:
        if ord is None:
            flat = manipulation.ravel(x)
            out = _vector_norm(flat, None, 0, False)
            return manipulation.reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim not in (1, 2):
            raise errors.ShapeError(f"norm: with ord={ord!r} and axis=None the input must be 1-D "
                                    f"or 2-D, got shape {tuple(x.shape)}; pass axis")
        axis = tuple(range(x.ndim))
    axes = _axes("norm", axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise errors.ShapeError(f"norm: axis must name one or two axes, got {axis!r}")


@compiled_when_eager
def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """The array API's vector norm: over all elements when axis is None, else over `axis`
    (an int or a tuple, flattened together)."""
    check_arraylike("vector_norm", x)
    x, = promote_dtypes_inexact(to_operand(x))
    x = creation.asarray(x)
    if axis is None:
        out = _vector_norm(manipulation.ravel(x), ord, 0, False)
        return manipulation.reshape(out, (1,) * x.ndim) if keepdims else out
    axes = _axes("vector_norm", axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = manipulation.transpose(x, rest + list(axes))
    flat = manipulation.reshape(moved, tuple(x.shape[d] for d in rest) + (-1,))
    out = _vector_norm(flat, ord, -1, False)
    return manipulation.expand_dims(out, tuple(sorted(axes))) if keepdims else out


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """The array API's matrix norm over the last two axes."""
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)
