"""Several processes, one system of devices: `yax.distributed.initialize` and `shutdown`.

Each process of a multi-process run calls `initialize` first thing, with the same coordinator
address and its own `process_id`. Afterwards `yax.devices()` lists the devices of every process,
`yax.local_devices()` this process's own, and a program over a mesh of all devices runs as one
SPMD program in which every process drives its own devices (collectives cross processes).
"""

from __future__ import annotations

from yax.runtime import distributed as _runtime


def initialize(coordinator_address: str, num_processes: int, process_id: int,
               local_device_ids=None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100) -> None:
    """Join a multi-process run (CPU backend: jaxlib's coordination service and gloo collectives).

    Must run before anything else touches devices in this process (else `DistributedError`).
    Process 0 hosts the coordination service at `coordinator_address`; all processes connect.
    If not all `num_processes` processes arrive within `initialization_timeout` seconds, every
    process that did arrive raises `DistributedError` (no process hangs).

    Args:
      coordinator_address: "host:port" of process 0, the same string in every process.
      num_processes: how many processes take part.
      process_id: this process's index, 0 <= process_id < num_processes.
      local_device_ids: on CPU, the ids 0..n-1 of this process's devices (their number sets how
        many CPU devices the process has); default: all, i.e.
        `XLA_FLAGS=--xla_force_host_platform_device_count=N` or 1.
      initialization_timeout: seconds to wait for all processes (also bounds `shutdown`).
      heartbeat_timeout_seconds: a process silent this long counts as dead; the others then
        stop with an error naming it instead of waiting forever.

    Differs from JAX: arguments are not auto-detected from a cluster environment (SLURM, MPI);
    only the CPU backend is supported.

    Example (in each of 2 processes, process_id 0 and 1):
      >>> yax.distributed.initialize("127.0.0.1:12345", num_processes=2, process_id=pid)
      >>> yax.process_count(), len(yax.devices()), len(yax.local_devices())
      (2, 4, 2)
    """
    _runtime.initialize(coordinator_address, num_processes, process_id,
                        local_device_ids=local_device_ids,
                        initialization_timeout=initialization_timeout,
                        heartbeat_timeout_seconds=heartbeat_timeout_seconds)


def shutdown() -> None:
    """Leave the multi-process run (also done at exit); a no-op when none is active."""
    _runtime.shutdown()


def is_initialized() -> bool:
    """Whether `initialize` ran in this process (and `shutdown` did not since)."""
    return _runtime.is_initialized()


__all__ = ["initialize", "shutdown", "is_initialized"]
