"""Multi-process runs on jaxlib's distributed runtime (the only module that talks to it).

Process 0 hosts the coordination service; every process (0 included) connects a client to it,
then builds its CPU client with that client (which shares the device topology: every process
sees all devices, and drives its own) and gloo collectives over TCP (which carry cross-process
all-reduces and the like). The CPU client is installed in `yax.runtime.backend`, so all of yax
(compile, transfer, devices) uses it.
"""

from __future__ import annotations

import atexit
import dataclasses

from jaxlib import _jax

from yax.errors import DistributedError
from yax.runtime import backend

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclasses.dataclass
class _Run:
    address: str
    num_processes: int
    process_id: int
    service: object
    client: object
    cpu_client: object


_run: _Run | None = None


def is_initialized() -> bool:
    return _run is not None


def initialize(coordinator_address: str, num_processes: int, process_id: int,
               local_device_ids=None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100) -> None:
    """Join (process 0: host) the coordination service and install the distributed CPU client."""
    global _run
    if _run is not None:
        raise DistributedError("yax.distributed.initialize was already called in this process; "
                               "call yax.distributed.shutdown() first to start another run")
    if backend.has_client():
        raise DistributedError(
            "yax.distributed.initialize must run before any yax computation or device query "
            "(a backend already exists in this process); call it first thing in the program")
    host, port = _split_address(coordinator_address)
    _check_ids(num_processes, process_id)
    num_devices = _local_device_count(local_device_ids)
    timeout = max(1, int(initialization_timeout))
    service = None
    if process_id == 0:
        try:
            service = _jax.get_distributed_runtime_service(
                f"[::]:{port}", num_processes, cluster_register_timeout=timeout,
                shutdown_timeout=timeout, heartbeat_timeout=int(heartbeat_timeout_seconds))
        except Exception as e:
            raise DistributedError(f"process 0 could not start the coordination service on port "
                                   f"{port} ({e}); is the port in use?") from e
    client = _jax.get_distributed_runtime_client(
        f"{host}:{port}", process_id, init_timeout=timeout, shutdown_timeout=timeout,
        heartbeat_timeout=int(heartbeat_timeout_seconds), shutdown_on_destruction=False,
        missed_heartbeat_callback=_peer_failed)
    try:
        client.connect()
        collectives = _jax.make_gloo_tcp_collectives(
            client, hostname="127.0.0.1" if host in _LOOPBACK else None)
        cpu_client = _jax.get_tfrt_cpu_client(
            asynchronous=True, distributed_client=client, node_id=process_id,
            num_nodes=num_processes, collectives=collectives, num_devices=num_devices)
    except Exception as e:
        _close(client, service)
        raise DistributedError(
            f"process {process_id} of {num_processes} could not join the run coordinated at "
            f"{coordinator_address} within {timeout} s ({_reason(e)}). Start all "
            f"{num_processes} processes with the same coordinator_address (process 0 hosts it) "
            f"and distinct process_id values, or raise initialization_timeout") from e
    backend.install_client("cpu", cpu_client)
    _run = _Run(coordinator_address, num_processes, process_id, service, client, cpu_client)


def shutdown() -> None:
    """Leave the run: disconnect from the coordinator (process 0 stops the service).

    The other processes wait for this one at the shutdown barrier, up to the timeout given to
    initialize. Does nothing when no run is active.
    """
    global _run
    run, _run = _run, None
    if run is None:
        return
    backend.install_client("cpu", None)
    _close(run.client, run.service)


def _peer_failed(*_) -> None:
    """Called by the coordination agent on a fatal error (a peer missing or dead).

    Without a callback the agent aborts the process. jaxlib cannot hand the status to Python
    (converting it raises std::bad_cast inside the agent), which during `connect` surfaces as a
    Python exception: a missing peer becomes a DistributedError after the timeout. A peer that
    dies later still ends this process (after heartbeat_timeout_seconds; the coordination
    service's log names the dead task), so no process hangs.
    """


def _close(client, service) -> None:
    try:
        client.shutdown()
    except Exception:  # the service is gone or a peer failed: leaving anyway
        pass
    if service is not None:
        service.shutdown()


atexit.register(shutdown)


def _split_address(address: str) -> tuple[str, int]:
    host, sep, port = str(address).rpartition(":")
    if not sep or not host or not port.isdigit():
        raise DistributedError(f"coordinator_address {address!r} is not 'host:port' "
                               f"(e.g. '127.0.0.1:12345')")
    return host, int(port)


def _check_ids(num_processes, process_id) -> None:
    if int(num_processes) < 1 or not 0 <= int(process_id) < int(num_processes):
        raise DistributedError(f"process_id must be in [0, num_processes); got process_id="
                               f"{process_id} with num_processes={num_processes}")


def _local_device_count(local_device_ids):
    """CPU devices are interchangeable: local_device_ids only sets how many this process has."""
    if local_device_ids is None:
        return None
    ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
    if sorted(ids) != list(range(len(ids))):
        raise DistributedError(f"local_device_ids {ids} must be 0..n-1 on CPU (the CPU devices "
                               f"of a process are numbered from 0)")
    return len(ids)


def _reason(e: Exception) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "bad_cast" in text:  # the agent's fatal-error path (see _peer_failed)
        return "not all processes arrived, or the coordinator could not be reached"
    return text
