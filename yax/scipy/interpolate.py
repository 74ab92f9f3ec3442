"""yax.scipy.interpolate (`jax.scipy.interpolate`): `RegularGridInterpolator`, linear or
nearest-neighbour interpolation of values on a rectilinear grid.

Each query point is located in its grid cell per dimension (`searchsorted`, clipped so points
outside use the edge cell: outside the grid the result extrapolates linearly unless
`fill_value` is set); linear interpolation sums the cell's 2^d corners weighted by the
point's fractional position. Written with yax.numpy, so it is differentiable in the values and
the points and works under jit and vmap. The interpolator is a pytree.
"""

from __future__ import annotations

import itertools

import yax.numpy as jnp
from yax import tree_util

__all__ = ["RegularGridInterpolator"]


class RegularGridInterpolator:
    """Interpolate `values` (shape `[len(p) for p in points] + trailing`) given on the grid
    `points` (one increasing 1-D array per dimension) at arbitrary points."""

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
                 fill_value=float("nan")):
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        if not jnp.issubdtype(values.dtype, jnp.inexact):
            values = values.astype(jnp.result_type(values.dtype, jnp.float32))
        self.method, self.bounds_error = method, bounds_error
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values
        self.fill_value = None if fill_value is None else jnp.asarray(fill_value)

    def __call__(self, xi, method: str | None = None):
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = jnp.stack(jnp.broadcast_arrays(*xi), axis=-1) if isinstance(xi, tuple) \
            else jnp.asarray(xi)
        if xi.ndim == 1 and ndim > 1 or xi.ndim == 0:
            xi = xi.reshape(1, -1) if xi.ndim else xi.reshape(1, 1)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        lead = xi.shape[:-1]
        pts = xi.reshape(-1, ndim)
        cells, fracs, outside = self._locate(pts)
        if method == "linear":
            out = self._linear(cells, fracs)
        else:
            out = self.values[tuple(jnp.where(f <= 0.5, i, i + 1) for i, f in zip(cells, fracs))]
        if self.fill_value is not None:
            mask = outside.reshape(outside.shape + (1,) * (out.ndim - 1))
            out = jnp.where(mask, self.fill_value, out)
        return out.reshape(lead + self.values.shape[ndim:])

    def _locate(self, pts):
        cells, fracs = [], []
        outside = jnp.zeros(pts.shape[0], dtype=bool)
        for d, g in enumerate(self.grid):
            x = pts[:, d]
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            cells.append(i)
            fracs.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return cells, fracs, outside

    def _linear(self, cells, fracs):
        trailing = (None,) * (self.values.ndim - len(cells))
        total = 0.0
        for corner in itertools.product((0, 1), repeat=len(cells)):
            weight = 1.0
            for up, f in zip(corner, fracs):
                weight = weight * (f if up else 1 - f)
            idx = tuple(i + up for i, up in zip(cells, corner))
            total = total + self.values[idx] * weight[(slice(None),) + trailing]
        return total


tree_util.register_pytree_node(
    RegularGridInterpolator,
    lambda r: ((r.grid, r.values, r.fill_value), (r.method, r.bounds_error)),
    lambda aux, children: _rebuild(aux, children))


def _rebuild(aux, children):
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj
