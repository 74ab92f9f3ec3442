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
        current = (current + " " + flag).strip()
    # LLVM codegen without optimisation: a clean-clone run 1080 -> 784 s (yax's compiles 867 ->
    # 527 s). Bit-exactness against jax depends on codegen: such tests run in a child process
    # with default flags (`default_codegen_only` below)
    if UNOPTIMISED_CODEGEN.split("=")[0] not in current:
        current = (current + " " + UNOPTIMISED_CODEGEN).strip()
    os.environ["XLA_FLAGS"] = current


UNOPTIMISED_CODEGEN = "--xla_backend_optimization_level=0"


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


# --- balance under `pytest -n 2 --dist loadfile`: the slowest files first ---
# xdist hands out whole files in collection order (with --no-loadscope-reorder; its default
# orders by the number of tests, which sends a file of few slow tests, say the wheel builds,
# last, where it alone forms the critical path while the other worker idles). Checked in
# xdist 3.8.0's scheduler/loadscope.py (LoadFileScheduling inherits it): each worker starts with
# two files popped from the front of the queue, then gets the next one when it has at most 2
# tests left. Longest files first, each next file to whichever worker frees up, ends the two
# workers within about the length of the last (smallest) files. Costs: tests/file_costs.json,
# seconds per file measured on a cold cache (regenerate with
# YAX_TEST_TIMES_JSON=tests/file_costs.json and -n 1, see docs/performance.md); a file not in
# it is estimated from its number of tests.
_COSTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "file_costs.json")
_SECONDS_PER_UNKNOWN_TEST = 0.3


def _file_costs() -> dict:
    import json
    try:
        with open(_COSTS_FILE) as f:
            raw = json.load(f)
    except (OSError, ValueError):
        return {}
    return {path: float(v["seconds"] if isinstance(v, dict) else v) for path, v in raw.items()}


def pytest_collection_modifyitems(session, config, items):
    if os.environ.get("YAX_TEST_ORDER", "cost") != "cost":
        return
    costs = _file_costs()
    by_file: dict = {}
    for item in items:  # files keep their own order of tests; only the files are reordered
        by_file.setdefault(item.nodeid.split("::")[0], []).append(item)

    def cost(path):
        known = costs.get(path)
        return known if known is not None else _SECONDS_PER_UNKNOWN_TEST * len(by_file[path])
    # sorted is stable and the keys are deterministic, so every xdist worker collects the
    # same order (xdist aborts otherwise)
    order = sorted(by_file, key=lambda path: (-cost(path), path))
    items[:] = [item for path in order for item in by_file[path]]


# --- where the suite's time goes: per test file, the time of its tests (setup, call and
# teardown) and how much of it was XLA compiling (yax's programs and the jax oracle's), printed
# at the end. Compile counts are the steady measure on a shared machine: wall time is noisy.
_file_seconds: dict = {}
_file_compiles: dict = {}  # path -> [yax compiles, yax compile s, jax compile s]
_compile_clock = [0, 0.0, 0.0]


def _time_compiles() -> None:
    """Count and time every XLA compile (not disk-cache loads) of yax and of the jax oracle."""
    import time

    from yax.runtime import executable
    compile_or_load = executable._compile_or_load

    def timed(*args, **kwargs):
        before, start = executable.stats["compiles"], time.perf_counter()
        try:
            return compile_or_load(*args, **kwargs)
        finally:
            if executable.stats["compiles"] != before:
                _compile_clock[0] += 1
                _compile_clock[1] += time.perf_counter() - start
    executable._compile_or_load = timed
    try:
        import jax.monitoring

        def on_duration(event, seconds, **_):
            if event == "/jax/core/compile/backend_compile_duration":
                _compile_clock[2] += seconds
        jax.monitoring.register_event_duration_secs_listener(on_duration)
    except Exception:  # a jax without monitoring: its compile time is just not shown
        pass


_time_compiles()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The compiles of a test (setup to teardown) ride on its teardown report, so that under
    xdist they reach the controller, which prints the summary."""
    if call.when == "setup":
        item._yax_compiles_before = list(_compile_clock)
    outcome = yield
    if call.when == "teardown":
        before = getattr(item, "_yax_compiles_before", _compile_clock)
        outcome.get_result().user_properties.append(
            ("yax_compiles", [now - then for now, then in zip(_compile_clock, before)]))


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    _file_seconds[path] = _file_seconds.get(path, 0.0) + report.duration
    for name, value in getattr(report, "user_properties", ()):
        if name == "yax_compiles":
            row = _file_compiles.setdefault(path, [0, 0.0, 0.0])
            for i, v in enumerate(value):
                row[i] += v


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
    compiles = [sum(row[i] for row in _file_compiles.values()) for i in range(3)]
    terminalreporter.write_line(
        f"test time by file (total {total:.0f} s across workers; {compiles[0]} yax compiles "
        f"took {compiles[1]:.0f} s, the jax oracle's {compiles[2]:.0f} s):")
    terminalreporter.write_line("  seconds  yax compiles (s)  jax compile s  file")
    for path, seconds in sorted(_file_seconds.items(), key=lambda kv: -kv[1])[:15]:
        n, yax_s, jax_s = _file_compiles.get(path, (0, 0.0, 0.0))
        terminalreporter.write_line(
            f"  {seconds:7.1f}  {n:5d} ({yax_s:6.1f})  {jax_s:13.1f}  {path}")
    out = os.environ.get("YAX_TEST_TIMES_JSON")
    if out:  # every file's figures, for comparing two runs (scripts or by hand)
        import json
        with open(out, "w") as f:
            json.dump({path: {"seconds": round(seconds, 3),
                              "yax_compiles": _file_compiles.get(path, [0])[0],
                              "yax_compile_s": round(_file_compiles.get(path, [0, 0.0])[1], 3),
                              "jax_compile_s": round(
                                  _file_compiles.get(path, [0, 0.0, 0.0])[2], 3)}
                       for path, seconds in sorted(_file_seconds.items())}, f, indent=1)


@pytest.fixture(autouse=True)
def _alias_mode_stays_off():
    """Alias mode (`yax.alias_jax()`) lasts for the process and swaps the real jax out of
    `sys.modules`, breaking every later test that uses jax as its oracle: a test that turns it
    on must do so in a child process. Fail the test that did it, not the innocent ones after."""
    yield
    if _alias.is_aliased():
        pytest.fail("this test turned on alias mode in the test process; run it in a child")
