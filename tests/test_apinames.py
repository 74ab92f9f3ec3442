"""jax's top-level config context managers and helpers (transfer guards, default matmul
precision, no_tracing, live_arrays, copy_to_host_async, the PRNG/nn options), jax.errors'
classes, and checkify's check_error/debug_check, compared with the installed jax."""

from __future__ import annotations

import gc
import logging

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import checkify as jcheckify
from jaxlib import _jax as jaxlib_ext

import yax
import yax.numpy as jnp
from tests.multidevice import run_on_devices
from yax import _resource_errors, errors
from yax.experimental import checkify

# --- config options and their context managers ----------------------------------------------

NEW_STATES = ["transfer_guard_host_to_device", "transfer_guard_device_to_host",
              "transfer_guard_device_to_device", "default_matmul_precision", "no_tracing",
              "check_tracer_leaks", "softmax_custom_jvp", "threefry_partitionable",
              "debug_key_reuse", "legacy_prng_key", "enable_custom_prng", "default_prng_impl"]


@pytest.mark.parametrize("name", NEW_STATES)
def test_default_values_and_jax_spellings_match_jax(name):
    assert getattr(yax, name).value == getattr(jax, name).value
    assert yax.config.read(f"jax_{name}") == getattr(jax.config, f"jax_{name}")


# options yax implements one value of: another is a clear error (jax accepts it)
ONLY = [("check_tracer_leaks", True), ("softmax_custom_jvp", True),
        ("threefry_partitionable", False), ("debug_key_reuse", True),
        ("legacy_prng_key", "error"), ("enable_custom_prng", True), ("default_prng_impl", "rbg")]


@pytest.mark.parametrize("name,other", ONLY)
def test_unimplemented_values_raise_and_the_implemented_one_works(name, other):
    with getattr(jax, name)(other):  # a value jax has
        assert getattr(jax, name).value == other
    with pytest.raises(NotImplementedError, match=name):
        with getattr(yax, name)(other):
            pass
    assert getattr(yax, name).value == getattr(jax, name).value  # left as it was
    with getattr(yax, name)(getattr(jax, name).value):
        pass


@pytest.mark.parametrize("name,bad", [("transfer_guard_host_to_device", "sometimes"),
                                      ("default_matmul_precision", "fp8"),
                                      ("default_prng_impl", "mersenne"),
                                      ("legacy_prng_key", "maybe")])
def test_values_outside_the_enum_are_value_errors_as_in_jax(name, bad):
    with pytest.raises(ValueError):
        jax.config.update(f"jax_{name}", bad)
    with pytest.raises(ValueError, match=name):
        yax.config.update(f"jax_{name}", bad)


def test_enum_context_managers_need_a_value_as_in_jax():
    with pytest.raises(TypeError):
        with jax.transfer_guard_host_to_device():
            pass
    with pytest.raises(TypeError, match="needs the new value"):
        with yax.transfer_guard_host_to_device():
            pass
    with yax.check_tracer_leaks(False), jax.check_tracer_leaks(False):
        assert yax.check_tracer_leaks.value is jax.check_tracer_leaks.value is False


def test_transfer_guard_sets_every_direction_and_restores():
    with yax.transfer_guard("log"), jax.transfer_guard("log"):
        for d in ("host_to_device", "device_to_host", "device_to_device"):
            assert getattr(yax, f"transfer_guard_{d}").value == "log"
            assert getattr(jax, f"transfer_guard_{d}").value == "log"
    yax.config.update("jax_transfer_guard", "disallow")
    try:
        assert yax.transfer_guard_device_to_device.value == "disallow"
    finally:
        yax.config.update("jax_transfer_guard", None)
    assert yax.transfer_guard_host_to_device.value is None


# --- transfer guards ------------------------------------------------------------------------

_X = np.arange(3, dtype=np.float32)
_yf = yax.jit(lambda a: a * 2)
_jf = jax.jit(lambda a: a * 2)


def _outcome(fn) -> str:
    try:
        fn()
    except (errors.JaxRuntimeError, jax.errors.JaxRuntimeError) as e:
        assert "Disallowed host-to-device transfer" in str(e)
        return "refused"
    return "ok"


H2D = {  # what happens under each level, per transfer: the same in yax and in jax
    "device_put": (lambda lib: lib.device_put(_X)),
    "jit(numpy)": (lambda lib: (_yf if lib is yax else _jf)(_X)),
    "jit(python scalar)": (lambda lib: (_yf if lib is yax else _jf)(2.0)),
    "op(numpy)": (lambda lib: (jnp if lib is yax else jjnp).sin(_X)),
    "asarray(list)": (lambda lib: (jnp if lib is yax else jjnp).asarray([1.0, 2.0])),
}


@pytest.mark.parametrize("level", ["allow", "log", "disallow", "log_explicit",
                                   "disallow_explicit"])
def test_host_to_device_guard_matches_jax(level):
    _yf(_X), _jf(_X)  # compiled outside: inside, only the transfers are at stake
    for name, run in H2D.items():
        with jax.transfer_guard_host_to_device(level):
            want = _outcome(lambda: run(jax))
        with yax.transfer_guard_host_to_device(level):
            got = _outcome(lambda: run(yax))
        assert got == want, (name, level)
    expected = {"allow": "ok", "log": "ok", "log_explicit": "ok", "disallow": "ok",
                "disallow_explicit": "refused"}[level]
    with yax.transfer_guard_host_to_device(level):
        assert _outcome(lambda: yax.device_put(_X)) == expected


def test_a_refused_transfer_names_itself_the_fix_and_the_user_line():
    with yax.transfer_guard("disallow"):
        with pytest.raises(errors.JaxRuntimeError) as info:
            _yf(_X)
    text = str(info.value)
    assert "Disallowed host-to-device transfer: aval=f32[3]" in text
    assert "yax.device_put" in text and "test_apinames.py" in text
    assert isinstance(info.value, RuntimeError)


def test_device_to_host_guard_explicit_and_implicit():
    # jax's CPU arrays alias host memory, so jax reports no device-to-host transfer on CPU;
    # yax checks its own host copies on every platform
    def fresh():
        return yax.device_put(_X) + 1
    for level, implicit, explicit in [("disallow", "refused", "ok"),
                                      ("disallow_explicit", "refused", "refused"),
                                      ("log", "ok", "ok"), ("allow", "ok", "ok")]:
        for what, kind, run in [("np.asarray", implicit, np.asarray),
                                ("float", implicit, float),
                                ("print", implicit, repr), ("tolist", implicit, yax.Array.tolist),
                                ("device_get", explicit, yax.device_get)]:
            a = fresh()
            if what == "float":
                a = a[0]  # the element taken outside: only float() runs under the guard
                run = float
            with yax.transfer_guard_device_to_host(level):
                try:
                    run(a)
                    got = "ok"
                except errors.JaxRuntimeError as e:
                    assert "Disallowed device-to-host transfer" in str(e)
                    got = "refused"
            assert got == kind, (level, what)
    a = fresh()
    np.asarray(a)  # the host copy is kept: reading it again is no transfer
    with yax.transfer_guard("disallow_explicit"):
        np.testing.assert_array_equal(np.asarray(a), _X + 1)


def test_log_levels_log_on_the_yax_logger(caplog):
    a = yax.device_put(_X) + 1
    with caplog.at_level(logging.WARNING, logger="yax"):
        with yax.transfer_guard("log"):
            yax.device_put(_X)     # explicit: not logged
            _yf(_X)                # implicit: logged
            np.asarray(a)
        with yax.transfer_guard("log_explicit"):
            yax.device_put(_X)
    messages = [r.getMessage() for r in caplog.records if r.name == "yax"]
    assert messages == ["host-to-device transfer: aval=f32[3], device=cpu:0",
                        f"device-to-host transfer: aval=f32[3], device={a.device}",
                        "host-to-device transfer: aval=f32[3], device=cpu:0"]


def test_device_to_device_guard_on_two_devices():
    out = run_on_devices("""
        import numpy as np, yax, yax.numpy as jnp
        d = yax.devices()
        y = jnp.ones(3)
        y1 = yax.device_put(y, d[1])
        def t(fn):
            try:
                fn()
                return "ok"
            except yax.errors.JaxRuntimeError as e:
                assert "Disallowed device-to-device transfer" in str(e), e
                return "refused"
        for level in ["disallow", "disallow_explicit"]:
            with yax.transfer_guard_device_to_device(level):
                # host guards are off, so only the device-to-device copy can be refused
                print(level, t(lambda: yax.device_put(y, d[1])), t(lambda: y + y1))
        with yax.transfer_guard("disallow"):
            z = yax.device_put(y, d[1])   # explicit: allowed, and no host transfer counted
            print("moved", z.device == d[1])
        # a jit argument resharded to the in_shardings: implicit (jax refuses it too)
        s = yax.sharding.NamedSharding(yax.make_mesh((2,), ("x",)), yax.P("x"))
        g = yax.jit(lambda a: a * 2, in_shardings=s)
        x = jnp.arange(4.0)
        g(x)
        with yax.transfer_guard_device_to_device("disallow"):
            print("jit reshard", t(lambda: g(x)), t(lambda: g(yax.device_put(x, s))))
    """, n=2)
    assert out.split("\n")[:4] == ["disallow ok refused", "disallow_explicit refused refused",
                                   "moved True", "jit reshard refused ok"]


# --- default_matmul_precision ---------------------------------------------------------------

def _dot_precisions(lowered_text: str) -> list[str]:
    lines = [ln for ln in lowered_text.splitlines() if "dot_general" in ln or "convolution" in ln]
    return [ln.split("precision = ")[1].split("]")[0] + "]" if "precision = " in ln else "none"
            for ln in lines]


@pytest.mark.parametrize("name", ["highest", "float32", "high", "tensorfloat32", "bfloat16",
                                  "default"])
def test_default_matmul_precision_lowers_as_jax(name):
    x = np.ones((2, 3), np.float32)
    w = np.ones((3, 2), np.float32)

    def f(lib):
        return lambda a, b: (lib.numpy.matmul(a, b), lib.lax.conv(
            a[None, None], b[None, None], (1, 1), "VALID"))
    with jax.default_matmul_precision(name):
        want = _dot_precisions(jax.jit(f(jax)).lower(x, w).as_text())
    with yax.default_matmul_precision(name):
        got = _dot_precisions(yax.jit(f(yax)).lower(x, w).as_text())
    assert got == want and len(got) == 2
    # an explicit precision wins over the default, in both
    with jax.default_matmul_precision(name), yax.default_matmul_precision(name):
        want = jax.jit(lambda a, b: jax.lax.dot(a, b, precision="highest")).lower(x, w)
        got = yax.jit(lambda a, b: yax.lax.dot(a, b, precision="highest")).lower(x, w)
        assert _dot_precisions(got.as_text()) == _dot_precisions(want.as_text())


def test_default_matmul_precision_retraces_jit_and_recompiles_eager():
    f = yax.jit(lambda a, b: a @ b)
    x = yax.device_put(np.ones((2, 2), np.float32))
    assert _dot_precisions(f.lower(x, x).as_text()) == ["none"]
    f(x, x)
    before = f.trace_count
    with yax.default_matmul_precision("highest"):
        np.testing.assert_allclose(np.asarray(f(x, x)), np.full((2, 2), 2.0))
        assert f.trace_count == before + 1  # the option is in the jit key
        assert _dot_precisions(f.lower(x, x).as_text()) == ["[HIGHEST, HIGHEST]"]
    x @ x
    stats = yax.runtime.executable.stats
    made = stats["compiles"] + stats["cache_loads"]
    with yax.default_matmul_precision("highest"):
        assert not yax.interpreters.eager._exec_data  # eager executables are lowered anew
        np.testing.assert_allclose(np.asarray(x @ x), np.full((2, 2), 2.0))
        assert stats["compiles"] + stats["cache_loads"] > made
    with pytest.raises(NotImplementedError, match="dot algorithm presets"):
        yax.config.update("jax_default_matmul_precision", "BF16_BF16_F32")
    assert yax.default_matmul_precision.value is None


# --- no_tracing -------------------------------------------------------------------------------

def test_no_tracing_refuses_a_jit_trace_and_lets_cached_calls_run():
    x = yax.device_put(np.ones(3, np.float32))
    f = yax.jit(lambda a: a + 1)
    f(x)
    with yax.no_tracing():
        np.testing.assert_array_equal(np.asarray(f(x)), np.full(3, 2.0))
        g = yax.jit(lambda a: a * 3)
        with pytest.raises(RuntimeError, match="re-tracing function <lambda> at .*"
                                               "for `jit`, but 'no_tracing' is set"):
            g(x)
        with pytest.raises(errors.TracingDisallowedError):
            f(np.ones(4, np.float32))  # a new shape: a new trace
    with jax.no_tracing():  # jax's error, for comparison
        with pytest.raises(RuntimeError, match="for `jit`, but 'no_tracing' is set"):
            jax.jit(lambda a: a * 3)(np.ones(3))
    np.testing.assert_array_equal(np.asarray(g(x)), np.full(3, 3.0))


# --- live_arrays, copy_to_host_async ----------------------------------------------------------

def test_live_arrays_lists_the_arrays_alive():
    a = yax.device_put(np.arange(5.0, dtype=np.float32))
    ids = {id(x) for x in yax.live_arrays()}
    assert id(a) in ids and all(type(x) is yax.Array for x in yax.live_arrays())
    token = id(a)
    del a
    gc.collect()
    assert token not in {id(x) for x in yax.live_arrays()}
    b = jnp.ones(2)
    assert any(x is b for x in yax.live_arrays("cpu"))
    assert yax.live_arrays("gpu") == [] or yax.default_backend() == "gpu"
    jx = jjnp.ones(3)  # jax's answers with its own arrays, of the same kind
    assert any(x is jx for x in jax.live_arrays())


def test_copy_to_host_async_starts_copies_and_returns_the_tree():
    tree = {"a": jnp.arange(3.0), "b": [1, "s"], "c": np.ones(2)}
    out = yax.copy_to_host_async(tree)
    assert out is tree
    jtree = {"a": jjnp.arange(3.0), "b": [1, "s"], "c": np.ones(2)}
    assert jax.copy_to_host_async(jtree) is jtree
    np.testing.assert_array_equal(np.asarray(out["a"]), np.asarray(jtree["a"]))
    with yax.transfer_guard("disallow"):  # explicit, as device_get
        yax.copy_to_host_async(tree)
        with pytest.raises(errors.JaxRuntimeError):
            with yax.transfer_guard_device_to_host("disallow_explicit"):
                yax.copy_to_host_async(yax.device_put(_X) * 1)


# --- jax.errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("name,builtin", [("JAXTypeError", TypeError),
                                          ("JAXIndexError", IndexError),
                                          ("JaxRuntimeError", RuntimeError),
                                          ("InconclusiveDimensionOperation", Exception)])
def test_error_classes_have_jaxs_builtin_bases(name, builtin):
    assert issubclass(getattr(jax.errors, name), builtin)
    assert issubclass(getattr(errors, name), builtin)
    assert issubclass(getattr(errors, name), errors.YaxError)


@pytest.mark.parametrize("name", ["ConcretizationTypeError", "TracerBoolConversionError",
                                  "TracerIntegerConversionError", "TracerArrayConversionError",
                                  "UnexpectedTracerError", "KeyReuseError",
                                  "NonConcreteBooleanIndexError"])
def test_error_hierarchy_follows_jax(name):
    for base in ("JAXTypeError", "JAXIndexError"):
        assert (issubclass(getattr(errors, name), getattr(errors, base))
                == issubclass(getattr(jax.errors, name), getattr(jax.errors, base))), base


def test_yax_raises_the_jax_error_classes():
    with pytest.raises(errors.JAXTypeError):
        yax.jit(lambda x: 1 if x > 0 else 2)(1.0)
    with pytest.raises(errors.JAXIndexError):
        yax.jit(lambda x: x[x > 0])(jnp.arange(3.0))
    a, = yax.export.symbolic_shape("a")
    with pytest.raises(errors.InconclusiveDimensionOperation):
        bool(a >= 2)
    with pytest.raises(yax.extend.core.InconclusiveDimensionOperation):
        int(a)
    assert yax.extend.core.InconclusiveDimensionOperation is errors.InconclusiveDimensionOperation
    assert (jax.extend.core.InconclusiveDimensionOperation
            is jax.errors.InconclusiveDimensionOperation)


def test_runtime_failures_are_wrapped_as_jax_runtime_error():
    raw = jaxlib_ext.JaxRuntimeError("INTERNAL: the device stopped")
    assert isinstance(raw, jax.errors.JaxRuntimeError)
    with pytest.raises(errors.JaxRuntimeError, match="jit: INTERNAL: the device stopped") as e:
        _resource_errors.raise_if_out_of_memory(raw, [], "jit")
    assert e.value.__cause__ is raw
    oom = jaxlib_ext.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes")
    with pytest.raises(errors.DeviceOutOfMemoryError) as e:
        _resource_errors.raise_if_out_of_memory(oom, [((2,), np.float32)], "jit")
    assert isinstance(e.value, errors.JaxRuntimeError) and isinstance(e.value, MemoryError)
    _resource_errors.raise_if_out_of_memory(ValueError("other"), [], "jit")  # left alone


# --- checkify: check_error and debug_check --------------------------------------------------

def _debug_fn(lib, ck):
    def f(x):
        ck.debug_check(x > 0, "x must be positive, got {}", x)
        return lib.numpy.log(x)
    return f


def _stem(message: str) -> str:
    return message.split(" (")[0]  # jax ends with "(`check` failed)", yax with "(at file:line)"


def test_debug_check_runs_only_under_checkify():
    yf, jf = _debug_fn(yax, checkify), _debug_fn(jax, jcheckify)
    x, jx = jnp.asarray(-1.0), jjnp.asarray(-1.0)
    assert np.isnan(float(yf(x))) and np.isnan(float(jf(jx)))
    assert np.isnan(float(yax.jit(yf)(x)))
    got = checkify.checkify(yf)(x)[0].get()
    want = jcheckify.checkify(jf)(jx)[0].get()
    assert _stem(got) == _stem(want) == "x must be positive, got -1.0"
    assert "test_apinames.py" in got
    assert checkify.checkify(yf)(jnp.asarray(2.0))[0].get() is None
    assert _stem(checkify.checkify(yax.jit(yf))(jnp.asarray(-2.0))[0].get()) == \
        _stem(jcheckify.checkify(jax.jit(jf))(jjnp.asarray(-2.0))[0].get())
    # under vmap, one line per failing element
    got = checkify.checkify(yax.vmap(yf))(jnp.asarray([1.0, -3.0]))[0].get()
    want = jcheckify.checkify(jax.vmap(jf))(jjnp.asarray([1.0, -3.0]))[0].get()
    assert _stem(got) == _stem(want)


def _indexing(lib, ck):
    def g(x, i):
        ck.check(x[0] < 5, "x0 too big: {a} of {b}", a=x[0], b=x)
        return x[i]
    return ck.checkify(g, errors=ck.all_checks)


def _rechecked(lib, ck):
    cg = _indexing(lib, ck)

    def h(x, i):
        err, y = cg(x, i)
        ck.check_error(err)
        return y * 2
    return h


@pytest.mark.parametrize("offset,index,fails", [(0.0, 1, False), (10.0, 1, True),
                                                (0.0, 7, True)])
def test_check_error_raises_and_is_functionalized_again(offset, index, fails):
    x = jnp.arange(3.0) + offset
    jx = jjnp.arange(3.0) + offset
    err, _ = _indexing(yax, checkify)(x, index)
    jerr, _ = _indexing(jax, jcheckify)(jx, index)
    assert (err.get() is None) == (jerr.get() is None) == (not fails)
    if fails:
        with pytest.raises(errors.JaxRuntimeError) as got:
            checkify.check_error(err)
        with pytest.raises(jcheckify.JaxRuntimeError):
            jcheckify.check_error(jerr)
        assert str(got.value).startswith(err.get())
    else:
        checkify.check_error(err)
        jcheckify.check_error(jerr)
    # a function that calls check_error, checkified again: the same message comes back
    h, jh = _rechecked(yax, checkify), _rechecked(jax, jcheckify)
    err2, y = checkify.checkify(h, errors=checkify.all_checks)(x, index)
    jerr2, jy = jcheckify.checkify(jh, errors=jcheckify.all_checks)(jx, index)
    assert err2.get() == err.get()
    assert (err2.get() is None) == (jerr2.get() is None)
    if fails and offset:
        assert _stem(err2.get()) == _stem(jerr2.get()) == "x0 too big: 10.0 of [10. 11. 12.]"
    np.testing.assert_allclose(np.asarray(y), np.asarray(jy))
    # under jit (where jax cannot stage it) the check raises when the program runs
    if fails:
        with pytest.raises(errors.CheckifyError, match=_stem(err.get()).replace("[", r"\[")):
            yax.jit(h)(x, index)
    else:
        np.testing.assert_allclose(np.asarray(yax.jit(h)(x, index)), np.asarray(jy))


def test_check_error_takes_an_error():
    with pytest.raises(TypeError, match="check_error takes the Error"):
        checkify.check_error(None)
    checkify.check_error(checkify.init_error)
