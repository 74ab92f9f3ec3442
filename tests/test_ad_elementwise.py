"""Differentiation of the elementwise family: JVP vs finite differences and VJP by the
transposition identity (order 2) on hypothesis-drawn float64 inputs away from non-differentiable
points, the conventions at those points against real jax, linear transposes, and jit(grad)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import yax
from tests.harness import JAX_0_10
from yax import lax
from yax.interpreters.ad_util import float0
from yax.test_util import check_grads

SETTINGS = settings(max_examples=5, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
SHAPES = st.sampled_from([(), (3,), (2, 3)])


def near_int_or_half(v) -> bool:
    """Within 0.1 of a jump of floor/ceil/round (integers and halves)."""
    return abs(v * 2 - np.round(v * 2)) < 0.2


def near_zero(v) -> bool:
    return abs(v) < 0.2


# name -> (low, high, points to avoid): the domain where the derivative is smooth
UNARY_DOMAINS = {
    "neg": (-3, 3, None), "sign": (-3, 3, near_zero), "floor": (-3, 3, near_int_or_half),
    "ceil": (-3, 3, near_int_or_half), "round": (-3, 3, near_int_or_half),
    "abs": (-3, 3, near_zero), "exp": (-3, 3, None), "exp2": (-3, 3, None),
    "log": (0.1, 5, None), "log1p": (-0.9, 5, None), "expm1": (-3, 3, None),
    "sqrt": (0.1, 5, None), "rsqrt": (0.1, 5, None), "cbrt": (-3, 3, near_zero),
    "sin": (-3, 3, None), "cos": (-3, 3, None), "tan": (-1.2, 1.2, None),
    "asin": (-0.9, 0.9, None), "acos": (-0.9, 0.9, None), "atan": (-3, 3, None),
    "sinh": (-2, 2, None), "cosh": (-2, 2, None), "tanh": (-2, 2, None),
    "asinh": (-3, 3, None), "acosh": (1.1, 4, None), "atanh": (-0.9, 0.9, None),
    "logistic": (-3, 3, None), "erf": (-2, 2, None), "erfc": (-2, 2, None),
    "erf_inv": (-0.9, 0.9, None), "lgamma": (0.1, 5, None),
    # negative arguments exercise the reflection branch of the trigamma used by the rule
    "digamma": (-0.8, 5, lambda v: -0.2 < v < 0.2),
}
UNARY_FNS = {name: getattr(lax, name) for name in UNARY_DOMAINS}


def floats(low, high, avoid=None):
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False)
    return elements.filter(lambda v: not avoid(v)) if avoid else elements


def arrays(shape, low, high, avoid=None):
    return hnp.arrays(np.float64, shape, elements=floats(low, high, avoid))


@pytest.mark.parametrize("name", sorted(UNARY_DOMAINS))
@SETTINGS
@given(data=st.data())
def test_unary_grads(x64, name, data):
    low, high, avoid = UNARY_DOMAINS[name]
    x = data.draw(arrays(data.draw(SHAPES), low, high, avoid))
    check_grads(UNARY_FNS[name], (x,), order=2, modes=("fwd", "rev"))


@st.composite
def operand_pair(draw, low=-3.0, high=3.0, x_avoid=None, y_avoid=None):
    """Two operands of one shape, either possibly rank 0 (implicit scalar broadcasting)."""
    shape = draw(SHAPES)
    x_shape, y_shape = draw(st.sampled_from([(shape, shape), ((), shape), (shape, ())]))
    return (draw(arrays(x_shape, low, high, x_avoid)), draw(arrays(y_shape, low, high, y_avoid)))


@st.composite
def apart_pair(draw):
    """max/min operands at least 0.1 apart (no ties)."""
    shape = draw(SHAPES)
    x = draw(arrays(shape, -3, 3))
    gap = draw(arrays(shape, -2, 2, lambda v: abs(v) < 0.1))
    return x, x + gap


@st.composite
def rem_pair(draw):
    """x = y (k + f) with the fractional part f away from the jumps of rem at integers."""
    shape = draw(SHAPES)
    y = draw(arrays(shape, -2, 2, lambda v: abs(v) < 0.3))
    q = draw(arrays(shape, -4, 4, lambda v: abs(v - np.round(v)) < 0.1))
    return y * q, y


@st.composite
def pow_pair(draw):
    return draw(arrays((), 0.3, 3)), draw(arrays(draw(SHAPES), -2, 2))


BINARY_CASES = {
    "add": (lax.add, operand_pair()),
    "sub": (lax.sub, operand_pair()),
    "mul": (lax.mul, operand_pair()),
    "div": (lax.div, operand_pair(y_avoid=lambda v: abs(v) < 0.3)),
    "rem": (lax.rem, rem_pair()),
    "pow": (lax.pow, operand_pair(0.3, 3)),
    "pow_scalar_base": (lax.pow, pow_pair()),
    "max": (lax.max, apart_pair()),
    "min": (lax.min, apart_pair()),
    # away from the branch cut x = 0, y < 0
    "atan2": (lax.atan2, operand_pair(x_avoid=lambda v: abs(v) < 0.3)),
}


@pytest.mark.parametrize("name", sorted(BINARY_CASES))
@SETTINGS
@given(data=st.data())
def test_binary_grads(x64, name, data):
    fn, pair = BINARY_CASES[name]
    check_grads(fn, data.draw(pair), order=2, modes=("fwd", "rev"))


@SETTINGS
@given(data=st.data(), y=st.sampled_from([-3, -2, -1, 0, 1, 2, 3, 5]))
def test_integer_pow_grads(x64, data, y):
    x = data.draw(arrays(data.draw(SHAPES), -2, 2, lambda v: abs(v) < 0.3))
    check_grads(lambda v: lax.integer_pow(v, y), (x,), order=2, modes=("fwd", "rev"))


@SETTINGS
@given(data=st.data())
def test_pow_integer_exponent_grads(x64, data):
    shape = data.draw(SHAPES)
    x = data.draw(arrays(shape, -2, 2, lambda v: abs(v) < 0.3))
    y = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-2, 3)))
    check_grads(lambda v: lax.pow(v, y), (x,), order=2, modes=("fwd", "rev"))


@SETTINGS
@given(data=st.data(), n_cases=st.integers(1, 3))
def test_select_n_grads(x64, data, n_cases):
    shape = data.draw(SHAPES)
    if n_cases <= 2 and data.draw(st.booleans()):
        which = data.draw(hnp.arrays(np.bool_, data.draw(st.sampled_from([(), shape]))))
    else:
        which = data.draw(hnp.arrays(np.int32, data.draw(st.sampled_from([(), shape])),
                                     elements=st.integers(0, n_cases - 1)))
    cases = tuple(data.draw(arrays(data.draw(st.sampled_from([(), shape])), -3, 3))
                  for _ in range(n_cases))
    check_grads(lambda *cs: lax.select_n(which, *cs), cases, order=2, modes=("fwd", "rev"))


@SETTINGS
@given(data=st.data())
def test_clamp_grads(x64, data):
    shape = data.draw(SHAPES)
    lo = data.draw(arrays(data.draw(st.sampled_from([(), shape])), -2, -1))
    hi = data.draw(arrays(data.draw(st.sampled_from([(), shape])), 1, 2))
    x = data.draw(arrays(shape, -3, 3))
    # keep x at least 0.1 away from both bounds (gradients jump there)
    x = np.where(np.abs(x - lo) < 0.1, lo - 0.3, x)
    x = np.where(np.abs(x - hi) < 0.1, hi + 0.3, x)
    check_grads(lax.clamp, (lo, x, hi), order=2, modes=("fwd", "rev"))


@SETTINGS
@given(data=st.data())
def test_convert_element_type_grads(x64, data):
    x = data.draw(arrays(data.draw(SHAPES), -3, 3))
    to_c128 = lambda v: lax.real(lax.mul(lax.convert_element_type(v, np.complex128), 2.0 + 1j))  # noqa: E731
    check_grads(to_c128, (x,), order=2, modes=("fwd", "rev"))
    complex_to_real = lambda v: lax.convert_element_type(  # noqa: E731
        lax.mul(lax.convert_element_type(v, np.complex128), 1.0 - 2j), np.float64)
    check_grads(complex_to_real, (x,), order=2, modes=("fwd", "rev"))
    # through float32: finite differences need a coarser step and tolerance
    via_f32 = lambda v: lax.convert_element_type(lax.convert_element_type(v, np.float32) ** 2,  # noqa: E731
                                                 np.float64)
    check_grads(via_f32, (x,), order=2, modes=("fwd", "rev"), eps=1e-2, atol=1e-3, rtol=1e-3)


# --- symbolic zeros: integer/bool outputs and non-differentiable primitives ---

ZERO_TANGENT_CASES = {
    "is_finite": lambda x: lax.is_finite(x),
    "eq": lambda x: lax.eq(x, 0.5), "ne": lambda x: lax.ne(x, 0.5), "lt": lambda x: lax.lt(x, 0.5),
    "le": lambda x: lax.le(x, 0.5), "gt": lambda x: lax.gt(x, 0.5), "ge": lambda x: lax.ge(x, 0.5),
    "to_int": lambda x: lax.convert_element_type(x, np.int32),
    "to_bool": lambda x: lax.convert_element_type(x, np.bool_),
    "bitcast": lambda x: lax.bitcast_convert_type(x, np.int64),
    "nextafter": lambda x: lax.nextafter(x, 10.0),
    "sign": lax.sign, "floor": lax.floor, "round": lax.round,
    "int_path": lambda x: lax.population_count(lax.bitwise_not(lax.bitwise_xor(
        lax.convert_element_type(x, np.int32), 3))),
}


@pytest.mark.parametrize("name", sorted(ZERO_TANGENT_CASES))
def test_zero_tangents(x64, name):
    x = np.array([0.3, 1.7, -2.2])
    fn = ZERO_TANGENT_CASES[name]
    out, t_out = yax.jvp(fn, (x,), (np.ones(3),))
    out = np.asarray(out)
    t_out = np.asarray(t_out)
    if np.issubdtype(out.dtype, np.inexact):
        np.testing.assert_array_equal(t_out, np.zeros_like(out))
    else:
        assert t_out.dtype == float0
    # and reverse mode: the gradient through the primitive is exactly zero
    g = yax.grad(lambda v: lax.convert_element_type(fn(v), np.float64).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), np.zeros(3))


# --- linear primitives: transposes ---

LINEAR_CASES = {
    "neg": (lax.neg, lambda ct: -ct),
    "div": (lambda v: lax.div(v, 4.0), lambda ct: ct / 4),
    "mul_scalar_bcast": (lambda v: lax.mul(v, np.arange(3.0)),
                         lambda ct: (ct * np.arange(3.0)).sum()),
    "add_bcast": (lambda v: lax.add(v, np.ones(3)), lambda ct: ct.sum()),
    "sub": (lambda v: lax.sub(1.0, v), lambda ct: -ct),
    "select": (lambda v: lax.select(np.array([True, False, True]), v, np.zeros(3)),
               lambda ct: ct * np.array([1.0, 0.0, 1.0])),
    "convert": (lambda v: lax.convert_element_type(v, np.float32), lambda ct: ct),
}


@pytest.mark.parametrize("name", sorted(LINEAR_CASES))
def test_linear_transpose(x64, name):
    fn, expected = LINEAR_CASES[name]
    x = np.zeros(()) if name in ("mul_scalar_bcast", "add_bcast") else np.zeros(3)
    out = np.asarray(fn(x))
    ct = np.arange(1.0, 1.0 + out.size).reshape(out.shape).astype(out.dtype)
    got, = yax.linear_transpose(fn, x)(ct)
    np.testing.assert_allclose(np.asarray(got), expected(ct.astype(np.float64)), rtol=1e-12)
    check_grads(fn, (x + 0.5,), order=2, modes=("rev",))


# --- complex: forward mode by finite differences, reverse mode against JAX's convention ---

def _check_bilinear_transpose(fn, z, rng):
    """<u, J t> == <J^T u, t> under Re(sum(a * b)) (JAX's convention for complex cotangents;
    `yax.test_util.check_vjp` pairs with a conjugate, which suits no complex transpose rule)."""
    t = rng.normal(size=z.shape) + 1j * rng.normal(size=z.shape)
    out, t_out = yax.jvp(fn, (z,), (t,))
    u = rng.normal(size=np.shape(out)).astype(np.asarray(out).dtype)
    ct, = yax.vjp(fn, z)[1](u)
    lhs = np.real(np.sum(u * np.asarray(t_out)))
    rhs = np.real(np.sum(np.asarray(ct) * t))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)


COMPLEX_CASES = {"abs": lax.abs, "real": lax.real, "imag": lax.imag, "conj": lax.conj,
                 "exp": lax.exp, "sin": lax.sin, "mul": lambda z: lax.mul(z, 0.5 - 2j),
                 "to_real": lambda z: lax.convert_element_type(z, np.float64)}


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex_grads(x64, name):
    rng = np.random.default_rng(0)
    # rank 0: complex zeros of rank >= 1 do not lower yet (mlir.constant's splat path)
    z = np.complex128(rng.normal() + 1j * rng.normal())
    fn = COMPLEX_CASES[name]
    check_grads(fn, (z,), order=2, modes=("fwd",))
    _check_bilinear_transpose(fn, z, rng)
    # the value jax's vjp gives (same convention)
    jfn = {"abs": jnp.abs, "real": jnp.real, "imag": jnp.imag, "conj": jnp.conj,
           "exp": jnp.exp, "sin": jnp.sin, "mul": lambda v: v * (0.5 - 2j),
           "to_real": lambda v: jnp.real(v)}[name]
    u = np.asarray(fn(z))
    want, = jax.vjp(jfn, z)[1](u)
    got, = yax.vjp(fn, z)[1](u)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


# --- conventions at non-differentiable points, against jax.grad ---

def _clamp_cases():
    return [(f"clamp_x={x}", lax.clamp, jax.lax.clamp, (0.0, x, 1.0), (0, 1, 2))
            for x in (-1.0, 0.0, 0.5, 1.0, 2.0)]


def _pow_cases():
    cases = [(f"pow_dx_y={y}", lambda x, y: lax.pow(x, y), jax.lax.pow, (0.0, y), 0)
             for y in (2.0, 1.0, 0.5, 0.0, -1.0)]
    cases += [(f"pow_dy_y={y}", lambda x, y: lax.pow(x, y), jax.lax.pow, (0.0, y), 1)
              for y in (2.0, 0.0, -1.0)]
    cases += [("pow_dy_negative_base", lambda x, y: lax.pow(x, y), jax.lax.pow, (-2.0, 2.0), 1),
              ("pow_int_exponent_0", lambda x: lax.pow(x, np.int64(0)),
               lambda x: jax.lax.pow(x, jnp.int64(0)), (0.0,), 0)]
    cases += [(f"integer_pow_{n}", lambda x, n=n: lax.integer_pow(x, n),
               lambda x, n=n: jax.lax.integer_pow(x, n), (0.0,), 0) for n in (0, 1, 2, 3, -1, -2)]
    return cases


CONVENTIONS = [
    ("abs_at_0", lax.abs, jax.lax.abs, (0.0,), 0),
    ("abs_complex_at_0", lax.abs, jax.lax.abs, (0j,), 0),
    ("sign_at_0", lax.sign, jax.lax.sign, (0.0,), 0),
    ("floor_at_1", lax.floor, jax.lax.floor, (1.0,), 0),
    ("ceil_at_1", lax.ceil, jax.lax.ceil, (1.0,), 0),
    ("round_at_half", lax.round, jax.lax.round, (0.5,), 0),
    ("round_even_at_2.5", lambda x: lax.round(x, 1),
     lambda x: jax.lax.round(x, jax.lax.RoundingMethod.TO_NEAREST_EVEN), (2.5,), 0),
    ("max_tie", lax.max, jax.lax.max, (1.0, 1.0), (0, 1)),
    ("min_tie", lax.min, jax.lax.min, (1.0, 1.0), (0, 1)),
    ("max_no_tie", lax.max, jax.lax.max, (1.0, 2.0), (0, 1)),
    ("sqrt_at_0", lax.sqrt, jax.lax.sqrt, (0.0,), 0),
    ("rsqrt_at_0", lax.rsqrt, jax.lax.rsqrt, (0.0,), 0),
    ("cbrt_at_0", lax.cbrt, jax.lax.cbrt, (0.0,), 0),
    ("log_at_0", lax.log, jax.lax.log, (0.0,), 0),
    ("rem_at_jump", lax.rem, jax.lax.rem, (6.0, 3.0), (0, 1)),
    ("atan2_at_origin", lax.atan2, jax.lax.atan2, (0.0, 0.0), (0, 1)),
    ("asin_at_1", lax.asin, jax.lax.asin, (1.0,), 0),
    ("acosh_at_1", lax.acosh, jax.lax.acosh, (1.0,), 0),
    ("erf_inv_at_1", lax.erf_inv, jax.lax.erf_inv, (1.0,), 0),
    ("digamma_reflection", lax.digamma, jax.lax.digamma, (-0.6,), 0),
    ("digamma_small", lax.digamma, jax.lax.digamma, (0.3,), 0),
    ("digamma_large", lax.digamma, jax.lax.digamma, (7.5,), 0),
    ("lgamma", lax.lgamma, jax.lax.lgamma, (2.5,), 0),
    ("select_n", lambda p, x, y: lax.select_n(p, x, y), jax.lax.select_n,
     (np.bool_(True), 1.0, 2.0), (1, 2)),
    ("to_int_and_back", lambda x: lax.convert_element_type(
        lax.convert_element_type(x, np.int32), np.float64),
     lambda x: x.astype(jnp.int32).astype(jnp.float64), (1.5,), 0),
    *_clamp_cases(), *_pow_cases(),
]


# domain edges (where only the first derivative is a documented convention) and complex inputs
# (jax.grad refuses a complex first derivative as the function of a second grad)
FIRST_ORDER_ONLY = {"asin_at_1", "acosh_at_1", "erf_inv_at_1", "abs_complex_at_0"}


def _as_x64(args):
    return tuple(np.asarray(a, np.float64) if isinstance(a, float) else a for a in args)


@pytest.mark.parametrize("case", CONVENTIONS, ids=[c[0] for c in CONVENTIONS])
@pytest.mark.parametrize("order", [1, 2])
def test_convention_matches_jax(x64, case, order):
    _, fn, jfn, args, argnums = case
    if order == 2 and (not isinstance(argnums, int) or case[0] in FIRST_ORDER_ONLY):
        pytest.skip("second derivatives are compared for real single-argument conventions")
    args = _as_x64(args)
    ours = yax.grad(fn, argnums)
    theirs = jax.grad(jfn, argnums)
    if order == 2:
        ours, theirs = yax.grad(ours, argnums), jax.grad(theirs, argnums)
    got, want = ours(*args), theirs(*args)
    for g, w in zip(yax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12,
                                   equal_nan=True, err_msg=case[0])


def test_max_tie_second_derivative_is_zero(x64):
    h = yax.grad(yax.grad(lambda x: lax.max(x, 1.0)))(np.float64(1.0))
    assert float(h) == 0.0
    if JAX_0_10:  # jax 0.11's hessian of a Python float raises (AttributeError: no dtype)
        assert float(jax.hessian(lambda x: jax.lax.max(x, 1.0))(1.0)) == 0.0


# --- composition with jit ---

JIT_CASES = {**{name: (fn, (np.array([0.35, 0.6]),)) for name, fn in UNARY_FNS.items()},
             **{name: (fn, (np.array([0.7, 1.6]), np.array([1.3, 0.4])))
                for name, (fn, _) in BINARY_CASES.items()},
             "clamp": (lax.clamp, (np.float64(-1.0), np.array([-2.0, 0.3]), np.float64(1.0))),
             "integer_pow": (lambda x: lax.integer_pow(x, 3), (np.array([0.7, 1.6]),)),
             "select_n": (lambda x, y: lax.select_n(np.array([0, 1], np.int32), x, y),
                          (np.array([0.7, 1.6]), np.array([1.3, 0.4])))}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_jit_of_grad(x64, name):
    fn, args = JIT_CASES[name]
    argnums = tuple(range(len(args)))
    g = yax.grad(lambda *a: fn(*a).sum(), argnums)
    for got, want in zip(yax.jit(g)(*args), g(*args), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-14)
