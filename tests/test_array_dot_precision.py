"""`Array.dot(b, precision=, preferred_element_type=)` as jax's method: the keywords reach the
dot_general, on arrays and on tracers."""

from __future__ import annotations

import inspect

import jax
import numpy as np

import yax
import yax.numpy as jnp

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_dot_method_signature_as_jax():
    ours = inspect.signature(jnp.ones(1).dot).parameters
    theirs = inspect.signature(jax.numpy.ones(1).dot).parameters
    assert list(ours) == list(theirs)


def test_dot_method_precision_and_result_type_as_jax():
    for precision, jprec in ((None, None), ("highest", "highest"),
                             (yax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)):
        got = jnp.asarray(A).dot(B, precision=precision, preferred_element_type=np.float32)
        want = jax.numpy.asarray(A).dot(B, precision=jprec, preferred_element_type=np.float32)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        assert got.dtype == want.dtype


def test_dot_method_precision_in_the_traced_program():
    jaxpr = yax.make_jaxpr(lambda a, b: a.dot(b, precision=yax.lax.Precision.HIGHEST))(A, B)
    (eqn,) = jaxpr.eqns
    assert "HIGHEST" in str(eqn.params["precision"])
    out = yax.jit(lambda a, b: a.dot(b, preferred_element_type=np.float32))(A.astype(np.int8),
                                                                            B.astype(np.int8))
    assert out.dtype == np.float32
