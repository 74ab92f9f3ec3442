"""yax.ops: segment reductions (jax.ops): `segment_sum`, `segment_max`, `segment_min`,
`segment_prod`."""

from yax.ops.segment import segment_max, segment_min, segment_prod, segment_sum  # noqa: F401

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
