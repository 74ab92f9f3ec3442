"""Running multi-device checks in a child Python with N forced CPU devices.

XLA reads `--xla_force_host_platform_device_count` once, when the client starts, so tests that
need several devices run a script in a subprocess; the rest of the suite keeps one device.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_on_devices(code: str, n: int = 8, timeout: float = 240, env: dict | None = None) -> str:
    """Run `code` with `n` CPU devices; returns its stdout, failing the test if it fails."""
    child_env = dict(os.environ)
    child_env["XLA_FLAGS"] = (child_env.get("XLA_FLAGS", "") +
                              f" --xla_force_host_platform_device_count={n}").strip()
    child_env["PYTHONPATH"] = ROOT + os.pathsep + child_env.get("PYTHONPATH", "")
    child_env.setdefault("YAX_PLATFORM", "cpu")
    child_env.setdefault("JAX_PLATFORMS", "cpu")
    child_env.update(env or {})
    try:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=child_env,
                              cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the {n}-device child did not finish in {timeout} s:\n{e.stdout}\n{e.stderr}")
    if proc.returncode != 0:
        pytest.fail(f"the {n}-device child failed (exit {proc.returncode}):\n"
                    f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout
