"""The persistent compilation cache: reuse across caches cleared, corrupt entries, concurrent
writers, the size limit, unwritable directories, keys that separate x64 and platforms, and
executables with host callbacks never stored."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import yax
import yax.numpy as ynp
from yax.runtime import backend, compilation_cache, executable


@pytest.fixture
def cache_dir(tmp_path):
    old = yax.config.compilation_cache_dir
    yax.config.update("compilation_cache_dir", str(tmp_path / "cache"))
    compilation_cache.clear_memory_state()
    yield tmp_path / "cache"
    yax.config.update("compilation_cache_dir", old)
    compilation_cache.clear_memory_state()


def _entries(directory):
    return sorted(p for p in directory.iterdir() if p.suffix == ".yaxexe") if directory.exists() \
        else []


def _step(w, x):
    return ynp.tanh(x @ w).sum() * 3.0 + 0.25  # a program no other test compiles


def test_second_compile_loads_from_disk_and_corrupt_entries_are_recompiled(cache_dir):
    w, x = ynp.ones((3, 2)), ynp.ones((4, 3))
    f = yax.jit(_step)
    before = set(_entries(cache_dir))
    want = np.asarray(f(w, x))
    (entry,) = set(_entries(cache_dir)) - before
    loads, compiles = executable.stats["cache_loads"], executable.stats["compiles"]
    yax.clear_caches()
    np.testing.assert_allclose(f(w, x), want)
    assert executable.stats["cache_loads"] == loads + 1
    assert executable.stats["compiles"] == compiles
    for damage in (lambda b: b[: len(b) // 2], lambda b: b[:-8] + b"\0" * 8, lambda b: b""):
        entry.write_bytes(damage(entry.read_bytes()))
        yax.clear_caches()
        np.testing.assert_allclose(f(w, x), want)  # ignored, recompiled, rewritten
        assert compilation_cache.load(entry.stem) is not None


def test_an_entry_copied_under_another_name_is_recompiled_not_run(cache_dir):
    skip = yax.config.compilation_cache_skip_tracing
    yax.config.update("compilation_cache_skip_tracing", False)  # XLA's entries only
    try:
        w, x = ynp.ones((3, 2)), ynp.ones((4, 3))
        f = yax.jit(lambda w, x: ynp.tanh(x @ w).sum() * 7.0 - 0.5)
        g = yax.jit(lambda w, x: ynp.tanh(x @ w).sum() * 11.0 + 0.5)
        f(w, x)
        (entry_f,) = _entries(cache_dir)
        want = np.asarray(g(w, x))
        (entry_g,) = set(_entries(cache_dir)) - {entry_f}
        entry_g.write_bytes(entry_f.read_bytes())  # a whole, valid entry: of another program
        yax.clear_caches()
        compiles = executable.stats["compiles"]
        np.testing.assert_array_equal(g(w, x), want)
        assert executable.stats["compiles"] == compiles + 1  # refused, recompiled
        assert compilation_cache.load(entry_g.stem) is not None  # and written over
    finally:
        yax.config.update("compilation_cache_skip_tracing", skip)


def test_concurrent_writers_and_readers_see_whole_entries(cache_dir):
    payloads = [bytes([i]) * (50_000 + i) for i in range(4)]
    bad, stop = [], threading.Event()

    def writer(p):
        for _ in range(20):
            compilation_cache.store("k" * 64, p)

    def reader():
        while not stop.is_set():
            got = compilation_cache.load("k" * 64)
            if got is not None and got not in payloads:
                bad.append(len(got))
    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
    r = threading.Thread(target=reader)
    r.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    r.join()
    assert not bad
    assert compilation_cache.load("k" * 64) in payloads
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".tmp-")]


def test_size_limit_evicts_least_recently_used(cache_dir):
    old = yax.config.compilation_cache_max_bytes
    yax.config.update("compilation_cache_max_bytes", 100_000)
    try:
        for i in range(3):
            compilation_cache.store(f"{i:064d}", b"x" * 30_000)
        os.utime(cache_dir / f"{0:064d}.yaxexe", (1, 1))  # make entry 0 the oldest...
        assert compilation_cache.load(f"{0:064d}") is not None  # ...then use it: now newest
        for i in range(3, 6):
            compilation_cache.store(f"{i:064d}", b"x" * 30_000)
        total = sum(p.stat().st_size for p in _entries(cache_dir))
        assert total <= 100_000
        assert compilation_cache.load(f"{1:064d}") is None  # least recently used went first
        assert compilation_cache.load(f"{5:064d}") is not None
    finally:
        yax.config.update("compilation_cache_max_bytes", old)


def test_unwritable_directory_warns_and_keeps_working(tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directory should be")
    old = yax.config.compilation_cache_dir
    yax.config.update("compilation_cache_dir", str(blocker / "cache"))
    try:
        with pytest.warns(RuntimeWarning, match="could not write"):
            out = yax.jit(lambda a: a * 7.0 - 1.0)(ynp.ones(5))
        np.testing.assert_allclose(out, np.full(5, 6.0))
    finally:
        yax.config.update("compilation_cache_dir", old)


def test_keys_separate_x64_and_platform(cache_dir):
    from jaxlib import xla_client

    mod = yax.jit(lambda a: a + 1).lower(ynp.ones(2)).as_text()
    from jaxlib.mlir import ir

    from yax.interpreters import mlir
    with mlir.make_context() as ctx:
        module = ir.Module.parse(mod, ctx)
        kw = dict(client=backend.client(), device=backend.default_device(),
                  compile_options=xla_client.CompileOptions())
        k32 = compilation_cache.entry_key(module, platform="cpu", **kw)
        yax.config.update("enable_x64", True)
        try:
            k64 = compilation_cache.entry_key(module, platform="cpu", **kw)
        finally:
            yax.config.update("enable_x64", False)
        kgpu = compilation_cache.entry_key(module, platform="gpu", **kw)
    assert len({k32, k64, kgpu}) == 3


@pytest.mark.filterwarnings("ignore:.*64-bit:UserWarning")  # int64 input narrowed with x64 off
def test_x64_programs_from_the_cache_keep_their_dtypes(cache_dir, x64):
    def f(a):
        return a * 2 + 1
    for enabled in (True, False, True, False):
        yax.config.update("enable_x64", enabled)
        yax.clear_caches()
        out = yax.jit(f)(np.arange(3))
        assert out.dtype == (np.int64 if enabled else np.int32)
        np.testing.assert_array_equal(out, [1, 3, 5])


def test_executables_with_host_callbacks_are_never_stored(cache_dir):
    from jaxlib.mlir import ir

    from yax.interpreters import mlir
    text = yax.jit(lambda a: a - 3.0).lower(ynp.ones(2)).as_text()
    with mlir.make_context() as ctx:
        module = ir.Module.parse(text, ctx)
        before = _entries(cache_dir)
        exe = executable.compile_module(module, [], [], host_callbacks=[lambda: ()])
    assert _entries(cache_dir) == before and exe.host_callbacks


_WORKER = """
import numpy as np, yax, yax.numpy as ynp
f = yax.jit(lambda w, x: ynp.tanh(x @ w).sum(axis=0) * 5.0 - 2.0)
out = f(ynp.ones((3, 2)), ynp.ones((4, 3)))
np.testing.assert_allclose(out, np.tanh(3.0) * 4 * 5.0 - 2.0, rtol=1e-5)
print("ok")
"""


def test_two_processes_share_one_directory(tmp_path):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, YAX_COMPILATION_CACHE_DIR=str(tmp_path), PYTHONPATH=root)
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all(o.strip().endswith("ok") and not e for o, e in outs)  # and nothing on stderr
    entries = _entries(tmp_path)
    assert entries and not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    for p in entries:
        assert compilation_cache._check(p.read_bytes(), p.stem) is not None
