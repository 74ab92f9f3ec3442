"""Control flow nested in control flow, eagerly and under jit, and the Python-loop hints."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax


def _nested(x):
    """A while_loop whose body has a cond whose true branch runs a scan."""
    def accumulate(u):
        return lax.scan(lambda c, t: (c + jnp.sin(t) * u, None), u, jnp.arange(3.0))[0]

    def body(carry):
        i, v = carry
        return i + 1, lax.cond(i % 2 == 0, accumulate, lambda u: u * 0.5, v)
    return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


def _reference(x):
    v = x
    for i in range(4):
        if i % 2 == 0:
            c = v
            for t in range(3):
                c = c + np.sin(t) * v
            v = c
        else:
            v = v * 0.5
    return v


def test_scan_in_cond_in_while_eager_and_jit():
    for x in (0.3, -1.2):
        np.testing.assert_allclose(_nested(x), _reference(x), rtol=1e-5)
        np.testing.assert_allclose(yax.jit(_nested)(x), _reference(x), rtol=1e-5)


def test_nested_control_flow_under_vmap_and_jvp():
    xs = np.array([0.3, -1.2, 2.0], np.float32)
    np.testing.assert_allclose(yax.vmap(_nested)(xs), [_reference(x) for x in xs], rtol=1e-5)
    _, t = yax.jvp(_nested, (0.3,), (1.0,))
    eps = 1e-3
    np.testing.assert_allclose(t, (_reference(0.3 + eps) - _reference(0.3 - eps)) / (2 * eps),
                               rtol=1e-2)


def test_python_range_over_traced_bound_points_to_fori_loop():
    def f(n):
        total = 0.0
        for i in range(n):
            total = total + i
        return total
    with pytest.raises(yax.errors.TracerIntegerConversionError, match="fori_loop"):  # as JAX
        yax.jit(f)(3)
