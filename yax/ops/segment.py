"""Segment reductions: combine the rows of `data` that share a segment id.

    out[s] = reduce(data[i] for i in range(len(data)) if segment_ids[i] == s)

for s in range(num_segments); a segment no row belongs to holds the identity (0 for sum, 1 for
prod, -inf / the dtype's minimum / False for max, +inf / maximum / True for min), as in jax.ops.
Each is one scatter of `data` into an identity-filled result, so derivatives and vmap come from
the scatter primitives' rules. Ids outside [0, num_segments) are dropped (mode None, as jax) or
clamped (mode='clip').

`bucket_size` reduces the rows in groups of that many first (one scatter into
(num_buckets, num_segments, ...)), then reduces over the buckets, as jax does for accuracy.
"""

from __future__ import annotations

import operator

import numpy as np

from yax import errors, lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.core.trace import Tracer

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


_lowest, _highest = dtypes.lowest, dtypes.highest  # identities of max and min


# name: (scatter, reduction over buckets, identity)
_KINDS = {
    "segment_sum": (lax.scatter_add, lax.reduce_sum, lambda dt: 0),
    "segment_prod": (lax.scatter_mul, lax.reduce_prod, lambda dt: 1),
    "segment_max": (lax.scatter_max, lax.reduce_max, _lowest),
    "segment_min": (lax.scatter_min, lax.reduce_min, _highest),
}


def _num_segments(name: str, segment_ids, num_segments) -> int:
    """A static, non-negative segment count; by default max(segment_ids) + 1 (concrete ids)."""
    if num_segments is None:
        ids = segment_ids.to_concrete_or_none() if isinstance(segment_ids, Tracer) else \
            segment_ids
        if ids is None:
            raise errors.ConcretizationError(
                f"{name}: num_segments=None sizes the result from max(segment_ids) + 1, but "
                f"segment_ids ({segment_ids.aval.str_short()}) is traced (inside jit, vmap or "
                f"another transformation), so its value is not known. Pass num_segments=<int> "
                f"(a static Python int), e.g. `{name}(data, ids, num_segments=10)`.")
        ids = np.asarray(ids)
        if ids.size == 0:
            raise errors.ShapeError(f"{name}: segment_ids is empty, so num_segments cannot be "
                                    f"inferred; pass num_segments=<int>")
        return int(ids.max()) + 1
    try:
        n = operator.index(num_segments)
    except TypeError:
        if isinstance(num_segments, Tracer):
            raise errors.ConcretizationError(
                f"{name}: num_segments must be a static Python int (it sets the result's "
                f"shape), got a traced value; mark it static under jit") from None
        n = operator.index(np.asarray(num_segments).item())
    if n < 0:
        raise errors.ShapeError(f"{name}: num_segments={n} must be non-negative")
    return n


def _check(name: str, data, segment_ids) -> None:
    if not (dtypes.is_int(segment_ids.dtype)):
        raise errors.DTypeError(f"{name}: segment_ids must be integers, got "
                                f"{segment_ids.dtype} of shape {tuple(segment_ids.shape)}")
    if data.ndim == 0 or segment_ids.ndim != 1 or segment_ids.shape[0] != data.shape[0]:
        raise errors.ShapeError(
            f"{name}: segment_ids must be one id per row of data, i.e. of shape "
            f"({data.shape[0] if data.ndim else '?'},); got data of shape {tuple(data.shape)} "
            f"and segment_ids of shape {tuple(segment_ids.shape)}")


def _segment(name: str, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
             bucket_size, mode):
    scatter, reduce, identity = _KINDS[name]
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    _check(name, data, segment_ids)
    n = _num_segments(name, segment_ids, num_segments)
    rows, rest = data.shape[0], tuple(data.shape[1:])
    window_dims = tuple(range(1, data.ndim))
    fill = np.asarray(identity(data.dtype), data.dtype)
    flags = dict(indices_are_sorted=bool(indices_are_sorted),
                 unique_indices=bool(unique_indices), mode=mode)
    if bucket_size is None:
        out = lax.broadcast_in_dim(fill, (n,) + rest, ())
        dn = lax.ScatterDimensionNumbers(window_dims, (0,), (0,))
        return scatter(out, lax.expand_dims(segment_ids, (1,)), data, dn, **flags)
    bucket_size = operator.index(bucket_size)
    if bucket_size < 1:
        raise errors.ShapeError(f"{name}: bucket_size={bucket_size} must be >= 1")
    buckets = -(-rows // bucket_size)
    out = lax.broadcast_in_dim(fill, (buckets, n) + rest, ())
    bucket_ids = lax.div(lax.iota(segment_ids.dtype, rows),
                         np.asarray(bucket_size, segment_ids.dtype))
    indices = lax.concatenate([lax.expand_dims(bucket_ids, (1,)),
                               lax.expand_dims(segment_ids, (1,))], 1)
    dn = lax.ScatterDimensionNumbers(window_dims, (0, 1), (0, 1))
    flags["unique_indices"] = False  # ids repeat across buckets
    return reduce(scatter(out, indices, data, dn, **flags), (0,))


def _public(name: str, what: str):
    def op(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
           bucket_size=None, mode=None):
        return _segment(name, data, segment_ids, num_segments, indices_are_sorted,
                        unique_indices, bucket_size, mode)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""The {what} of the rows of `data` in each segment (jax.ops.{name}).

    Args:
      data: an array whose leading axis holds the rows.
      segment_ids: int array of shape (data.shape[0],): the segment of each row.
      num_segments: the number of segments (a static int); inferred as max(segment_ids) + 1
        when None, which needs concrete ids (under jit, pass it).
      indices_are_sorted, unique_indices: promises passed on to the scatter.
      bucket_size: reduce rows in groups of this size first (for accuracy), or None.
      mode: 'drop'/None (ids out of range are dropped), 'clip' or 'promise_in_bounds'.
    Returns:
      An array of shape (num_segments,) + data.shape[1:]; empty segments hold the identity.

    Example: `{name}(jnp.array([1., 2., 3.]), jnp.array([0, 0, 1]), num_segments=2)`.
    """
    return op


segment_sum = _public("segment_sum", "sum")
segment_prod = _public("segment_prod", "product")
segment_max = _public("segment_max", "maximum")
segment_min = _public("segment_min", "minimum")
