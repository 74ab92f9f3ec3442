"""yax.profiler (`jax.profiler`): traces and memory profiles of yax programs.

    with yax.profiler.trace("/tmp/trace"):       # view in TensorBoard / Perfetto
        step(params, batch).block_until_ready()
    with yax.profiler.TraceAnnotation("data"):  # a named span in the trace
        ...

These are the XLA runtime's profiler (yax/runtime/profiler.py): yax's programs run on that
runtime, so its traces show their compilations and executions.
"""

from yax.runtime.profiler import (
    StepTraceAnnotation,
    TraceAnnotation,
    annotate_function,
    device_memory_profile,
    register_subprocess,
    save_device_memory_profile,
    start_server,
    start_trace,
    stop_trace,
    trace,
)

__all__ = ["StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_trace", "trace"]
