"""The persistent cache across processes skips tracing: an unchanged function's first call in a
new process loads its program without tracing; a changed function, closure value or global does
not; corrupt, truncated and foreign entries are recompiled, never run; concurrent writers are
safe. Processes are real subprocesses with a temporary cache directory."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import yax
import yax.numpy as ynp
from yax.compile import fingerprint
from yax.runtime import compilation_cache

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A program run as a script: prints `trace_count program_hits result...`. SCALE and the global
# table are edited by tests to change the function's code or what it reads.
_SCRIPT = '''
import sys
import numpy as np
import yax, yax.numpy as ynp
from yax.transforms import jit_disk

TABLE = np.arange(4, dtype=np.float32) * {table}

def helper(h):
    return ynp.tanh(h) * {scale}

@yax.jit
def f(w, x):
    return {{"out": helper(x @ w).sum(axis=0) + TABLE[: w.shape[1]], "n": x.shape[0]}}

w, x = ynp.ones((3, 2)), ynp.ones((4, 3)) * 0.5
out = f(w, x)
if "grad" in sys.argv:  # a transformation of the loaded function re-traces it
    g = yax.grad(lambda w: f(w, x)["out"].sum())(w)
    print("grad", " ".join(f"{{v:.6f}}" for v in np.asarray(g).ravel()))
print(f.trace_count, jit_disk.stats["hits"], jit_disk.stats["rejected"],
      " ".join(f"{{v:.6f}}" for v in np.asarray(out["out"])), out["n"])
'''


def _write(tmp_path, scale="3.0", table="1.0", name="prog.py"):
    path = tmp_path / name
    path.write_text(_SCRIPT.format(scale=scale, table=table))
    return path


def _env(cache):
    return dict(os.environ, YAX_COMPILATION_CACHE_DIR=str(cache), PYTHONPATH=_ROOT,
                YAX_COMPILATION_CACHE_SKIP_TRACING="1")


def _run(script, cache, *args):
    res = subprocess.run([sys.executable, str(script), *args], env=_env(cache),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split("\n")
    last = [ln for ln in lines if ln.strip()][-1].split()
    return {"traces": int(last[0]), "hits": int(last[1]), "rejected": int(last[2]),
            "out": [float(v) for v in last[3:-1]], "n": int(last[-1]),
            "grad": next((ln.split()[1:] for ln in lines if ln.startswith("grad")), None)}


def _expected(scale=3.0, table=1.0):
    return np.tanh(1.5) * scale * 4 + np.arange(2) * table


def _program_entries(cache):
    """The program entries (the XLA-level entries sit beside them)."""
    return [p for p in cache.iterdir() if p.suffix == ".yaxexe" and b"YAXPROG" in
            p.read_bytes()[:128]]


def test_second_process_skips_tracing_and_changes_are_seen(tmp_path):
    cache = tmp_path / "cache"
    script = _write(tmp_path)
    cold = _run(script, cache)
    assert (cold["traces"], cold["hits"]) == (1, 0)
    np.testing.assert_allclose(cold["out"], _expected(), rtol=1e-5)
    warm = _run(script, cache, "grad")
    assert (warm["traces"], warm["hits"]) == (1, 1)  # loaded; the grad alone traced f
    assert warm["out"] == cold["out"] and warm["n"] == 4  # the non-array output too
    np.testing.assert_allclose([float(v) for v in warm["grad"]],
                               np.full(6, 4 * 0.5 * 3.0 * (1 - np.tanh(1.5) ** 2)), rtol=1e-5)
    # a called function's code and a global array's contents are part of the key
    for scale, table in (("5.0", "1.0"), ("3.0", "2.0")):
        changed = _run(_write(tmp_path, scale=scale, table=table), cache)
        assert (changed["traces"], changed["hits"]) == (1, 0)
        np.testing.assert_allclose(changed["out"], _expected(float(scale), float(table)),
                                   rtol=1e-5)


def test_corrupt_truncated_and_foreign_entries_are_recompiled(tmp_path):
    cache = tmp_path / "cache"
    script_a, script_b = _write(tmp_path), _write(tmp_path, scale="7.0", name="b.py")
    _run(script_a, cache)
    (entry_a,) = _program_entries(cache)
    _run(script_b, cache)
    (entry_b,) = set(_program_entries(cache)) - {entry_a}
    good_a = entry_a.read_bytes()
    damages = [lambda b: b[: len(b) // 2], lambda b: b[:-16] + b"\0" * 16, lambda b: b"",
               lambda b: entry_b.read_bytes()]  # a whole, valid entry of another program
    for damage in damages:
        entry_a.write_bytes(damage(good_a))
        got = _run(script_a, cache)
        assert (got["traces"], got["hits"]) == (1, 0)  # traced and compiled again...
        np.testing.assert_allclose(got["out"], _expected(), rtol=1e-5)  # ...never b's program
    assert _run(script_a, cache)["hits"] == 1  # the rewritten entry is good again


def test_foreign_entry_with_valid_checksum_is_rejected(tmp_path):
    """An entry file copied under another key is refused by its file header (the key it was
    written for); another program's payload written under this key passes that check, and the
    program entry's own header (its key) rejects it (counted) rather than run it."""
    cache = tmp_path / "cache"
    script_a, script_b = _write(tmp_path), _write(tmp_path, scale="7.0", name="b.py")
    _run(script_a, cache)
    (entry_a,) = _program_entries(cache)
    _run(script_b, cache)
    (entry_b,) = set(_program_entries(cache)) - {entry_a}
    good_a = entry_a.read_bytes()
    entry_a.write_bytes(entry_b.read_bytes())
    got = _run(script_a, cache)
    assert (got["traces"], got["hits"], got["rejected"]) == (1, 0, 0)  # refused as a file
    np.testing.assert_allclose(got["out"], _expected(), rtol=1e-5)
    entry_a.write_bytes(good_a)
    old = yax.config.compilation_cache_dir
    yax.config.update("compilation_cache_dir", str(cache))
    try:
        payload_b = compilation_cache.load(entry_b.stem)
        compilation_cache.store(entry_a.stem, payload_b)  # b's program under a's key
    finally:
        yax.config.update("compilation_cache_dir", old)
    got = _run(script_a, cache)
    assert (got["traces"], got["hits"], got["rejected"]) == (1, 0, 1)
    np.testing.assert_allclose(got["out"], _expected(), rtol=1e-5)


def test_concurrent_processes_writing_one_entry(tmp_path):
    cache = tmp_path / "cache"
    script = _write(tmp_path, scale="2.0")
    procs = [subprocess.Popen([sys.executable, str(script)], env=_env(cache),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    for out, _ in outs:
        np.testing.assert_allclose([float(v) for v in out.split()[3:-1]], _expected(2.0),
                                   rtol=1e-5)
    assert len(_program_entries(cache)) == 1
    assert not [p for p in cache.iterdir() if p.name.startswith(".tmp-")]
    warm = _run(script, cache)
    assert (warm["traces"], warm["hits"]) == (0, 1)
    np.testing.assert_allclose(warm["out"], _expected(2.0), rtol=1e-5)


# --- the fingerprint itself (in this process) ------------------------------------------------

def _make(k):
    def f(x):
        return x * k
    return f


def _writes_global(x):
    global _LAST
    _LAST = x
    return x


_COUNT = [0]


def _reads_list(x):
    _COUNT[0] += 1
    return x


def test_fingerprint_follows_code_closures_and_refuses_what_it_cannot_vouch_for():
    d = fingerprint.function_digest
    assert d(_make(2.0)) == d(_make(2.0)) and d(_make(2.0)) != d(_make(3.0))
    assert d(lambda x: x + 1) != d(lambda x: x + 2)
    big = np.zeros(fingerprint.MAX_ARRAY_BYTES // 4 + 1, np.float32)
    assert d(_make(np.ones(3))) != d(_make(np.zeros(3)))
    assert d(_make(ynp.ones(3))) == d(_make(ynp.ones(3)))
    for refused in (_writes_global, _reads_list, _make(big), _make([1, 2]), _make(object())):
        assert d(refused) is None
    assert d(ynp.sin) is not None and d(yax.grad(lambda x: x * 2.0)) is not None


def _prints(x):
    print("tracing")
    return x * 2.0


def _reads_clock(x):
    import time
    return x * time.time()


def _draws_numpy_random(x):
    return x + np.random.normal()


def _pure_with_builtins(x):
    return x * len((1, 2)) + sum(range(3))


def test_functions_that_act_while_tracing_are_never_skipped():
    """A hit would not run them, and under jax they run once per process: print, the clock and
    Python random numbers refuse; pure builtins (len, range) do not."""
    d = fingerprint.function_digest
    for refused in (_prints, _reads_clock, _draws_numpy_random):
        assert d(refused) is None, refused
    assert d(_pure_with_builtins) is not None


@pytest.mark.parametrize("value", [3, "a", (1, 2.5), np.float32(2), None])
def test_static_values_digest_by_value(value):
    assert fingerprint.value_digest(value) == fingerprint.value_digest(value)
    assert fingerprint.value_digest(value) != fingerprint.value_digest((value,))


def test_user_module_attributes_read_are_part_of_the_digest(tmp_path, monkeypatch):
    """`settings.LR` set at run time changes the digest though the module's source does not."""
    (tmp_path / "fp_settings_mod.py").write_text("LR = 0.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fp_settings_mod as settings

    def f(x):
        return x * settings.LR
    before = fingerprint.function_digest(f)
    monkeypatch.setattr(settings, "LR", 0.2)
    assert before is not None and fingerprint.function_digest(f) != before
