"""yax.numpy core (dtypes, creation, ufuncs, reductions, manipulation, operators) against real
jax.numpy as the oracle: values, result dtypes and weak types, eagerly and under yax.jit."""

from __future__ import annotations

import jax.numpy as jnp_ref
import ml_dtypes
import numpy as np
import pytest
from hypothesis import settings

import yax
import yax.numpy as jnp
from tests.harness import JAX_0_10, assert_close, check_eager_and_jit
from tests.suiteb_util import JaxTable, jax_values

SETTINGS = settings(max_examples=4, deadline=None, derandomize=True)

BF16 = np.dtype(ml_dtypes.bfloat16)
PROMO_DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.uint8, np.int32, np.float16)] + [
    BF16, np.dtype(np.float32)]
PY_SCALARS = [True, 3, 2.5]


def sample(rng, shape, dtype, *, low=-5, high=5):
    """Random data of `dtype` in [low, high] (bools: random)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(max(low, 0), high + 1, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(low, high + 1, shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def ref(x):
    return jnp_ref.asarray(x) if isinstance(x, np.ndarray) else x


def check_vs_jax(yfun, rfun, args, *, rtol=None, atol=None):
    """yfun eagerly and under jit matches rfun (jax) in values, dtype and weak type."""
    return check_vs_jax_value(yfun, args, rfun(*(ref(a) for a in args)), rtol=rtol, atol=atol)


def check_vs_jax_value(yfun, args, want, *, rtol=None, atol=None):
    """yfun eagerly and under jit matches `want`, a jax Array, in value, dtype and weak type."""
    outs = check_eager_and_jit(yfun, args, np.asarray(want), rtol=rtol, atol=atol)
    for out in outs:
        # yax's comparison primitives never return weak bools (JAX's do when both promoted
        # operands are weak); weakness of a bool never changes promotion, so bools are skipped
        if out.dtype != np.bool_:
            assert out.weak_type == want.weak_type, (out.weak_type, want.weak_type)
    return outs


# --- promotion ---------------------------------------------------------------------------------

_OPERANDS = PROMO_DTYPES + PY_SCALARS


def _operand(kind):
    if isinstance(kind, np.dtype):
        return np.ones((2,), kind)
    return kind


@pytest.mark.parametrize("a", _OPERANDS, ids=str)
@pytest.mark.parametrize("b", _OPERANDS, ids=str)
def test_promotion_table(a, b):
    x, y = _operand(a), _operand(b)
    want = jnp_ref.add(ref(x), ref(y))
    got = jnp.add(*(yax.device_put(v) if isinstance(v, np.ndarray) else v for v in (x, y)))
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    assert jnp.result_type(x, y) == jnp_ref.result_type(x, y)
    staged = yax.eval_shape(lambda u, v: jnp.add(u, v), x, y)
    assert staged.dtype == want.dtype


def test_weak_scalar_keeps_array_dtype():
    assert jnp.ones(3, jnp.float16).__mul__(2.0).dtype == np.float16
    out = jnp.arange(3) + 1.5
    assert (out.dtype, out.weak_type) == (np.float32, True)
    assert (jnp.ones(3, jnp.uint8) + 1).dtype == np.uint8


def test_dtype_api_matches_jax():
    for a in PROMO_DTYPES:
        for b in PROMO_DTYPES:
            assert jnp.promote_types(a, b) == jnp_ref.promote_types(a, b)
    assert jnp.dtype(jnp.float32) == np.float32
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert not jnp.issubdtype(jnp.int32, jnp.floating)
    assert jnp.issubdtype(jnp.uint8, jnp.integer)
    assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.finfo(jnp.bfloat16).eps == jnp_ref.finfo(jnp_ref.bfloat16).eps
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.result_type(jnp.float16, 2.0) == np.float16
    x = jnp.float32(3)
    assert x.dtype == np.float32 and not x.weak_type and float(x) == 3.0
    assert jnp.newaxis is None and jnp.pi == np.pi


# --- creation ----------------------------------------------------------------------------------

CREATION = [
    lambda m: m.array([1, 2.5]), lambda m: m.array(1.0), lambda m: m.array([[1, 2], [3, 4]]),
    lambda m: m.array(3), lambda m: m.array(True), lambda m: m.array([True, 2]),
    lambda m: m.array(np.arange(3, dtype=np.int8)), lambda m: m.array([1, 2], dtype=m.float16),
    lambda m: m.asarray(2.0), lambda m: m.zeros((2, 3)), lambda m: m.ones(3, m.int32),
    lambda m: m.full((2,), 2.5), lambda m: m.full(2, 7, m.uint8), lambda m: m.empty(2),
    lambda m: m.zeros_like(m.ones(2, m.int8)), lambda m: m.ones_like(m.array(1.0)),
    lambda m: m.full_like(m.arange(3), 2.5), lambda m: m.arange(5), lambda m: m.arange(1, 7, 2),
    lambda m: m.arange(0.0, 1.0, 0.25), lambda m: m.arange(3, dtype=m.float16),
    lambda m: m.linspace(0, 1, 5), lambda m: m.linspace(0, 10, 4, endpoint=False),
    lambda m: m.linspace(0, 10, 7, dtype=m.int32), lambda m: m.linspace(2.0, 3.0, 1),
    lambda m: m.eye(3), lambda m: m.eye(2, 3, 1, dtype=m.int32), lambda m: m.identity(2),
    lambda m: m.array([]), lambda m: m.array(np.float64(2.0)),
]
# jax's values (and weak types, which jit outputs keep) for the whole table in one jitted
# program (tests/suiteb_util.py) rather than eager jax's compiles per case
_CREATION_ORACLE = JaxTable(lambda: {make: (lambda make=make: make(jnp_ref), [])
                                     for make in CREATION}, as_numpy=False)


@pytest.mark.parametrize("make", CREATION)
def test_creation_matches_jax(make):
    want, got = _CREATION_ORACLE()[make], make(jnp)
    assert_close(got, np.asarray(want))
    assert got.weak_type == want.weak_type


def test_linspace_retstep_and_arrays():
    out, step = jnp.linspace(0.0, 1.0, 5, retstep=True)
    assert float(step) == 0.25
    want = jnp_ref.linspace(jnp_ref.zeros(2), jnp_ref.ones(2), 3, axis=1)
    got = jnp.linspace(jnp.zeros(2), jnp.ones(2), 3, axis=1)
    assert_close(got, np.asarray(want))
    check_vs_jax(lambda a: jnp.linspace(a, 2 * a, 4), lambda a: jnp_ref.linspace(a, 2 * a, 4),
                 [np.float32(1.5) * np.ones((), np.float32)])


def test_array_of_tracers_and_full_like_under_jit():
    f = yax.jit(lambda a, b: jnp.array([[a, b], [b, a + 1.0]]))
    got = f(jnp.float32(1), jnp.float32(2))
    assert_close(got, np.array([[1, 2], [2, 2]], np.float32))
    g = yax.jit(lambda a: jnp.full_like(a, 3.0) + jnp.zeros_like(a))
    assert_close(g(jnp.ones((2, 2), jnp.float16)), np.full((2, 2), 3, np.float16))
    jaxpr = str(yax.make_jaxpr(lambda a: jnp.full_like(a, 3.0))(np.ones((4, 4), np.float32)))
    assert "broadcast_in_dim" in jaxpr


def test_arange_traced_bound_error():
    with pytest.raises(yax.errors.ConcretizationError, match="static_argnums"):
        yax.jit(lambda n: jnp.arange(n))(jnp.int32(3))
    got = yax.jit(lambda n: jnp.arange(n), static_argnums=0)(3)
    assert_close(got, np.arange(3, dtype=np.int32))


def test_array_python_int_overflow():
    with pytest.raises(OverflowError):
        jnp.array(2 ** 40)


@pytest.mark.parametrize("value", [None, [1.0, None], [[None]]])
def test_array_of_none_is_jax_value_error(value):
    import jax.numpy as jax_np
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jax_np.array(value)
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.array(value)


def test_integer_division_negative_operands():
    a = np.array([-7, -7, 7, 7, -6, 0], np.int32)
    b = np.array([2, -2, 2, -2, 3, -5], np.int32)
    for name in ("floor_divide", "remainder", "fmod"):
        got = getattr(jnp, name)(yax.device_put(a), yax.device_put(b))
        assert_close(got, getattr(np, name)(a, b))
    fa, fb = a.astype(np.float32) + 0.5, b.astype(np.float32)
    for name in ("floor_divide", "remainder", "fmod"):
        assert_close(getattr(jnp, name)(fa, fb), getattr(np, name)(fa, fb))


def test_clip_where_round_and_misc():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    check_vs_jax(lambda a: jnp.clip(a, -1, 2), lambda a: jnp_ref.clip(a, -1, 2), [x])
    check_vs_jax(lambda a: jnp.clip(a, max=1.5), lambda a: jnp_ref.clip(a, max=1.5), [x])
    check_vs_jax(lambda a: jnp.clip(a, min=0), lambda a: jnp_ref.clip(a, min=0), [x])
    check_vs_jax(lambda a: jnp.round(a, 1), lambda a: jnp_ref.round(a, 1), [x * 1.37])
    check_vs_jax(lambda a: jnp.where(a > 0, a, 0.0), lambda a: jnp_ref.where(a > 0, a, 0.0), [x])
    check_vs_jax(lambda a: jnp.where(a, 1, 2), lambda a: jnp_ref.where(a, 1, 2), [x])
    ints = np.arange(-4, 5, dtype=np.int32)
    check_vs_jax(lambda a: jnp.clip(a, 0.5), lambda a: jnp_ref.clip(a, 0.5), [ints])
    check_vs_jax(lambda a: jnp.power(a, 3), lambda a: jnp_ref.power(a, 3), [ints])
    check_vs_jax(lambda a: a ** 2, lambda a: a ** 2, [x])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], np.float32)
    for name in ("isfinite", "isinf", "isnan", "signbit", "sign", "sinc"):
        # yax follows jax 0.10 (sinc(+-inf) is nan); jax 0.11 gives 0 there
        args = special if name != "sinc" or JAX_0_10 else special[np.isfinite(special) |
                                                                  np.isnan(special)]
        check_vs_jax(getattr(jnp, name), getattr(jnp_ref, name), [args])
    check_vs_jax(jnp.logaddexp, jnp_ref.logaddexp, [special, special[::-1].copy()])
    check_vs_jax(jnp.hypot, jnp_ref.hypot, [special, np.array([3, 3, 3, np.nan, 3, 3], np.float32)])
    assert_close(jnp.fix(x), np.fix(x))


def test_broadcast_error_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        jnp.add(jnp.ones((2, 3)), jnp.ones(4))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        yax.jit(lambda a, b: a * b)(jnp.ones((2, 3)), jnp.ones(4))


def test_reduction_options():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    mask = x > 0
    cases = [
        lambda m, a: m.sum(a, axis=1, where=mask),
        lambda m, a: m.sum(a, initial=10.0),
        lambda m, a: m.max(a, axis=0, initial=3.0),
        lambda m, a: m.max(a, where=mask, initial=-100.0),
        lambda m, a: m.mean(a, axis=0, where=mask),
        lambda m, a: m.var(a, axis=1, ddof=1),
        lambda m, a: m.std(a, ddof=1, keepdims=True),
        lambda m, a: m.sum(a, dtype=m.int32),
        lambda m, a: m.argmax(a, axis=1, keepdims=True),
        lambda m, a: m.argmin(a, keepdims=True),
        lambda m, a: m.nanmean(m.where(a > 3, m.nan, a), axis=0),
        lambda m, a: m.cumsum(a),
        lambda m, a: m.prod(a[:, :2] / 4, axis=(0, 1)),
    ]
    # jax's values of all the cases from one jitted program (tests/suiteb_util.py)
    wants = jax_values({i: (lambda a, case=case: case(jnp_ref, a), [ref(x)])
                        for i, case in enumerate(cases)}, as_numpy=False)
    for i, case in enumerate(cases):
        check_vs_jax_value(lambda a, case=case: case(jnp, a), [x], wants[i], rtol=1e-5,
                           atol=1e-5)
    with pytest.raises(ValueError, match="initial"):
        jnp.max(jnp.zeros((0, 2)), axis=0)


# --- manipulation ------------------------------------------------------------------------------

MANIP = [
    lambda m, a: m.reshape(a, (3, -1)), lambda m, a: m.reshape(a, -1), lambda m, a: m.ravel(a),
    lambda m, a: m.transpose(a), lambda m, a: m.transpose(a, (1, 0, 2)),
    lambda m, a: m.swapaxes(a, 0, 2), lambda m, a: m.moveaxis(a, 0, -1),
    lambda m, a: m.moveaxis(a, (0, 1), (2, 0)), lambda m, a: m.expand_dims(a, (0, 3)),
    lambda m, a: m.squeeze(m.expand_dims(a, 1)), lambda m, a: m.squeeze(a[:1], 0),
    lambda m, a: m.broadcast_to(a[:, :1], (3, 2, 5, 4)),
    lambda m, a: m.broadcast_arrays(a, a[0, :1])[1],
    lambda m, a: m.concatenate([a, a], axis=1), lambda m, a: m.concatenate([a, a], axis=None),
    lambda m, a: m.stack([a, a], axis=-1), lambda m, a: m.vstack([a[0], a[1]]),
    lambda m, a: m.hstack([a[0, 0], a[1, 1]]), lambda m, a: m.dstack([a[0], a[1]]),
    lambda m, a: m.column_stack([a[0, 0], a[1, 1]]), lambda m, a: m.split(a, 3, axis=1)[1],
    lambda m, a: m.split(a, [1, 2], axis=2)[2], lambda m, a: m.array_split(a, 3, axis=2)[0],
    lambda m, a: m.atleast_1d(a[0, 0, 0]), lambda m, a: m.atleast_2d(a[0, 0]),
    lambda m, a: m.atleast_3d(a[0, 0]), lambda m, a: m.flip(a), lambda m, a: m.flip(a, (0, 2)),
    lambda m, a: m.fliplr(a[0]), lambda m, a: m.flipud(a[0]), lambda m, a: m.astype(a, m.int8),
    lambda m, a: a.reshape(4, 6), lambda m, a: a.reshape((4, 6)), lambda m, a: a.transpose(2, 0, 1),
    lambda m, a: a.T, lambda m, a: a.mT, lambda m, a: a.flatten(), lambda m, a: a.astype(bool),
    lambda m, a: a.swapaxes(0, 1), lambda m, a: a.sum(axis=(0, 2)), lambda m, a: a.max(1),
    lambda m, a: a.cumsum(axis=1), lambda m, a: a.clip(0, 3), lambda m, a: a.round(),
    lambda m, a: a.argmax(axis=0), lambda m, a: a.prod(0), lambda m, a: a.all(),
    lambda m, a: a.conj(), lambda m, a: a.real, lambda m, a: a.imag, lambda m, a: a.std(),
]


_MANIP_X = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7) / 3
# jax's values for the whole table in one jitted program (tests/suiteb_util.py), rather than
# eager jax's compile per primitive per case; jit outputs keep their weak types
_MANIP_ORACLE = JaxTable(lambda: {i: (lambda a, fn=fn: fn(jnp_ref, a), [ref(_MANIP_X)])
                                  for i, fn in enumerate(MANIP)}, as_numpy=False)


@pytest.mark.parametrize("i", range(len(MANIP)))
def test_manipulation_and_methods(i):
    x = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7) / 3
    fn = MANIP[i]
    check_vs_jax_value(lambda a: fn(jnp, a), [x], _MANIP_ORACLE()[i])


def test_shape_helpers_and_errors():
    x = jnp.ones((2, 3))
    assert jnp.shape(x) == (2, 3) and jnp.ndim(x) == 2 and jnp.size(x) == 6
    assert jnp.size(x, 1) == 3 and jnp.shape(1.0) == ()
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="reshape"):
        jnp.reshape(x, (4, -1))
    with pytest.raises(NotImplementedError, match="order"):
        jnp.reshape(x, (3, 2), order="F")
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(jnp.arange(5), 2)
    # jax's wording (optax's tests match it): "Incompatible shapes for broadcasting: shapes=..."
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(2, 3\), \(4,\)\]"):
        jnp.broadcast_shapes((2, 3), (4,))


# --- operators ---------------------------------------------------------------------------------

OPS = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
       lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a ** 2, lambda a, b: 2 ** a,
       lambda a, b: 1.5 - a, lambda a, b: 3 // b, lambda a, b: -a, lambda a, b: +a,
       lambda a, b: abs(a), lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b,
       lambda a, b: a <= 1, lambda a, b: a > b, lambda a, b: 2 >= b, lambda a, b: 7 % b,
       lambda a, b: 10 / b, lambda a, b: 2 * a]
INT_OPS = [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a,
           lambda a, b: a << 1, lambda a, b: a >> 1, lambda a, b: 1 << b, lambda a, b: 5 & a]


def _operator_inputs(dtype):
    rng = np.random.default_rng(1)
    return [sample(rng, (2, 3), dtype, low=-4, high=4), sample(rng, (3,), dtype, low=1, high=3)]


def _operator_cases(dtype):
    ops = OPS + (INT_OPS if dtype == "int32" else [])
    return {i: (op, [ref(a) for a in _operator_inputs(dtype)]) for i, op in enumerate(ops)}


_OPERATOR_ORACLE = JaxTable(_operator_cases, as_numpy=False)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_operators_on_arrays_and_tracers(dtype):
    x, y = _operator_inputs(dtype)
    want = _OPERATOR_ORACLE(dtype)
    for i, op in enumerate(OPS + (INT_OPS if dtype == "int32" else [])):
        check_vs_jax_value(op, [x, y], want[i])


def test_operators_defer_to_unknown_types():
    class Other:
        def __radd__(self, other):
            return "radd"
    assert (jnp.ones(2) + Other()) == "radd"
    assert jnp.ones(2).__add__([1, 2]) is NotImplemented


def test_setitem_raises_with_at_hint():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"x = x\.at\[idx\]\.set\(y\)"):
        x[0] = 1

    def f(a):
        a[0] = 1
        return a
    with pytest.raises(TypeError, match=r"\.at\[idx\]"):
        yax.jit(f)(x)


def test_hash_of_arrays():
    with pytest.raises(TypeError):
        hash(jnp.zeros(2))


# --- x64 (the `x64` fixture of tests/conftest.py flips yax and the jax oracle together) --------


def test_x64_defaults_and_promotion(x64):
    for make in (lambda m: m.arange(3), lambda m: m.zeros(2), lambda m: m.array([1, 2.5]),
                 lambda m: m.sum(m.ones(3, m.int32)), lambda m: m.ones(2, m.float64) + 1,
                 lambda m: m.mean(m.arange(4)), lambda m: m.linspace(0, 1, 3),
                 lambda m: m.arange(3) * 1.5, lambda m: m.float_power(m.ones(2, m.float16), 2),
                 lambda m: m.argmax(m.arange(3))):
        want, got = make(jnp_ref), make(jnp)
        assert_close(got, np.asarray(want))
        assert got.weak_type == want.weak_type
    x = np.arange(4, dtype=np.int64) - 2
    check_vs_jax(lambda a: a // 3 + a.sum(), lambda a: a // 3 + a.sum(), [x])
    for a in (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.uint32)):
        for b in PROMO_DTYPES + PY_SCALARS:
            assert jnp.result_type(a, b) == jnp_ref.result_type(a, b)


def test_array_copies_and_asarray_does_not():
    # as jax: jnp.array/jnp.copy give an Array in a buffer of its own, so donating the copy to
    # a jitted function leaves the original alive; asarray hands the Array back
    x = jnp.arange(3.0)
    assert jnp.asarray(x) is x
    for copied in (jnp.array(x), jnp.copy(x), jnp.array(x, copy=True)):
        assert copied is not x and copied.sharding == x.sharding
        yax.jit(lambda a: a * 2, donate_argnums=0)(copied)
        np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])
