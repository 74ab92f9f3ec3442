"""Warming XLA:CPU's matmul kernels in the background, once per process.

XLA:CPU hands most f32 dots to YNNPACK, but runs the others (a transposed left operand: every
weight gradient `x.T @ g`) through oneDNN's sgemm, and oneDNN generates its sgemm machine code
(with Xbyak) the first time any sgemm runs in the process: about 25 ms on the 2-core machines
here, inside the first execution of the first such program, whether it was just compiled or
loaded from the persistent cache (jax pays the same). That code is process-wide and does not
depend on which program asked for it, so when yax's runtime is imported a background thread
runs one tiny transposed dot on a private CPU client of its own (jax's backend is not started:
its options, such as num_cpu_devices, may still be set after `import yax`). A program that
reaches its first sgemm later finds the kernels made; one that reaches it during the warm-up
waits for the same one-time generation (oneDNN guards it with `std::call_once`). Nothing runs
twice and no result changes.

With a persistent compilation cache configured (YAX_COMPILATION_CACHE_DIR), the warm-up
program itself is kept there, so only the first process compiles it (about 30 ms of background
CPU); the others load it (under a millisecond). Those lookups do not count in the cache's
`stats`.

`YAX_CPU_WARMUP=0` turns it off; it is skipped when YAX_PLATFORM names a platform other than
the CPU. A fork and the interpreter's exit wait for it first: a child must not inherit a
generation in progress (it would wait for it forever), and C++ statics must not be destroyed
under it.
"""

from __future__ import annotations

import atexit
import os
import threading

from jaxlib import xla_client as _xc

from yax.config import config
from yax.runtime import compilation_cache

# The smallest program whose dot XLA:CPU keeps for oneDNN: contracting dimension 0 on the left.
# Its operand is an iota, which XLA does not constant-fold, so the dot runs at execution.
_PROGRAM = """
func.func public @main() -> tensor<8x8xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<8x8xf32>
  %1 = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0]
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""

# How long a fork or the exit waits for an unfinished warm-up (it takes tens of milliseconds).
_WAIT_S = 30.0

# what the warm-up did: started, finished (done), loaded its program from the cache, failed
state = {"started": False, "done": False, "loaded": False, "error": None}
_thread: list = []  # [the warm-up thread], once started


def wanted() -> bool:
    """Whether this process warms the kernels: not turned off, and the CPU may be the backend."""
    if os.environ.get("YAX_CPU_WARMUP", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    platform = (config.platform or "cpu").lower().split(",")[0]
    return platform == "cpu"


def start() -> None:
    """Start the warm-up thread (once per process; nothing when not `wanted()`)."""
    if _thread or not wanted():
        return
    thread = threading.Thread(target=_warm, name="yax-cpu-warmup", daemon=True)
    _thread.append(thread)
    state["started"] = True
    atexit.register(wait)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=wait)
    thread.start()


def wait(timeout: float = _WAIT_S) -> None:
    """Block until the warm-up (if any) has finished."""
    if _thread and _thread[0] is not threading.current_thread():
        _thread[0].join(timeout)


def _warm() -> None:
    try:
        client = _xc.make_cpu_client()
        for out in _load_or_compile(client).execute([]):
            out.block_until_ready()
        state["done"] = True
    except Exception as e:  # an optimisation only: a failure leaves the first sgemm to pay it
        state["error"] = f"{type(e).__name__}: {e}"


def _load_or_compile(client):
    device = client.devices()[0]
    devices = _xc.DeviceList((device,))
    options = _xc.CompileOptions()
    key = None
    if compilation_cache.cache_dir() is not None:
        key = compilation_cache.text_key(b"yax cpu_warmup\0" + _PROGRAM.encode(), platform="cpu",
                                         client=client, device=device, compile_options=options)
        payload = compilation_cache.load(key, counted=False)
        if payload is not None:
            try:
                exe = client.deserialize_executable(payload, devices, options)
                state["loaded"] = True
                return exe
            except Exception:  # stale or foreign: compiled and written over below
                pass
    exe = client.compile_and_load(_PROGRAM, devices, options)
    if key is not None:
        compilation_cache.store(key, exe.serialize(), counted=False)
    return exe
