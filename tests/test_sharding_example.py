"""examples/data_parallel.py: data-parallel and data+model-parallel training on 8 CPU devices
give the single-device parameters (the example asserts it and sets its own device count)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.multidevice import ROOT


def test_data_parallel_example_matches_one_device():
    env = dict(os.environ, PYTHONPATH=ROOT, YAX_PLATFORM="cpu", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "data_parallel.py"),
                           "12"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "8 devices" in proc.stdout
    diff = float(proc.stdout.split("run: ")[1].split()[0])
    assert diff < 1e-4
