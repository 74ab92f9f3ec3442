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
