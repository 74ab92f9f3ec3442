"""`yax.experimental.shard_map.shard_map`: where older JAX code imports it from."""

from yax.transforms.shard_map import shard_map  # noqa: F401

__all__ = ["shard_map"]
