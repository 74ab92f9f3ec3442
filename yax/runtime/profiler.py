"""The XLA profiler of the runtime yax runs on (jaxlib's, reached through jax's profiler API).

yax executes on jax's XLA client (yax/runtime/backend.py), so jax's profiler sees yax's
compilations and executions: a trace started here records them, and device memory profiles
describe yax's live buffers. yax.profiler re-exports these names.
"""

from __future__ import annotations

import jax.profiler as _profiler

StepTraceAnnotation = _profiler.StepTraceAnnotation
TraceAnnotation = _profiler.TraceAnnotation
annotate_function = _profiler.annotate_function
device_memory_profile = _profiler.device_memory_profile
register_subprocess = _profiler.register_subprocess
save_device_memory_profile = _profiler.save_device_memory_profile
start_server = _profiler.start_server
start_trace = _profiler.start_trace
stop_trace = _profiler.stop_trace
trace = _profiler.trace


def get_profiled_instructions_proto(tensorboard_dir: str) -> bytes:
    """The serialized ProfiledInstructionsProto of a trace directory (`<log_dir>/plugin/
    profile/<run>/`), read by jaxlib's profiler; non-empty only for NVIDIA GPU traces."""
    from jax.experimental import profiler as _experimental  # only this function needs it
    return _experimental.get_profiled_instructions_proto(tensorboard_dir)
