"""The eager short cut of one-operand ops (interpreters/eager.py `one_operand_op`: unary ufuncs
and `sum` over all axes or along one): a repeat of an op's last run skips bind and the
interpreter, and everything that must not reuse that run (other avals, devices, default_device
blocks, debug checks, cleared caches, a transformation, a donated operand, other threads) does
not."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import yax
import yax.numpy as ynp
from tests.multidevice import run_on_devices
from yax.interpreters import eager
from yax.numpy import reductions
from yax.runtime.array import Array


def arr(x, dtype=np.float32):
    return yax.device_put(np.asarray(x, dtype))


def _remembered(op) -> tuple:
    """The run an op's short cut would repeat (its memo cell is the op's one closure list)."""
    cells = [c.cell_contents for c in op.__closure__ if type(c.cell_contents) is list]
    (memo,) = [c for c in cells if c in eager._op_memos]
    return memo[0]


def test_repeats_take_the_short_cut_and_agree_with_numpy(monkeypatch):
    x = arr([0.5, 1.0, 2.0])
    for _ in range(2):
        np.testing.assert_allclose(ynp.sin(x), np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
        np.testing.assert_allclose(ynp.sum(x), 3.5)
    assert _remembered(ynp.sin)[0] is x.aval
    assert _remembered(reductions._sum_of_all)[0] is x.aval  # what sum(x) calls
    applied = []
    general = eager.apply_primitive
    monkeypatch.setattr(eager, "apply_primitive", lambda *a: applied.append(a) or general(*a))
    for _ in range(3):  # repeats: no interpreter at all
        np.testing.assert_allclose(ynp.sin(x), np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
        np.testing.assert_allclose(ynp.sum(x), 3.5)
    assert not applied
    ynp.sin(arr([0.5, 1.0]))  # another aval: the interpreter
    assert len(applied) == 1
    monkeypatch.undo()
    # an output typed as its operand shares the aval object of the compiled entry (that of
    # the operand it was first compiled for, which an earlier test may have made): from the
    # first output on, a chain's avals are one object, so its repeats hit the memo
    y = ynp.sin(x)
    z = ynp.sin(y)
    assert z.aval is y.aval
    for _ in range(3):
        y = ynp.sin(y)
    np.testing.assert_allclose(y, np.sin(np.sin(np.sin(np.sin(np.float32([0.5, 1.0, 2.0]))))),
                               rtol=1e-5)


def test_a_short_cut_output_is_an_array_as_its_constructor_makes_it():
    x = arr([1.0, 2.0])
    ynp.tan(x), ynp.tan(x)
    y = ynp.tan(x)
    assert _remembered(ynp.tan)[0] is x.aval  # made by the short cut
    made = Array(y._buf, y.aval)
    assert [hasattr(y, s) for s in Array.__slots__] == [hasattr(made, s) for s in Array.__slots__]
    assert type(y) is Array and not y.committed and y.aval is made.aval


def test_other_avals_dtypes_and_weak_types_are_not_repeats():
    x = arr([1.0, 2.0])
    ynp.sin(x), ynp.sin(x)
    half = ynp.sin(arr([1.0, 2.0], np.float16))
    assert half.dtype == np.float16
    ints = ynp.sin(arr([1, 2], np.int32))  # promoted to float: no short cut, right dtype
    assert ints.dtype == np.float32 and not ints.weak_type
    weak = ynp.asarray(2.0)
    assert ynp.sin(weak).weak_type and ynp.sin(weak).weak_type
    assert not ynp.sum(weak + ynp.zeros(3)).weak_type  # a sum is never weak
    s = ynp.sum(arr([[1.0, 2.0], [3.0, 4.0]]))
    s = ynp.sum(arr([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(s, 10.0)
    np.testing.assert_allclose(ynp.sum(arr([[1.0, 2.0], [3.0, 4.0]]), axis=0), [4.0, 6.0])
    assert ynp.sum(arr([1, 2], np.int8)).dtype == np.int32


def test_sums_along_one_axis_repeat_and_keep_numpys_results():
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = arr(m)
    for _ in range(3):
        for axis in (0, 1, -1, -2):
            np.testing.assert_allclose(ynp.sum(x, axis=axis), m.sum(axis=axis))
            np.testing.assert_allclose(x.sum(axis=axis), m.sum(axis=axis))
    assert _remembered(reductions._SUM_ALONG[-2])[0] is x.aval
    np.testing.assert_allclose(ynp.sum(arr([1.0, 2.0]), axis=0), 3.0)  # same axis, other rank
    with pytest.raises(yax.errors.ShapeError, match="out of bounds"):
        ynp.sum(x, axis=2)
    ints = ynp.sum(arr(m, np.int8), axis=1)
    ints = ynp.sum(arr(m, np.int8), axis=1)
    assert ints.dtype == np.int32
    weak = ynp.sum(ynp.asarray(2.0) + ynp.zeros(3), axis=0)
    assert not weak.weak_type
    np.testing.assert_allclose(ynp.sum(x, axis=1, keepdims=True), m.sum(axis=1, keepdims=True))


def test_debug_nans_and_clear_caches_end_the_repeats():
    x = arr([-1.0, 4.0])
    ynp.log(x), ynp.log(x), ynp.log(x)  # nan, unchecked: the short cut is warm
    with yax.debug_nans(True), pytest.raises(FloatingPointError):
        ynp.log(x)
    ynp.log(x), ynp.log(x)
    assert _remembered(ynp.log)[0] is not None
    yax.clear_caches()
    assert _remembered(ynp.log)[0] is None and not eager._last_hit
    np.testing.assert_allclose(ynp.log(x)[1], np.log(4.0), rtol=1e-6)


def test_repeats_move_no_data_past_the_transfer_guards():
    x = arr([1.0, 2.0])
    ynp.sin(x), ynp.sin(x), ynp.sum(x), ynp.sum(x)
    with yax.transfer_guard("disallow"):
        ynp.sin(x), ynp.sum(x), ynp.sum(x, axis=0)
        with pytest.raises(yax.errors.JaxRuntimeError, match="host-to-device"):
            ynp.sin(np.float32([1.0, 2.0]))  # a NumPy operand is still a transfer


def test_a_transformation_stages_the_op_even_when_warm():
    c = arr([1.0, 2.0])
    ynp.sin(c), ynp.sin(c), ynp.sum(c), ynp.sum(c)
    jaxpr = str(yax.make_jaxpr(lambda y: ynp.sum(ynp.sin(c)) + y)(1.0))
    assert "sin" in jaxpr and "reduce_sum" in jaxpr
    g = yax.grad(lambda v: ynp.sum(ynp.sin(v)))(c)
    np.testing.assert_allclose(g, np.cos([1.0, 2.0]), rtol=1e-6)


def test_a_donated_operand_gives_the_clear_error():
    x = arr([1.0, 2.0])
    ynp.cos(x), ynp.cos(x)
    yax.jit(lambda v: v * 2, donate_argnums=0)(x)
    if not x.is_deleted():
        pytest.skip("this backend does not donate")
    with pytest.raises(RuntimeError, match="donated"):
        ynp.cos(x)


def test_threads_repeating_different_ops_get_their_own_results():
    shapes = [(3,), (4,), (2, 3), (5,)]
    inputs = [arr(np.arange(np.prod(s), dtype=np.float32).reshape(s) + 1) for s in shapes]
    errors, gate = [], threading.Barrier(len(inputs))

    def work(x):
        want_sin, want_sum = np.sin(np.asarray(x)), np.asarray(x).sum()
        gate.wait()
        try:
            for _ in range(200):
                np.testing.assert_allclose(ynp.sin(x), want_sin, rtol=1e-6)
                np.testing.assert_allclose(ynp.sum(x), want_sum, rtol=1e-6)
        except Exception as e:  # noqa: BLE001  reported below, in the test's thread
            errors.append(e)
    threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


CHILD = r'''
import numpy as np
import yax, yax.numpy as ynp

d0, d1 = yax.devices()
where = lambda y: sorted(d.id for d in y.devices())  # noqa: E731
x = yax.numpy.arange(4.0)
for _ in range(3):
    ynp.sin(x), ynp.sum(x)  # the short cut is warm for device 0
print("ROW block", where(ynp.sin(x)), where(ynp.sum(x)), end=" ")
with yax.default_device(d1):
    print(where(ynp.sin(x)), where(ynp.sum(x)), where(ynp.sin(x)), end=" ")
print(where(ynp.sin(x)))
on1 = yax.device_put(np.arange(4.0, dtype=np.float32), d1)
print("ROW committed", where(ynp.sin(on1)), where(ynp.sin(on1)), where(ynp.sin(x)),
      float(ynp.sum(on1)), where(ynp.sum(on1)))
'''


def test_default_device_blocks_and_other_devices_are_not_repeats():
    out = run_on_devices(CHILD, n=2, timeout=300)
    rows = [line for line in out.splitlines() if line.startswith("ROW ")]
    assert rows == ["ROW block [0] [0] [1] [1] [1] [0]",
                    "ROW committed [1] [1] [0] 6.0 [1]"], out
