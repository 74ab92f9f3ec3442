"""The background warm-up of XLA:CPU's matmul kernels (yax/runtime/cpu_warmup.py): it finishes
during `import yax` without starting jax's backend (whose options may still be set), keeps its
program in the persistent cache without counting in its stats, changes no result bit, can be
turned off, and a fork right after it started does not inherit it half done."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from yax.runtime import cpu_warmup

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Prints what the warm-up did, whether jax's backend had started by then, and a digest of the
# weight gradients of a small MLP: the dots XLA:CPU runs through oneDNN (`x.T @ g`).
_SCRIPT = r"""
import hashlib, json
import numpy as np
import yax, yax.numpy as ynp
from yax.runtime import backend, compilation_cache, cpu_warmup

cpu_warmup.wait()  # the import-time warm-up (if the cache holds its program)
report = {"jax_started": backend.has_client(), "at_import": dict(cpu_warmup.state)}
yax.config.update("num_cpu_devices", 2)  # refused once jax's backend has started
report["devices"] = len(yax.devices())

def loss(params, x):
    h = x
    for w in params:
        h = ynp.tanh(h @ w)
    return (h ** 2).mean()

rng = np.random.default_rng(0)
sizes = [(300, 200), (200, 130), (130, 7)]
params = [rng.normal(size=s).astype(np.float32) / 10 for s in sizes]
x = rng.normal(size=(33, 300)).astype(np.float32)
grads = yax.jit(yax.grad(loss))(params, x)
report["digest"] = hashlib.sha256(b"".join(np.asarray(g).tobytes() for g in grads)).hexdigest()
cpu_warmup.wait()  # the one the first compile started, if any
report.update(cpu_warmup.state, stats=dict(compilation_cache.stats))
print(json.dumps(report))
"""


def _run(tmp_path, warmup="1", cache="cache"):
    env = dict(os.environ, PYTHONPATH=_ROOT, YAX_PLATFORM="cpu", YAX_CPU_WARMUP=warmup,
               YAX_COMPILATION_CACHE_DIR=str(tmp_path / cache) if cache else "")
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert not out.stderr.strip(), out.stderr  # the warm-up prints nothing
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_warmup_loads_at_import_or_compiles_after_the_first_compile(tmp_path):
    first = _run(tmp_path)  # an empty cache: nothing at import, compiled with the program
    assert not first["at_import"]["done"] and not first["jax_started"]
    assert first["devices"] == 2
    assert first["done"] and first["compiled"] and not first["loaded"]
    assert first["error"] is None
    second = _run(tmp_path)  # the next process finds it in the cache, at import
    assert second["at_import"]["done"] and second["at_import"]["loaded"]
    assert not second["at_import"]["compiled"] and not second["jax_started"]
    assert second["devices"] == 2
    off = _run(tmp_path, warmup="0", cache="other")
    assert not off["started"] and not off["done"]
    no_cache = _run(tmp_path, cache=None)  # a feature of the cache: nothing without one
    assert not no_cache["started"] and no_cache["digest"] == first["digest"]
    # the cache's stats count the user's lookups and writes only: the same with or without
    assert first["stats"] == off["stats"] and first["stats"]["writes"] >= 1
    # oneDNN made its kernels in the warm-up thread or in the program itself: the same bits
    assert first["digest"] == second["digest"] == off["digest"]


def test_a_damaged_warmup_entry_is_compiled_over(tmp_path):
    first = _run(tmp_path)
    for entry in (tmp_path / "cache").glob("*.yaxexe"):  # the warm-up's and the program's
        entry.write_bytes(entry.read_bytes()[:-16])
    again = _run(tmp_path)
    assert not again["at_import"]["done"]  # refused at import...
    assert again["done"] and again["compiled"] and again["error"] is None  # ...compiled after
    assert again["digest"] == first["digest"]
    assert _run(tmp_path)["at_import"]["loaded"]  # written over whole


# A cache holding the warm-up program, a process that imports yax with the warm-up off, then
# starts it by hand and forks at once: the fork must wait for it and collect its private client
# (a child inheriting a kernel generation in progress, or the client's threads, hangs in XLA).
_FORK = r"""
import os
import yax, yax.numpy as ynp
from yax.runtime import cpu_warmup
os.environ["YAX_CPU_WARMUP"] = "1"
cpu_warmup.start_at_import()
pid = os.fork()
if pid == 0:
    x = ynp.ones((64, 48))
    print("child", float(yax.jit(lambda x: x.T @ x)(x).sum()), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("parent", status, cpu_warmup.state["done"], cpu_warmup.state["loaded"], flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_fork_waits_for_the_warmup(tmp_path):
    assert _run(tmp_path)["compiled"]  # the cache now holds the warm-up program
    env = dict(os.environ, PYTHONPATH=_ROOT, YAX_PLATFORM="cpu", YAX_CPU_WARMUP="0",
               YAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", _FORK], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "child 147456.0" in out.stdout and "parent 0 True True" in out.stdout, out.stdout


def test_warmup_is_skipped_when_off_or_for_another_platform():
    assert cpu_warmup.wanted_for("", None) and cpu_warmup.wanted_for("1", "cpu")
    assert cpu_warmup.wanted_for("", "CPU")
    assert not cpu_warmup.wanted_for("", "gpu") and not cpu_warmup.wanted_for("", "cuda")
    assert not cpu_warmup.wanted_for("0", None) and not cpu_warmup.wanted_for(" Off", "cpu")
