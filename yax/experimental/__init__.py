"""`yax.experimental`: io_callback and checkify (as `jax.experimental`)."""

from yax.experimental import checkify, multihost_utils, profiler  # noqa: F401
from yax.experimental.callbacks import io_callback

__all__ = ["io_callback", "checkify"]
