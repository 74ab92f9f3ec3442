"""A warm jitted call entering jaxlib's C++ dispatch object with no yax Python in between: the
transformation mirror that keeps traced calls off that path (also across threads and errors),
the functions that keep yax's Python wrapper, sharded programs on the C++ path (8 CPU devices
in a child Python), and the Python-path drain of jaxlib's released-object queue."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

import yax
import yax.numpy as ynp
from tests.multidevice import run_on_devices
from yax.runtime import array as array_mod
from yax.runtime import dispatch
from yax.transforms import jit_cpp

needs_cpp = pytest.mark.skipif(not (dispatch.AVAILABLE and yax.config.jit_cpp_dispatch),
                               reason="no C++ dispatch in this jaxlib, or switched off")


def arr(x, dtype=np.float32):
    return yax.device_put(np.asarray(x, dtype))


@pytest.fixture
def count_misses(monkeypatch):
    misses = []
    original = jit_cpp.cpp_miss

    def counting(fn, args, kwargs):
        misses.append(fn.name)
        return original(fn, args, kwargs)
    monkeypatch.setattr(jit_cpp, "cpp_miss", counting)
    return misses


@needs_cpp
def test_a_plain_jitted_function_calls_the_cpp_object_itself(count_misses):
    f = yax.jit(lambda a, b: (a + b, a * b))
    assert f.func is f._cpp  # what calling `f` runs, with no Python frame of yax's
    x = arr([1.0, 2.0])
    for _ in range(4):
        out = f(x, x)
    assert len(count_misses) <= 2 and f.trace_count == 1
    np.testing.assert_allclose(out[1], [1.0, 4.0])
    assert type(out[0]) is yax.Array and out[0].aval == x.aval


@needs_cpp
def test_functions_whose_errors_yax_rewords_keep_the_python_wrapper():
    donating = yax.jit(lambda a: a * 2.0, donate_argnums=0)
    static = yax.jit(lambda a, n: a * n, static_argnums=1)
    for f in (donating, static):
        assert f.func == f._call_python
    x = arr([1.0])
    donating(x)
    with pytest.raises(yax.errors.YaxError, match="donated"):
        donating(x)
    with pytest.raises(yax.errors.YaxError):
        static(arr([1.0]), [2])  # an unhashable static argument: yax's own error


@needs_cpp
def test_a_warm_signature_under_a_transformation_is_staged(count_misses):
    f = yax.jit(lambda a: ynp.sin(a) * 2.0)
    w = arr([1.0, 2.0])
    f(w), f(w)  # warm: the C++ cache serves this signature
    before = len(count_misses)
    jaxpr = yax.make_jaxpr(lambda x: f(w) * x)(arr([3.0, 4.0]))
    assert "= jit[" in str(jaxpr)  # staged, not run eagerly by the warm C++ entry
    assert len(count_misses) > before
    g = yax.grad(lambda x: ynp.sum(f(x) * f(w)))(w)
    np.testing.assert_allclose(g, np.cos([1.0, 2.0]) * 2 * np.sin([1.0, 2.0]) * 2, rtol=1e-6)
    assert type(f(w)) is yax.Array  # and eager again afterwards


@needs_cpp
def test_the_mirror_follows_use_trace_and_survives_errors():
    seen = []

    def traced(x):
        seen.append(dispatch._transforming.value)
        return x + 1.0

    def failing(x):
        seen.append(dispatch._transforming.value)
        raise ZeroDivisionError
    yax.make_jaxpr(traced)(1.0)
    assert dispatch._transforming.value is False
    with pytest.raises(ZeroDivisionError):
        yax.make_jaxpr(failing)(1.0)
    assert dispatch._transforming.value is False  # restored on the way out of the error
    yax.grad(lambda x: yax.jit(traced)(x) * 2.0)(1.0)
    assert seen[:2] == [True, True] and all(v is True for v in seen)
    assert dispatch._transforming.value is False


@needs_cpp
def test_the_mirror_is_per_thread():
    f = yax.jit(lambda a: a + 1.0)
    w = arr([1.0])
    f(w), f(w)
    inside, release, results = threading.Event(), threading.Event(), {}

    def traced(x):
        inside.set()
        release.wait(30)
        return f(w) * x  # this thread is tracing: staged

    def tracing_thread():
        results["jaxpr"] = str(yax.make_jaxpr(traced)(arr([2.0])))

    t = threading.Thread(target=tracing_thread)
    t.start()
    assert inside.wait(30)
    try:
        results["eager"] = f(w)  # this thread is not: the warm C++ entry runs it
    finally:
        release.set()
        t.join(30)
    assert type(results["eager"]) is yax.Array
    np.testing.assert_allclose(results["eager"], [2.0])
    assert "= jit[" in results["jaxpr"]


def test_arrays_start_without_a_host_copy_and_make_one_on_demand():
    x = arr([1.0, 2.0])
    assert x._host_copy() is None
    np.testing.assert_allclose(np.asarray(x), [1.0, 2.0])
    assert x._host_copy() is not None and repr(x) == "Array([1., 2.], dtype=float32)"


def test_python_path_executions_drain_jaxlibs_queue(monkeypatch):
    drained = []
    monkeypatch.setattr(array_mod, "drain", lambda: drained.append(1))
    monkeypatch.setattr(array_mod, "executes", [0])
    x = arr([1.0])
    from yax.interpreters import eager
    # the eager hot paths count on a tick of their own (one C call); start it afresh
    monkeypatch.setattr(eager, "_drain_due", itertools.cycle(
        (False,) * (array_mod.DRAIN_EVERY - 1) + (True,)))
    for _ in range(array_mod.DRAIN_EVERY + 1):
        ynp.sin(x)  # eager ops execute from Python
    assert len(drained) == 1


_SHARDED = r'''
import numpy as np
import yax
from yax.sharding import NamedSharding, P, make_mesh
from yax.transforms import jit_cpp

misses = []
original = jit_cpp.cpp_miss
def counting(fn, args, kwargs):
    misses.append(fn.name)
    return original(fn, args, kwargs)
jit_cpp.cpp_miss = counting

mesh = make_mesh((8,), ("data",))
S, R = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
x = np.arange(64, dtype=np.float32)
sx, sy, rx, ux = (yax.device_put(x, S), yax.device_put(x, S), yax.device_put(x, R),
                  yax.device_put(x))
for sharded in (True, False):
    f = (yax.jit(lambda a, b: a + b, in_shardings=(S, S)) if sharded else
         yax.jit(lambda a, b: a + b))  # shardings from committed arguments: the Python path
    misses.clear()
    for _ in range(5):
        out = f(sx, sy)
    assert len(misses) <= 2 or not sharded, misses  # warm calls: jaxlib's C++ path
    assert out.sharding == S and out.committed and out.aval == sx.aval
    np.testing.assert_allclose(out, 2 * x)
    # placed otherwise: each call still right (copied by the Python path where needed)
    for args in ((rx, sy), (ux, sy), (sx, rx), (ux, ux), (sx, sy)):
        for _ in range(2):
            np.testing.assert_allclose(f(*args), 2 * x)
    assert "= jit[" in str(yax.make_jaxpr(lambda a: f(a, sy))(sx))
    # a donated (deleted) sharded argument: yax's error, where jaxlib 0.10.2 would crash
    gone = yax.device_put(x, S)
    yax.jit(lambda a: a * 2.0, donate_argnums=0)(gone)
    assert gone.is_deleted()
    try:
        f(gone, sy)
        raise AssertionError("no error for a deleted argument")
    except yax.errors.YaxError as e:
        assert "donated" in str(e)
print("OK")
'''


@needs_cpp
def test_sharded_programs_take_the_cpp_path_on_8_devices():
    assert "OK" in run_on_devices(_SHARDED, n=8, timeout=240)
