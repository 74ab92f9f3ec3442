"""yax.experimental.profiler (`jax.experimental.profiler`): instruction costs from a profile."""

from yax.runtime.profiler import get_profiled_instructions_proto

__all__ = ["get_profiled_instructions_proto"]
