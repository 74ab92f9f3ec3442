"""Tests that compare with jax bit for bit where the last bit depends on XLA's codegen.

The suite compiles unoptimised (tests/conftest.py) for speed; such a test is marked
`default_codegen_only` (it skips in the suite's process) and one test per file re-runs the
marked tests in a child pytest with XLA's default flags (`run_with_default_codegen`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

UNOPTIMISED = "xla_backend_optimization_level=0" in os.environ.get("XLA_FLAGS", "")

default_codegen_only = pytest.mark.skipif(
    UNOPTIMISED, reason="bit-exact against jax: re-run with XLA's default codegen by this "
                        "file's run_with_default_codegen test")

needs_unoptimised_parent = pytest.mark.skipif(
    not UNOPTIMISED, reason="the bit-exact tests ran in this process")


def run_with_default_codegen(*test_ids: str) -> None:
    """Run `test_ids` (pytest node ids) in a child pytest with XLA's default codegen and
    assert that they all passed, none skipped."""
    env = {**os.environ, "YAX_TEST_DEFAULT_XLA_FLAGS": "0", "XLA_FLAGS": " ".join(
        f for f in os.environ.get("XLA_FLAGS", "").split() if "optimization_level" not in f)}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *test_ids],
        env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert "skipped" not in run.stdout.splitlines()[-1], run.stdout[-2000:]
