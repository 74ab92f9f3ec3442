"""Results that equal jax's bit for bit, not just to a tolerance: complex sin/cos (JAX's
expm1-based formulas) and the eager gradient through a complex Cholesky factorisation (the
tutorials print these to the last digit); and the derivative of a non-symmetrised Cholesky,
which only reads one triangle of its operand."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.default_codegen import (
    default_codegen_only,
    needs_unoptimised_parent,
    run_with_default_codegen,
)
from tests.harness import JAX_0_10

_Z = (np.array([[0.3 + 2.5j, -1.2 + 0.01j, 0.0 + 7.0j],
                [4.0 - 0.2j, 1e-4 + 1e-6j, -3.0 - 30.0j]], np.complex64))


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_complex_sin_cos_equal_jax_bitwise(name):
    expected = np.asarray(getattr(jjnp, name)(_Z))
    eager = np.asarray(getattr(jnp, name)(_Z))
    jitted = np.asarray(yax.jit(getattr(jnp, name))(_Z))
    np.testing.assert_array_equal(eager, expected)
    np.testing.assert_array_equal(jitted, expected)
    # and the imaginary axis: sin(ib) is exactly imaginary, cos(ib) exactly real
    on_axis = np.array([2.0j, -0.5j], np.complex64)
    assert np.all(np.asarray(jnp.sin(on_axis)).real == 0)
    assert np.all(np.asarray(jnp.cos(on_axis)).imag == 0)


_A = np.array([[5., 2. + 3j, 5j], [2. - 3j, 7., 1. + 7j], [-5j, 1. - 7j, 12.]], np.complex64)


def _tutorial_loss(np_mod):
    def f(x):
        chol = np_mod.linalg.cholesky(x)
        return np_mod.sum((chol - np_mod.sin(chol)) ** 2)
    return f


def test_complex_cholesky_gradient_equals_jax_bitwise():
    expected = np.asarray(jax.grad(_tutorial_loss(jjnp), holomorphic=True)(_A))
    got = np.asarray(yax.grad(_tutorial_loss(jnp), holomorphic=True)(_A))
    np.testing.assert_array_equal(got, expected)
    w = np.arange(9).reshape(3, 3).astype(np.complex64) * (0.3 + 0.1j)
    _, jax_pullback = jax.vjp(jjnp.linalg.cholesky, _A)
    _, yax_pullback = yax.vjp(jnp.linalg.cholesky, _A)
    np.testing.assert_array_equal(np.asarray(yax_pullback(w)[0]),
                                  np.asarray(jax_pullback(w)[0]))


def test_unsymmetrised_cholesky_derivative_reads_the_lower_triangle_only():
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    t = np.array([[0.3, 5.0, -2.0], [0.1, 0.2, 7.0], [-0.4, 0.6, 0.5]])  # not symmetric
    with yax.enable_x64():
        chol = lambda x: yax.lax.linalg.cholesky(x, symmetrize_input=False)  # noqa: E731
        _, tangent = yax.jvp(chol, (a,), (t,))
        eps = 1e-6
        central = (np.asarray(chol(a + eps * t)) - np.asarray(chol(a - eps * t))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(tangent), central, rtol=1e-6, atol=1e-8)
        # the upper triangle of the tangent does not matter
        _, tangent_lower = yax.jvp(chol, (a,), (np.tril(t),))
        np.testing.assert_allclose(np.asarray(tangent), np.asarray(tangent_lower), atol=1e-12)


def _sum_logistic(np_mod):
    return lambda x: np_mod.sum(1.0 / (1.0 + np_mod.exp(-x)))


def test_jitted_hessian_equals_jax_bitwise():
    # the quickstart's `jit(jacfwd(jacrev(f)))`: the basis vectors are embedded constants that
    # XLA folds, as it folds jax's iota-built ones
    x = np.arange(3.0, dtype=np.float32)
    expected = np.asarray(jax.jit(jax.jacfwd(jax.jacrev(_sum_logistic(jjnp))))(x))
    got = np.asarray(yax.jit(yax.jacfwd(yax.jacrev(_sum_logistic(jnp))))(x))
    np.testing.assert_array_equal(got, expected)


def test_small_constants_are_embedded_and_large_ones_passed():
    small = np.arange(4.0, dtype=np.float32)
    large = np.arange(4096.0, dtype=np.float32)
    text_small = yax.jit(lambda x: x + small).lower(np.ones(4, np.float32)).as_text()
    text_large = yax.jit(lambda x: x + large).lower(np.ones(4096, np.float32)).as_text()
    assert "dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]>" in text_small
    assert text_small.count("%arg") == text_small.count("%arg0")  # one parameter: x
    assert "%arg1" in text_large  # the captured array travels as a parameter
    np.testing.assert_array_equal(yax.jit(lambda x: x + small)(np.ones(4, np.float32)),
                                  small + 1)
    # every dtype embeds exactly (a bool mask: one byte per element in jaxlib 0.10's MLIR)
    for const in (np.array([True, False, True, True, False]), np.arange(5, dtype=np.int8),
                  np.array([1 + 2j, -3j, 0, 4, 5], np.complex64), np.arange(5, dtype=np.uint32)):
        got = yax.jit(lambda x, c=const: (x, c))(np.zeros(5, np.float32))[1]
        np.testing.assert_array_equal(np.asarray(got), const)


def _cookbook_hessian(api):
    # the autodiff cookbook's logistic model and data (sigmoid through tanh), W and b drawn
    # from key 0 as there (yax's PRNG draws jax's bits)
    inputs = api.numpy.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30],
                              [0.74, -2.49, 1.39]])
    _, w_key, b_key = api.random.split(api.random.key(0), 3)
    w, b = api.random.normal(w_key, (3,)), api.random.normal(b_key, ())
    predict = lambda w: 0.5 * (api.numpy.tanh((api.numpy.dot(inputs, w) + b) / 2) + 1)  # noqa: E731
    return np.asarray(api.jacfwd(api.jacrev(predict))(w))


@default_codegen_only
@pytest.mark.skipif(not JAX_0_10, reason="rounds as jax 0.10's eager forward mode")
def test_eager_forward_over_reverse_equals_jax_bitwise():
    # jax's ufuncs are `jit(inline=True)`: under eager forward mode each one's transformed body
    # is one fused program (its JVP's multiply-adds contract); yax's unary ufuncs run the same
    # way. (Not every input rounds as jax's yet: docs/differences.md.)
    np.testing.assert_array_equal(_cookbook_hessian(yax), _cookbook_hessian(jax))
    # under staging the ufunc dissolves into the program: no call equation is staged
    jaxpr = str(yax.make_jaxpr(yax.jacfwd(yax.grad(lambda x: jnp.tanh(x))))(1.0))
    assert "jit" not in jaxpr and "tanh" in jaxpr


@pytest.mark.parametrize("compose", [
    lambda api, g: api.grad(api.jit(api.grad(api.jit(api.grad(g))))),   # the quickstart's
    lambda api, g: api.grad(api.jit(api.grad(api.grad(g)))),
    lambda api, g: api.grad(api.grad(api.grad(api.jit(g)))),
    lambda api, g: api.grad(api.jit(api.grad(g))),
], ids=["grad_jit_grad_jit_grad", "grad_jit_grad_grad", "grad_grad_grad_jit", "grad_jit_grad"])
@default_codegen_only
def test_eager_grad_of_jit_equals_jax_bitwise(compose):
    # jax runs an eager gradient through a jitted function as two fused programs (the known
    # part, the transposed one); the literal seeds fold into them, as jax folds converts
    want = compose(jax, _sum_logistic(jjnp))
    got = compose(yax, _sum_logistic(jnp))
    for x in (1.0, 0.3, -2.0, 5.0, 0.01):
        assert np.asarray(got(x)).item() == np.asarray(want(x)).item(), x


@needs_unoptimised_parent
def test_program_boundaries_round_as_jax_with_default_codegen():
    # the last bit of these depends on XLA's codegen, which the suite turns down for speed
    forward = ([f"{__file__}::test_eager_forward_over_reverse_equals_jax_bitwise"]
               if JAX_0_10 else [])
    run_with_default_codegen(*forward, f"{__file__}::test_eager_grad_of_jit_equals_jax_bitwise")


def test_staging_folds_conversions_of_literals_and_forwards_no_op_ones():
    # as jax's staging: converting a literal gives a literal, a conversion that changes nothing
    # leaves no equation
    jaxpr = yax.make_jaxpr(lambda x: x * yax.lax.convert_element_type(2, np.float32))(
        np.float32(1.0))
    assert [e.primitive.name for e in jaxpr.eqns] == ["mul"]
    assert "2.0:f32[]" in str(jaxpr)
    jaxpr = yax.make_jaxpr(lambda x: yax.lax.convert_element_type(x, np.float32) + 1)(
        np.float32(1.0))
    assert [e.primitive.name for e in jaxpr.eqns] == ["add"]
    jaxpr = yax.make_jaxpr(lambda x: yax.lax.convert_element_type(x, np.int32))(
        np.float32(1.0))
    assert [e.primitive.name for e in jaxpr.eqns] == ["convert_element_type"]
