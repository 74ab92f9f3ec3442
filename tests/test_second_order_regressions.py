"""Regressions found by the per-primitive second-order table, each against real jax (or, where
jax defines no value, against central differences of jax's first derivative)."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np

import yax
import yax.numpy as jnp
from yax.interpreters.ad_util import float0

A = np.diag([1.0, 2.5, -1.5]) + 0.3 * np.arange(9.0).reshape(3, 3) / 9


def _eigval(np_mod):
    return lambda a: np_mod.real(np_mod.linalg.eigvals(a))[0] * np_mod.real(
        np_mod.linalg.eigvals(a)).sum()


def test_eigvals_second_derivative(x64):
    """eig's eigenvalue JVP bound eig with eigenvectors, whose JVP raised: no second derivative
    (jax has none either). Now the Hessian matches differences of jax's gradient."""
    np.testing.assert_allclose(np.asarray(yax.grad(_eigval(jnp))(A)),
                               np.asarray(jax.grad(_eigval(jjnp))(A)), rtol=1e-10)
    hess = np.asarray(yax.hessian(_eigval(jnp))(A))
    jax_grad, eps = jax.grad(_eigval(jjnp)), 1e-5
    for i, j in [(0, 1), (2, 0), (1, 1)]:
        e = np.zeros((3, 3))
        e[i, j] = eps
        fd = (np.asarray(jax_grad(A + e)) - np.asarray(jax_grad(A - e))) / (2 * eps)
        np.testing.assert_allclose(hess[..., i, j], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hess, hess.transpose(2, 3, 0, 1), rtol=1e-8, atol=1e-10)


def test_eig_eigenvectors_still_not_differentiable(x64):
    try:
        yax.jvp(lambda a: jnp.linalg.eig(a)[1], (A,), (A,))
    except yax.errors.NotImplementedRuleError as e:
        assert "eigenvectors" in str(e)
    else:
        raise AssertionError("eig's eigenvectors got a derivative")


def test_vjp_takes_float0_cotangents_for_integer_outputs(x64):
    """As jax: the cotangent of an integer output is float0 (yax raised a dtype error)."""
    x = np.array([0.3, 1.7, -2.2])

    def f(np_mod):
        return lambda v: (np_mod.argmax(v), v * v)
    cts = (np.zeros((), float0), np.ones(3))
    got = yax.vjp(f(jnp), x)[1](cts)[0]
    want = jax.vjp(f(jjnp), x)[1](cts)[0]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
