"""Multi-process runs: 2 child Pythons with 2 CPU devices each form one 4-device system."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

from tests.multidevice import ROOT

# One script per process: joins the run, builds a global array from process-local rows and runs
# a sharded program whose reductions cross processes; prints what the parent checks.
CHILD = textwrap.dedent("""
    import os
    import sys
    import numpy as np
    import yax
    import yax.numpy as jnp
    from yax.runtime import backend
    from yax.sharding import NamedSharding, P, make_mesh
    from yax.transforms.process_arrays import make_array_from_process_local_data

    pid, port, dying = int(sys.argv[1]), sys.argv[2], len(sys.argv) > 3
    yax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=pid,
                               initialization_timeout=20,
                               heartbeat_timeout_seconds=3 if dying else 100)
    if dying and pid == 1:
        os._exit(3)  # a peer that dies mid-run: process 0 must not wait for it forever
    assert yax.distributed.is_initialized()
    devs = yax.devices()
    assert len(devs) == 4 and sorted(d.process_index for d in devs) == [0, 0, 1, 1], devs
    assert len(backend.local_devices()) == 2
    assert all(d.process_index == pid for d in backend.local_devices())
    print("PROC", backend.process_index(), backend.process_count(), flush=True)

    mesh = make_mesh((2, 2), ("proc", "dev"))
    full = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    rows = NamedSharding(mesh, P(("proc", "dev")))  # 2 rows per device, 4 per process
    x = make_array_from_process_local_data(rows, full[4 * pid:4 * pid + 4])
    assert x.shape == (8, 3), x.shape
    # Columns split over processes only: each process's 4 columns are replicated over its 2
    # devices; global_shape given explicitly.
    w_full = np.linspace(-1, 1, 3 * 8, dtype=np.float32).reshape(3, 8)
    cols = NamedSharding(mesh, P(None, "proc"))
    w = make_array_from_process_local_data(cols, w_full[:, 4 * pid:4 * pid + 4], (3, 8))

    from yax.runtime import transfer
    from yax.sharding.named import ShardingError
    shards = transfer.shards_of(x._buf)  # this process's 2 devices, 2 rows each
    assert [np.asarray(b).tolist() for b in shards] == [
        full[4 * pid + 2 * k:4 * pid + 2 * k + 2].tolist() for k in range(2)]
    rep_x = make_array_from_process_local_data(NamedSharding(mesh, P()), full)
    assert rep_x.shape == (8, 3)
    assert all(np.array_equal(np.asarray(b), full) for b in transfer.shards_of(rep_x._buf))
    try:
        make_array_from_process_local_data(rows, full[:3], (8, 3))
    except ShardingError as e:
        assert "along dimension 0" in str(e), e
    else:
        raise AssertionError("3 local rows for 4 were accepted")

    def f(a, b):
        return jnp.sin(a).sum(axis=0), (a @ b).sum(), jnp.max(a)

    def run_sharded(fun, args, in_shardings, out_shardings):
        outs = yax.jit(fun, in_shardings=tuple(in_shardings),
                       out_shardings=tuple(out_shardings))(*args)
        for o in outs:  # every local shard, before exit (RUNTIME_NOTES: multi-device pitfall)
            for shard in o.addressable_shards:
                shard.data.block_until_ready()
        return [np.asarray(o.addressable_shards[0].data) for o in outs]

    rep = NamedSharding(mesh, P())
    col_sum, total, top = run_sharded(f, [x, w], [rows, cols], [rep, rep, rep])
    np.set_printoptions(precision=6, floatmode="fixed")
    print("COLSUM", " ".join(f"{v:.6f}" for v in col_sum), flush=True)
    print("TOTAL", f"{float(total):.6f}", "MAX", f"{float(top):.6f}", flush=True)
    yax.distributed.shutdown()
    assert not yax.distributed.is_initialized()
    print("DONE", flush=True)
""")

PEERLESS = textwrap.dedent("""
    import sys, time
    import yax
    import yax.numpy
    from yax.errors import DistributedError
    t = time.time()
    try:
        yax.distributed.initialize(f"127.0.0.1:{sys.argv[1]}", num_processes=2, process_id=0,
                                   initialization_timeout=2)
    except DistributedError as e:
        print("ERROR", str(e).splitlines()[0], flush=True)
        print("WAITED", round(time.time() - t, 1), flush=True)
    else:
        raise SystemExit("initialize returned without the second process")
    # After the failure this process can still start a run: one process with 3 CPU devices.
    yax.distributed.initialize(f"127.0.0.1:{sys.argv[2]}", num_processes=1, process_id=0,
                               local_device_ids=[0, 1, 2], initialization_timeout=10)
    print("SOLO", len(yax.devices()), float(yax.numpy.arange(4.0).sum()), flush=True)
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=2").strip()
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["YAX_PLATFORM"] = "cpu"
    env["JAX_PLATFORMS"] = "cpu"
    return env


def _run_processes(script: str, argvs: list, timeout: float, check: bool = True) -> list:
    """Start one child per argv and wait for all within `timeout`; with `check`, the first one
    failing kills the others (they would wait for it until their own timeouts)."""
    with tempfile.TemporaryDirectory() as tmp:
        logs = [tuple(open(os.path.join(tmp, f"{i}.{kind}"), "w+") for kind in ("out", "err"))
                for i in range(len(argvs))]
        procs = [subprocess.Popen([sys.executable, "-c", script, *map(str, argv)], env=_env(),
                                  cwd=ROOT, stdout=out, stderr=err, text=True)
                 for argv, (out, err) in zip(argvs, logs)]
        deadline, timed_out = time.monotonic() + timeout, False
        try:
            while any(p.poll() is None for p in procs):
                failed = check and any(p.poll() not in (None, 0) for p in procs)
                timed_out = time.monotonic() > deadline
                if failed or timed_out:
                    break
                time.sleep(0.05)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        results = []
        for p, (out, err) in zip(procs, logs):
            out.seek(0), err.seek(0)
            results.append((p.returncode, out.read(), err.read()))
            out.close(), err.close()
    if timed_out:
        pytest.fail(f"the processes did not finish within {timeout} s: {results}")
    if not check:
        return results
    # The process that failed by itself first, then those killed because of it.
    for i, (rc, out, err) in sorted(enumerate(results), key=lambda r: r[1][0] == -9):
        if rc != 0:
            pytest.fail(f"process {i} failed (exit {rc}):\n--- stdout\n{out}\n--- stderr\n{err}")
    return [out for _, out, _ in results]


def _field(out: str, key: str) -> list:
    line = next(ln for ln in out.splitlines() if ln.startswith(key + " "))
    return line.split()[1:]


def test_two_processes_form_one_four_device_system():
    port = _free_port()
    outs = _run_processes(CHILD, [(0, port), (1, port)], timeout=90)
    full = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    w = np.linspace(-1, 1, 3 * 8, dtype=np.float32).reshape(3, 8)
    for pid, out in enumerate(outs):
        assert _field(out, "PROC") == [str(pid), "2"]
        col_sum = np.array(_field(out, "COLSUM"), dtype=np.float64)
        np.testing.assert_allclose(col_sum, np.sin(full).sum(axis=0), rtol=1e-5, atol=1e-5)
        total, top = _field(out, "TOTAL")[0], _field(out, "TOTAL")[2]
        np.testing.assert_allclose(float(total), (full @ w).sum(), rtol=1e-5)
        assert float(top) == full.max()
        assert "DONE" in out


def test_missing_peer_times_out_with_a_clear_error():
    out = _run_processes(PEERLESS, [(_free_port(), _free_port())], timeout=40)[0]
    message = _field(out, "ERROR")
    text = " ".join(message)
    assert "process 0 of 2 could not join" in text and "not all processes arrived" in text, text
    assert float(_field(out, "WAITED")[0]) < 30
    assert _field(out, "SOLO") == ["3", "6.0"]


def test_a_peer_dying_mid_run_ends_the_others():
    port = _free_port()
    (rc0, out0, err0), (rc1, _, _) = _run_processes(CHILD, [(0, port, "die"), (1, port, "die")],
                                                    timeout=60, check=False)
    assert rc1 == 3
    assert rc0 != 0 and "DONE" not in out0
    assert "unhealthy" in err0 or "heartbeat" in err0, err0[-2000:]


def test_initialize_after_the_backend_started_is_an_error():
    from yax.errors import DistributedError
    from yax.runtime import backend, distributed

    backend.devices()  # this test process's backend exists from here on
    with pytest.raises(DistributedError, match="must run before"):
        distributed.initialize("127.0.0.1:1", num_processes=2, process_id=0)
    with pytest.raises(DistributedError, match="host:port"):
        distributed._split_address("nowhere")


def test_process_local_data_in_a_single_process_is_the_whole_array():
    from yax.sharding import NamedSharding, P, make_mesh
    from yax.transforms.process_arrays import make_array_from_process_local_data

    data = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    x = make_array_from_process_local_data(NamedSharding(make_mesh((1,), ("x",)), P("x")), data)
    assert x.shape == (4, 2) and x.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(x), data)
    np.testing.assert_array_equal(np.asarray(x * 2), data * 2)
