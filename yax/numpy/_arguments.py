"""Argument handling shared by the yax.numpy modules (statistics, searching, set operations,
padding, polynomials, construction, rearrangement, calculus...): conversion to an array, the
default index type, axis normalisation, and the "this needs a concrete value or a static
`size=`" check."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.trace import Tracer
from yax.numpy._promote import check_arraylike
from yax.numpy.creation import asarray


def arr(name: str, a):
    """`a` as an Array or tracer (lists are refused like everywhere in yax.numpy)."""
    if isinstance(a, Tracer):
        return a
    check_arraylike(name, a)
    return asarray(a)


def index_dtype() -> np.dtype:
    """The default integer type (int32, or int64 with x64), used for returned indices."""
    return dtypes.canonicalize(dtypes.default_int())


def is_traced(*xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def need_size(name: str, *xs, what: str = "its output shape depends on the values") -> None:
    """Raise a clear error when a data-dependent-shape function sees a traced value."""
    traced = [x for x in xs if isinstance(x, Tracer)]
    if not traced:
        return
    raise errors.ConcretizationError(
        f"jnp.{name}: {what}, but the input is traced ({traced[0].aval.str_short()}) under "
        f"jit, vmap or grad, where shapes must be known in advance. Pass a static `size=` "
        f"(and optionally `fill_value=`), e.g. `jnp.{name}(x, size=10)`: the result is then "
        f"padded or truncated to that length.")


def concrete(name: str, x, what: str) -> np.ndarray:
    """The NumPy value of `x`, or a ConcretizationError saying `what` must be static."""
    if isinstance(x, Tracer):
        raise errors.ConcretizationError(
            f"jnp.{name}: {what} must be a concrete value, but it is traced "
            f"({x.aval.str_short()}). Pass a Python value or NumPy array, or mark the argument "
            f"static with `jit(f, static_argnums=...)`.")
    return np.asarray(x)


def canon_axis(name: str, axis, ndim: int) -> int:
    ax = int(axis.__index__()) if not isinstance(axis, int) else axis
    if not -ndim <= ax < max(ndim, 1):
        raise errors.ShapeError(f"jnp.{name}: axis {ax} is out of bounds for an array of "
                                f"rank {ndim}")
    return ax % max(ndim, 1)

