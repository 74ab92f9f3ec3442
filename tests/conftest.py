"""Shared fixtures: x64 mode toggled for one test (and restored), and the oracle kept in step."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("YAX_PLATFORM", "cpu")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
# The persistent compilation cache makes a second run of the suite skip most XLA compiles.
os.environ.setdefault("YAX_COMPILATION_CACHE_DIR",
                      os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   ".yax_cache"))
# ...but every test still traces: tests check tracing (counts, errors, side effects), and a warm
# cache skipping it would change what they check (tests/test_persistent_cache_tracing.py turns
# it on in its own processes).
os.environ.setdefault("YAX_COMPILATION_CACHE_SKIP_TRACING", "0")



def _faster_test_compiles() -> None:
    """Most of the suite's time is XLA compiling thousands of tiny programs. On jaxlib 0.10,
    XLA's CPU fusion emitters (an MLIR pipeline) about double the cost of each such compile
    (52 -> 25 ms for a one-op program; tests/test_ad_reductions_dot.py 88 -> 55 s cold), so
    the suite turns them off. Newer XLAs reject the flag as unknown (a fatal error), so it is
    set only on the versions known to have it. Set before any XLA client starts (the xdist
    workers inherit it)."""
    from importlib import metadata
    flag = "--xla_cpu_use_fusion_emitters=false"
    try:
        version = metadata.version("jaxlib")
    except metadata.PackageNotFoundError:
        return
    current = os.environ.get("XLA_FLAGS", "")
    if version.startswith("0.10.") and flag.split("=")[0] not in current:
        os.environ["XLA_FLAGS"] = (current + " " + flag).strip()


if os.environ.get("YAX_TEST_DEFAULT_XLA_FLAGS", "1") == "1":
    _faster_test_compiles()

import yax  # noqa: E402
from yax import _alias  # noqa: E402


def _cache_jax_oracle_compiles() -> None:
    """The jax oracle's compiles go to a persistent cache of jax's own beside yax's (every
    entry, however quick to compile), so a second run of the suite skips those too."""
    import jax
    directory = os.environ.get("YAX_TEST_JAX_CACHE_DIR") or os.path.join(
        os.environ["YAX_COMPILATION_CACHE_DIR"], "jax")
    try:
        jax.config.update("jax_compilation_cache_dir", directory)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    except Exception:  # a jax without these options: the oracle just compiles
        pass


_cache_jax_oracle_compiles()


@pytest.fixture
def x64():
    """Run the test with 64-bit types enabled in yax (and in the jax oracle), then restore."""
    import jax
    old, old_jax = yax.config.enable_x64, jax.config.jax_enable_x64
    yax.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        yax.config.update("enable_x64", old)
        jax.config.update("jax_enable_x64", old_jax)


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request):
    """The float dtype of the test: float32 with x64 off, float64 with x64 on (restored after).
    A test module's own `dtype` fixture or parametrization takes precedence."""
    old = yax.config.enable_x64
    yax.config.update("enable_x64", request.param == np.float64)
    yield request.param
    yax.config.update("enable_x64", old)


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64_mode(request):
    """Run the test twice, with 64-bit mode off and on (yax only), restoring the flag after."""
    old = yax.config.enable_x64
    yax.config.update("enable_x64", request.param)
    yield request.param
    yax.config.update("enable_x64", old)


@pytest.fixture(params=["cpp", "python"])
def jit_dispatch(request):
    """Run the test under both jit call paths: jaxlib's C++ dispatch (where this jaxlib offers
    it) and yax's Python path. Jitted functions created inside the test take the path chosen."""
    from yax.runtime import dispatch
    if request.param == "cpp" and not dispatch.AVAILABLE:
        pytest.skip("this jaxlib has no C++ dispatch API that yax can drive")
    old = yax.config.jit_cpp_dispatch
    yax.config.update("jit_cpp_dispatch", request.param == "cpp")
    yield request.param
    yax.config.update("jit_cpp_dispatch", old)


# --- where the suite's time goes: total call+setup time per test file, printed at the end ---
_file_seconds: dict = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    _file_seconds[path] = _file_seconds.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if not _file_seconds:
        return
    if "tests/test_primitive_second_order.py" in _file_seconds:
        # the coverage of the per-primitive second-order table, also under xdist (whose
        # controller never imported the test module)
        from tests.test_primitive_second_order import coverage
        covered, total, missing = coverage()
        terminalreporter.write_line(f"second-order table: {covered}/{total} primitives"
                                    + (f" (missing: {', '.join(missing)})" if missing else ""))
    total = sum(_file_seconds.values())
    terminalreporter.write_line(f"test time by file (total {total:.0f} s across workers):")
    for path, seconds in sorted(_file_seconds.items(), key=lambda kv: -kv[1])[:15]:
        terminalreporter.write_line(f"  {seconds:7.1f} s  {path}")


@pytest.fixture(autouse=True)
def _alias_mode_stays_off():
    """Alias mode (`yax.alias_jax()`) lasts for the process and swaps the real jax out of
    `sys.modules`, breaking every later test that uses jax as its oracle: a test that turns it
    on must do so in a child process. Fail the test that did it, not the innocent ones after."""
    yield
    if _alias.is_aliased():
        pytest.fail("this test turned on alias mode in the test process; run it in a child")
