"""yax from many threads and asyncio tasks, and after faults (docs/threads.md).

Bounded in time and count: small shapes, compiles warmed once, and every wait has a timeout, so
a deadlock fails a test instead of hanging the suite. Worker threads are daemons: a hung one
cannot keep the interpreter alive either.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import threading

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import errors, lax
from yax._resource_errors import raise_if_out_of_memory
from yax.core.trace import Trace, current_trace, use_trace
from yax.interpreters.eager import EVAL_TRACE
from yax.runtime import executable

WAIT = 120  # seconds: generous for a loaded 2-core machine, finite so a deadlock fails
N_ITER = 200


def _spawn(fn, *args) -> cf.Future:
    """Run `fn(*args)` in a new daemon thread; its Future carries the result or exception."""
    fut: cf.Future = cf.Future()

    def work():
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001  (the test inspects it)
            fut.set_exception(exc)
    threading.Thread(target=work, daemon=True).start()
    return fut


def _results(futures, timeout=WAIT) -> list:
    return [f.result(timeout=timeout) for f in futures]


# --- eight threads, each a different mix of eager / jit / grad / vmap / loops / random -------

_shared_jit = yax.jit(lambda x, c: x * c + jnp.sum(x))


# loop bodies and branches are module-level functions: their traces are cached per function,
# so after warm-up every thread reuses one compiled program (fresh lambdas would recompile)
def _cumsum_step(carry, v):
    return carry + v, carry + v


def _scan_cumsum(x):
    return lax.scan(_cumsum_step, jnp.zeros((), x.dtype), x)


def _times(v, c):
    return v * c


def _negate(v, c):
    return -v


def _op_eager(x, c, key):
    return jnp.sin(x) * c + 1.0, np.sin(np.asarray(x)) * c + 1.0


def _op_jit(x, c, key):
    xn = np.asarray(x)
    return _shared_jit(x, jnp.float32(c)), xn * c + xn.sum()


def _op_grad(x, c, key):
    # a closure per thread and call: every call traces a fresh jvp in this thread
    return yax.grad(lambda y: jnp.sum(y * y) * c)(x), 2.0 * c * np.asarray(x)


def _op_jit_grad(x, c, key):
    return _jit_grad(x, jnp.float32(c)), 2.0 * c * np.asarray(x)


_jit_grad = yax.jit(yax.grad(lambda y, c: jnp.sum(y * y) * c))


def _op_vmap(x, c, key):
    xs = jnp.stack([x, x + 1.0])
    return yax.vmap(lambda r: r * c - jnp.max(r))(xs), np.stack(
        [r * c - r.max() for r in (np.asarray(x), np.asarray(x) + 1.0)])


def _op_scan(x, c, key):
    _, ys = _scan_cumsum(x * c)
    return ys, np.cumsum(np.asarray(x) * c)


def _op_random(x, c, key):
    return yax.random.normal(key, (3,)), _EXPECTED_NORMAL[c]


def _op_cond(x, c, key):
    out = lax.cond(jnp.sum(x) > 0, _times, _negate, x, jnp.float32(c))
    xn = np.asarray(x)
    return out, xn * c if xn.sum() > 0 else -xn


def _halve_until_small(v):
    return v * 0.5


def _not_small(v):
    return jnp.max(jnp.abs(v)) > 1.0


def _op_while(x, c, key):
    out = lax.while_loop(_not_small, _halve_until_small, x * c)
    v = np.asarray(x) * c
    while np.abs(v).max() > 1.0:
        v = v * 0.5
    return out, v


@yax.custom_jvp
def _softplus(v):
    return jnp.log1p(jnp.exp(v))


_softplus.defjvp(lambda primals, tangents: (_softplus(primals[0]),
                                            tangents[0] / (1.0 + jnp.exp(-primals[0]))))


def _op_custom_jvp(x, c, key):
    xn = np.asarray(x, np.float64)
    return yax.grad(lambda v: jnp.sum(_softplus(v * c)))(x), c / (1.0 + np.exp(-xn * c))


_OPS = [_op_eager, _op_jit, _op_grad, _op_jit_grad, _op_vmap, _op_scan, _op_random, _op_cond,
        _op_while, _op_custom_jvp]
_EXPECTED_NORMAL: dict = {}


def _thread_inputs(i):
    c = float(i + 1)
    x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32) + i)
    return x, c, yax.random.PRNGKey(i)


@pytest.fixture(scope="module")
def warmed():
    """Compile every op once in the main thread (threads then run, not compile) and record the
    per-thread random draws as the expected values."""
    for i in range(8):
        x, c, key = _thread_inputs(i)
        _EXPECTED_NORMAL[c] = np.asarray(yax.random.normal(key, (3,)))
        for op in _OPS:
            op(x, c, key)
    return True


def _worker(i):
    x, c, key = _thread_inputs(i)
    mix = [_OPS[(i + k) % len(_OPS)] for k in range(4)] + [_OPS[(3 * i + 5) % len(_OPS)]]
    for n in range(N_ITER):
        op = mix[n % len(mix)]
        got, want = op(x, c, key)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5,
                                   err_msg=f"thread {i}, iteration {n}, {op.__name__}")
        assert current_trace() is EVAL_TRACE
    return i


def test_eight_threads_mixed_calls(warmed):
    assert _results([_spawn(_worker, i) for i in range(8)]) == list(range(8))


# --- two threads trace and compile the same new function at the same moment ------------------

def test_two_threads_compile_the_same_new_function():
    @yax.jit
    def fresh(x):
        return jnp.cos(x) * 3.0 + jnp.arange(4.0)

    start = threading.Barrier(2, timeout=WAIT)

    def call(v):
        start.wait()
        return np.asarray(fresh(jnp.full((4,), v, jnp.float32)))

    got = _results([_spawn(call, 0.25), _spawn(call, 0.75)])
    for v, g in zip((0.25, 0.75), got):
        np.testing.assert_allclose(g, np.cos(np.float32(v)) * 3.0 + np.arange(4.0), rtol=1e-6)
    assert 1 <= fresh.trace_count <= 2
    np.testing.assert_allclose(np.asarray(fresh(jnp.zeros(4))), 3.0 + np.arange(4.0))


# --- a thread that raises mid-trace, next to threads that must not notice ---------------------

def test_raising_thread_leaves_others_alone(warmed):
    def bad(x):
        y = jnp.sin(x) * 2.0
        raise ValueError("user bug in the traced function")
        return y

    def raiser():
        for _ in range(40):
            with pytest.raises(ValueError, match="user bug"):
                yax.jit(bad)(jnp.ones(3))
            with pytest.raises(ValueError, match="user bug"):
                yax.grad(lambda v: jnp.sum(bad(v)))(jnp.ones(3))
            assert current_trace() is EVAL_TRACE
        return "raised"

    futures = [_spawn(raiser)] + [_spawn(_worker, i) for i in (1, 4, 6)]
    assert _results(futures) == ["raised", 1, 4, 6]


# --- faults: compile failures, failing lowering rules, KeyboardInterrupt ----------------------

def test_injected_compile_failure_then_normal_use(monkeypatch):
    real = executable.compile_module
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("INTERNAL: injected XLA compile failure")

    f = yax.jit(lambda x: x * 5.0 - 1.0)
    monkeypatch.setattr(executable, "compile_module", failing)
    with pytest.raises(RuntimeError, match="injected"):
        f(jnp.ones(2))
    with pytest.raises(RuntimeError, match="injected"):  # an eager op of a new signature
        jnp.tanh(jnp.ones((2, 7, 1)))
    assert calls and current_trace() is EVAL_TRACE
    monkeypatch.setattr(executable, "compile_module", real)
    np.testing.assert_allclose(np.asarray(f(jnp.ones(2))), [4.0, 4.0])
    np.testing.assert_allclose(np.asarray(jnp.tanh(jnp.ones((2, 7, 1)))),
                               np.tanh(np.ones((2, 7, 1))), rtol=1e-6)


def test_failing_lowering_rule_then_normal_use(monkeypatch):
    from yax.primitives.elementwise import unary_primitives
    prim = unary_primitives["exp"]

    def broken(*args, **params):
        raise RuntimeError("injected lowering failure")

    f = yax.jit(lambda x: jnp.exp(x) + 1.0)
    monkeypatch.setattr(prim, "lower", broken)
    with pytest.raises(RuntimeError, match="injected lowering"):
        f(jnp.zeros(3))
    monkeypatch.undo()
    np.testing.assert_allclose(np.asarray(f(jnp.zeros(3))), [2.0, 2.0, 2.0])


def test_keyboard_interrupt_inside_traced_function_then_normal_use():
    interrupt = [True]

    def body(x):
        y = jnp.sin(x)
        if interrupt[0]:
            raise KeyboardInterrupt
        return y * 2.0

    jitted = yax.jit(body)
    transforms = [jitted, yax.grad(lambda v: jnp.sum(body(v))), yax.vmap(body),
                  lambda v: lax.scan(lambda c, e: (c + body(e), c), jnp.zeros(()), v)[0]]
    for t in transforms:
        with pytest.raises(KeyboardInterrupt):
            t(jnp.ones(3))
        assert current_trace() is EVAL_TRACE
    interrupt[0] = False
    x = np.ones(3, np.float32)
    np.testing.assert_allclose(np.asarray(jitted(jnp.asarray(x))), np.sin(x) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(transforms[1](jnp.asarray(x))), 2.0 * np.cos(x),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(transforms[2](jnp.asarray(x))), np.sin(x) * 2.0,
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(transforms[3](jnp.asarray(x))), 6.0 * np.sin(1.0),
                               rtol=1e-6)


def test_keyboard_interrupt_during_compile_then_normal_use(monkeypatch):
    real = executable.compile_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    f = yax.jit(lambda x: x @ x.T)
    monkeypatch.setattr(executable, "compile_module", interrupted)
    with pytest.raises(KeyboardInterrupt):
        f(jnp.ones((2, 3)))
    monkeypatch.setattr(executable, "compile_module", real)
    np.testing.assert_allclose(np.asarray(f(jnp.ones((2, 3)))), np.full((2, 2), 3.0))


# --- allocations that cannot be satisfied -----------------------------------------------------

def test_oversized_allocation_is_a_clear_error():
    for make in (lambda: jnp.zeros((2**40,)), lambda: jnp.ones((2**20, 2**20), jnp.int32),
                 lambda: jnp.full((2**41,), 1.5)):
        with pytest.raises(errors.DeviceOutOfMemoryError) as info:
            make()
        assert isinstance(info.value, MemoryError)
        msg = str(info.value)
        assert "4398046511104 bytes" in msg or "8796093022208 bytes" in msg
        assert "[1099511627776]" in msg or "[1048576,1048576]" in msg or "[2199023255552]" in msg
    np.testing.assert_allclose(np.asarray(jnp.zeros((3,)) + 1.0), np.ones(3))


def test_runtime_out_of_memory_is_translated():
    xla = RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 4398046511104 bytes.")
    with pytest.raises(errors.DeviceOutOfMemoryError, match=r"float32\[1099511627776\]") as info:
        try:
            raise xla
        except RuntimeError as exc:
            raise_if_out_of_memory(exc, [((2**40,), np.float32)], "execute")
    assert info.value.__cause__ is xla and "RESOURCE_EXHAUSTED" in str(info.value)
    raise_if_out_of_memory(ValueError("unrelated"), [((2,), np.float32)], "execute")  # no-op


# --- asyncio tasks and leaked tracers ---------------------------------------------------------

class _MarkerTrace(Trace):
    name = "marker"


def test_asyncio_tasks_have_their_own_trace_state(warmed):
    async def holder(entered: asyncio.Event, release: asyncio.Event):
        marker = _MarkerTrace(current_trace())
        with use_trace(marker):
            entered.set()
            await release.wait()
            return current_trace() is marker

    async def computer(entered: asyncio.Event, i: int):
        await entered.wait()
        assert current_trace() is EVAL_TRACE  # the holder task's trace is not ours
        x, c, key = _thread_inputs(i)
        got, want = _op_grad(x, c, key)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        # a jitted call from a worker thread, awaited by this task
        got, want = await asyncio.to_thread(_op_jit, x, c, key)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        return i

    async def main():
        entered, release = asyncio.Event(), asyncio.Event()
        hold = asyncio.create_task(holder(entered, release))
        done = await asyncio.gather(*(computer(entered, i) for i in range(3)))
        release.set()
        return await hold, done

    kept, done = asyncio.run(asyncio.wait_for(main(), WAIT))
    assert kept and done == [0, 1, 2]
    assert current_trace() is EVAL_TRACE


def test_leaked_tracer_from_a_finished_trace_in_another_thread():
    leaked = []

    def leak(x):
        leaked.append(x)
        return x + 1.0

    _results([_spawn(lambda: yax.jit(leak)(jnp.ones(2)))])
    with pytest.raises(errors.UnexpectedTracerError, match="already finished"):
        _results([_spawn(lambda: jnp.sin(leaked[0]))])
    with pytest.raises(errors.UnexpectedTracerError):
        _results([_spawn(lambda: yax.jit(lambda y: y * leaked[0])(jnp.ones(2)))])


def test_live_tracer_of_another_thread_is_rejected():
    holding, done = threading.Event(), threading.Event()
    live = []

    def owner(x):
        live.append(x)
        holding.set()
        assert done.wait(WAIT)
        return x * 2.0

    own = _spawn(lambda: yax.jit(owner)(jnp.ones(2)))
    while not holding.wait(0.05):
        if own.done():
            own.result()  # the owner failed before holding its tracer: report why

    def intruder():
        with pytest.raises(errors.UnexpectedTracerError, match="unrelated"):
            yax.jit(lambda y: yax.grad(lambda z: jnp.sum(z * live[0]))(y))(jnp.ones(2))
        with pytest.raises(errors.UnexpectedTracerError):
            jnp.cos(live[0])
        return "rejected"

    try:
        assert _results([_spawn(intruder)]) == ["rejected"]
    finally:
        done.set()
    np.testing.assert_allclose(np.asarray(own.result(timeout=WAIT)), [2.0, 2.0])
