"""yax.scipy.ndimage: `map_coordinates`, interpolation of an array at fractional coordinates
(orders 0 and 1, as jax.scipy.ndimage).

Each output value combines the input at the 2^d corners around its coordinate (1 corner for
order 0), weighted by the products of per-axis linear weights; out-of-range indices are folded
back by `mode` (or, for 'constant', contribute `cval`).
"""

from __future__ import annotations

import itertools

import yax.numpy as jnp
from yax.numpy._promote import promote_arrays_inexact

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _fold(index, size: int, mode: str):
    """An index brought into [0, size) by `mode` (constant: clipped, validity tracked apart)."""
    if mode in ("constant", "nearest"):
        return jnp.clip(index, 0, size - 1)
    if mode == "wrap":
        return jnp.remainder(index, size)
    if mode == "mirror":  # ... 2 1 | 0 1 2 ... n-1 | n-2 ...: period 2(n-1)
        if size == 1:
            return jnp.zeros_like(index)
        period = 2 * (size - 1)
        folded = jnp.remainder(jnp.abs(index), period)
        return jnp.where(folded >= size, period - folded, folded)
    # reflect: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...: period 2n
    period = 2 * size
    folded = jnp.remainder(index, period)
    return jnp.where(folded >= size, period - 1 - folded, folded)


def _axis_terms(coordinate, size: int, order: int, mode: str):
    """[(index, weight, valid)] for one axis: one term (order 0) or two (order 1)."""
    if order == 0:
        nearest = jnp.floor(coordinate + 0.5)
        raw = [(nearest, jnp.ones_like(coordinate))]
    else:
        lower = jnp.floor(coordinate)
        frac = coordinate - lower
        raw = [(lower, 1 - frac), (lower + 1, frac)]
    terms = []
    for index, weight in raw:
        index = index.astype(jnp.int32)
        valid = (index >= 0) & (index < size)
        terms.append((_fold(index, size, mode), weight, valid))
    return terms


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):
    """The values of `input` at `coordinates` (a sequence of input.ndim arrays of one shape),
    by spline interpolation of `order` 0 (nearest) or 1 (linear).

    Args:
      input: the array to sample. coordinates: per-axis fractional indices.
      order: 0 or 1 (higher orders are not supported, as in JAX).
      mode: 'constant' (outside the array: `cval`), 'nearest', 'wrap', 'mirror' or 'reflect'.
      cval: the value outside the array in 'constant' mode.
    Returns:
      An array of the coordinates' shape and input's dtype.
    """
    input = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    if len(coordinates) != input.ndim:
        raise ValueError(f"map_coordinates: {input.ndim} coordinate arrays are needed (one per "
                         f"input axis), got {len(coordinates)}")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates: order {order} is not supported; use 0 or 1")
    if mode not in _MODES:
        raise ValueError(f"map_coordinates: mode {mode!r} is not one of {_MODES}")
    (value_input,) = promote_arrays_inexact("map_coordinates", input)
    coordinates = [c.astype(value_input.dtype) if not jnp.issubdtype(c.dtype, jnp.inexact)
                   else c for c in coordinates]
    per_axis = [_axis_terms(c, size, order, mode)
                for c, size in zip(coordinates, input.shape, strict=True)]
    total = None
    for corner in itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in corner)
        weight = corner[0][1]
        for _, w, _ in corner[1:]:
            weight = weight * w
        value = value_input[indices]
        if mode == "constant":
            valid = corner[0][2]
            for _, _, v in corner[1:]:
                valid = valid & v
            value = jnp.where(valid, value, cval)
        contribution = weight.astype(value.dtype) * value
        total = contribution if total is None else total + contribution
    if jnp.issubdtype(input.dtype, jnp.integer):
        return jnp.round(total).astype(input.dtype)
    return total.astype(input.dtype)
