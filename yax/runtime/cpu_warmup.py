"""Warming XLA:CPU's matmul kernels in the background, once per process.

XLA:CPU hands most f32 dots to YNNPACK, but runs the others (a transposed left operand: every
weight gradient `x.T @ g`) through oneDNN's sgemm, and oneDNN generates its sgemm machine code
(with Xbyak) the first time any sgemm runs in the process: about 25 ms on the 2-core machines
here, inside the first execution of the first such program, whether it was just compiled or
loaded from the persistent cache (jax pays the same). That code is process-wide and does not
depend on which program asked for it, so a background thread runs one tiny transposed dot on a
private CPU client of its own (jax's backend is not started: its options, such as
num_cpu_devices, may still be set after `import yax`). A program that reaches its first sgemm
later finds the kernels made; one that reaches it during the warm-up waits for the same
one-time generation (oneDNN guards it with `std::call_once`). Nothing runs twice and no result
changes.

Only with a persistent compilation cache (YAX_COMPILATION_CACHE_DIR), whose point is a fast
first call: at import, if the cache holds the warm-up program (loading it takes under a
millisecond, and the thread is done long before `import yax` is); otherwise after the
process's first XLA compile for the CPU, when the thread compiles it (about 30 ms of
background CPU) and writes it to the cache for the next processes. Not at import without the
program: XLA's compiler leaves threads behind that a forked child lacks, so a process that
compiled cannot fork safely, and `import yax` must leave a fork as safe as `import jax` does.
Not without a cache either: there it would only race the process's own first sgemm (compiling
the warm-up program takes longer than a compiled program takes to reach its first dot). Its
cache lookups do not count in `compilation_cache.stats`.

`YAX_CPU_WARMUP=0` turns it off; it is skipped when YAX_PLATFORM names a platform other than
the CPU. A fork and the interpreter's exit wait for it first: a child must not inherit a
generation in progress (it would wait for it forever), nor the private client's threads (a fork
also collects the client, which only the cyclic GC frees), and C++ statics must not be
destroyed under it.
"""

from __future__ import annotations

import atexit
import gc
import os
import threading
import weakref

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

# what the warm-up did: started, finished (done), loaded or compiled its program, failed
state = {"started": False, "done": False, "loaded": False, "compiled": False, "error": None}
_threads: list = []  # warm-up threads started, in order (at most one of each kind)
_lock = threading.Lock()
_compile_started = [False]
# The private client sits in a reference cycle with its devices, so it (and its thread pools)
# lives until the cyclic GC runs; a child forked meanwhile hangs in XLA. A fork collects it.
_clients: list = []  # weak references to the private clients made


def wanted() -> bool:
    """Whether this process warms the kernels: not turned off, and the CPU may be the backend."""
    return wanted_for(os.environ.get("YAX_CPU_WARMUP", ""), config.platform)


def wanted_for(setting: str, platform: str | None) -> bool:
    """`wanted()` for a YAX_CPU_WARMUP value and a requested platform (None: not chosen)."""
    if setting.strip().lower() in ("0", "false", "no", "off"):
        return False
    return (platform or "cpu").lower().split(",")[0] == "cpu"


def start_at_import() -> None:
    """Run the warm-up program in the background if the persistent cache holds it.

    Only a cached program: compiling starts XLA's compiler threads, after which a forked child
    cannot use XLA (`import yax` followed by a fork must keep working, as with jax)."""
    if compilation_cache.cache_dir() is not None:
        _start(may_compile=False)


def after_compile() -> None:
    """Called after each XLA compile for the CPU: with a persistent cache, the first one also
    compiles the warm-up program in the background (unless the import-time warm-up did the
    work) and writes it to the cache for the next processes. After, not before: on 2 cores
    the two compiles slow each other. The process has compiled, so this adds no new hazard
    to a later fork."""
    if not (state["done"] or _compile_started[0]) and compilation_cache.cache_dir() is not None:
        _start(may_compile=True)


def _start(may_compile: bool) -> None:
    with _lock:
        if (_compile_started[0] if may_compile else _threads) or not wanted():
            return
        _compile_started[0] |= may_compile
        previous = _threads[-1] if _threads else None
        thread = threading.Thread(target=_warm, args=(may_compile, previous), daemon=True,
                                  name="yax-cpu-warmup")
        if not _threads:
            atexit.register(wait)
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(before=_before_fork)
        _threads.append(thread)
        state["started"] = True
    thread.start()


def wait(timeout: float = _WAIT_S) -> None:
    """Block until the warm-up threads (if any) have finished."""
    for thread in list(_threads):
        if thread is not threading.current_thread():
            thread.join(timeout)


def _before_fork() -> None:
    wait()
    if any(ref() is not None for ref in _clients):
        gc.collect()  # tens of milliseconds, once: a fork costs more


def _warm(may_compile: bool, previous) -> None:
    if previous is not None:
        previous.join()  # the import-time one: it may have done the work already
    if state["done"]:
        return
    try:
        client = _xc.make_cpu_client()
        _clients.append(weakref.ref(client))
        exe = _load_or_compile(client, may_compile)
        if exe is None:
            return
        for out in exe.execute([]):
            out.block_until_ready()
        state["done"] = True
    except Exception as e:  # an optimisation only: a failure leaves the first sgemm to pay it
        state["error"] = f"{type(e).__name__}: {e}"


def _load_or_compile(client, may_compile: bool):
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
            except Exception:  # stale: compiled and written over below (when allowed)
                pass
    if not may_compile:
        return None
    exe = client.compile_and_load(_PROGRAM, devices, options)
    state["compiled"] = True
    if key is not None:
        compilation_cache.store(key, exe.serialize(), counted=False)
    return exe
