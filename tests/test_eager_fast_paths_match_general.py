"""Eager grad's shortcuts (issue 26) give exactly what the general paths give.

- yax.numpy binds `x @ w`, `x + b` (rank broadcasting), `x ** 2` and `mean(x)` directly when
  promotion has nothing to do. Each shortcut is switched off here to get the general path's
  program, which must be the same jaxpr (also differentiated) and the same bits.
- The tape keys its recorded program as it records it, and a program compiled for one
  recording runs another of the same structure with that recording's own constants.
- Eager `negative`, `absolute`, `max`, `min` (one-operand ops with a memo) and `mean` (one
  jitted program) give jax's values, dtypes and weak types, first and repeated calls alike.
"""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.numpy import _promote, contractions, reductions, ufunc_arithmetic
from yax.runtime import executable

_SHORTCUTS = {
    "broadcast": (_promote, "_broadcast_one_dtype"),
    "matmul": (contractions, "_plain_matrix_product"),
    "power": (ufunc_arithmetic, "_float_to_int_power"),
    "mean": (reductions, "_fast_full_mean"),
}

_CASES = [  # (shortcut, function, argument shapes and dtypes, whether the shortcut applies)
    ("broadcast", lambda a, b: a + b, [((6, 5), "float32"), ((5,), "float32")], True),
    ("broadcast", lambda a, b: b * a, [((6, 5), "float32"), ((5,), "float32")], True),
    ("broadcast", lambda a, b: a - b, [((6, 1), "float32"), ((1, 5), "float32")], True),
    ("broadcast", lambda a, b: jnp.maximum(a, b), [((2, 3, 4), "float64"), ((3, 4), "float64")],
     True),
    ("broadcast", lambda a, b: a < b, [((4, 3), "int32"), ((3,), "int32")], True),
    ("broadcast", lambda a, b: a / b, [((4, 3), "float32"), ((3,), "int32")], False),
    ("broadcast", lambda a, b: a + b, [((4, 3), "float32"), ((), "float32")], False),
    ("matmul", lambda a, b: a @ b, [((4, 3), "float32"), ((3, 5), "float32")], True),
    ("matmul", lambda a, b: a @ b, [((4, 3), "float64"), ((3,), "float64")], True),
    ("matmul", lambda a, b: a @ b, [((3,), "float32"), ((3, 5), "float32")], True),
    ("matmul", lambda a, b: a @ b, [((3,), "int32"), ((3,), "int32")], True),
    ("matmul", lambda a, b: a @ b, [((2, 4, 3), "float32"), ((3, 5), "float32")], False),
    ("matmul", lambda a, b: a @ b, [((4, 3), "float32"), ((3, 5), "float16")], False),
    ("power", lambda a: a ** 2, [((4, 3), "float32")], True),
    ("power", lambda a: a ** -3, [((4, 3), "float64")], True),
    ("power", lambda a: a ** 0, [((3,), "float32")], True),
    ("power", lambda a: a ** 2, [((3,), "int32")], False),
    ("mean", lambda a: jnp.mean(a), [((4, 3), "float32")], True),
    ("mean", lambda a: jnp.mean(a), [((7,), "float64")], True),
    ("mean", lambda a: jnp.mean(a), [((4, 3), "float16")], False),
    ("mean", lambda a: jnp.mean(a), [((4, 3), "int32")], False),
    ("mean", lambda a: jnp.mean(a, axis=0), [((4, 3), "float32")], False),
]


def _args(specs, seed=0):
    rng = np.random.default_rng(seed)
    return [jnp.asarray((rng.normal(size=shape) * 3).astype(dtype)) for shape, dtype in specs]


def _observe(fun, args):
    """What a program gives: its jaxpr, its derivative's jaxpr, and its eager bits."""
    out = fun(*args)
    seen = {"jaxpr": str(yax.make_jaxpr(fun)(*args)),
            "bits": np.asarray(out).tobytes(), "dtype": out.dtype, "weak": out.weak_type}
    if all(np.issubdtype(a.dtype, np.floating) for a in args):
        def scalar(*xs):
            return jnp.sum(fun(*xs).astype(np.float32))
        seen["grad_jaxpr"] = str(yax.make_jaxpr(yax.grad(scalar, argnums=0))(*args))
        seen["grad_bits"] = np.asarray(yax.grad(scalar, argnums=0)(*args)).tobytes()
    return seen


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_shortcut_gives_the_general_paths_program_and_bits(case, monkeypatch):
    name, fun, specs, applies = _CASES[case]
    module, attr = _SHORTCUTS[name]
    original = getattr(module, attr)
    taken = []

    def spy(*a, **k):
        out = original(*a, **k)
        taken.append(out is not None)
        return out
    monkeypatch.setattr(module, attr, spy)
    args = _args(specs)
    fast = _observe(fun, args)
    assert any(taken) == applies, f"{name}: the shortcut {'was not' if applies else 'was'} taken"
    monkeypatch.setattr(module, attr, lambda *a, **k: None)  # the general path only
    general = _observe(fun, args)
    assert fast == general


def test_a_compiled_recording_runs_with_each_recordings_own_constants():
    # `dead` reads a constant that dead-code elimination drops from the compiled program: the
    # live constant must still be this call's, picked by its position among the recorded ones
    x = jnp.asarray(np.linspace(-1.0, 1.0, 5, dtype=np.float32))

    def loss(x, dead_const, live_const):
        _ = x * dead_const
        return jnp.sum(x * live_const)
    g = yax.grad(loss)
    np.testing.assert_array_equal(np.asarray(g(x, jnp.ones(5), jnp.full(5, 2.0))),
                                  np.full(5, 2.0, np.float32))
    before = executable.stats["compiles"]
    for scale in (3.0, -4.0, 0.5):
        got = yax.grad(lambda v, s=scale: loss(v, jnp.ones(5) * s, jnp.full(5, s)))(x)
        np.testing.assert_array_equal(np.asarray(got), np.full(5, scale, np.float32))
    got = g(x, jnp.full(5, 7.0), jnp.full(5, 5.0))
    np.testing.assert_array_equal(np.asarray(got), np.full(5, 5.0, np.float32))
    assert executable.stats["compiles"] - before <= 2  # the constant-making ops, once each


def test_literals_and_params_keep_recorded_programs_apart():
    x = jnp.asarray(np.array([0.5, 1.5, -2.0], np.float32))
    scale, power = [2.0], [2]
    g = yax.grad(lambda v: jnp.sum(v * scale[0]) + jnp.sum(v ** power[0]))
    for s, p in ((2.0, 2), (3.0, 2), (-0.0, 3), (0.0, 3), (2.0, 4)):
        scale[0], power[0] = s, p
        got = np.asarray(g(x))
        want = np.float32(s) + p * np.asarray(x, np.float64) ** (p - 1)
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6)
    scale[0], power[0] = -0.0, 1  # d/dv (v * -0.0) is -0.0 exactly: the literal's sign is kept
    g0 = yax.grad(lambda v: jnp.sum(v * scale[0]))
    assert np.all(np.signbit(np.asarray(g0(x))))
    scale[0] = 0.0
    assert not np.any(np.signbit(np.asarray(g0(x))))


_ONE_OPERAND = ["negative", "absolute", "max", "min", "mean"]
_DTYPES = ["bool", "uint8", "int32", "float16", "float32", "complex64"]


@pytest.mark.parametrize("name", _ONE_OPERAND)
def test_one_operand_shortcuts_match_jax_on_every_dtype_twice(name):
    import jax
    import jax.numpy as jnp_ref
    rng = np.random.default_rng(3)
    for dtype in _DTYPES:
        for shape in ((5,), (2, 3), ()):
            x = (rng.normal(size=shape) * 4).astype(dtype)
            try:
                want = getattr(jnp_ref, name)(x)
            except (TypeError, ValueError) as e:  # jax refuses it: so must yax, both times
                for _ in range(2):
                    with pytest.raises(type(e)):
                        getattr(jnp, name)(jnp.asarray(x))
                continue
            for _ in range(2):  # the second call repeats the memoised run
                got = getattr(jnp, name)(jnp.asarray(x))
                assert got.dtype == want.dtype and got.weak_type == want.weak_type, (dtype, shape)
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    weak = jnp.asarray(2.5)  # a weakly typed Array
    got, want = getattr(jnp, name)(weak), getattr(jnp_ref, name)(jax.numpy.asarray(2.5))
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    if name in ("max", "min"):
        with pytest.raises(ValueError, match="initial"):
            getattr(jnp, name)(jnp.zeros((0, 3)))


def test_eager_grad_leaves_no_reference_cycles():
    # each recorded tape used to form a cycle with its tracers, which only the garbage
    # collector freed (and made run every few calls); now a call's tape dies by refcount.
    # Other garbage (other tests, other threads) may be collected meanwhile: only tapes and
    # their tracers are looked for among what the collector finds.
    import gc

    from yax.transforms.eager_tape import TapeTrace, TapeTracer

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w + 1.0) ** 2)
    w, x = jnp.ones((4, 3)), jnp.ones((5, 4))
    g = yax.grad(loss)
    for _ in range(3):
        g(w, x)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector frees is kept in gc.garbage
    try:
        for _ in range(20):
            g(w, x)
        gc.collect()
        cyclic = [o for o in gc.garbage if type(o) in (TapeTrace, TapeTracer)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not cyclic, f"{len(cyclic)} tapes and tracers were freed only by the collector"
