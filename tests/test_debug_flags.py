"""debug_nans / debug_infs: the primitive that produced the NaN and the user's line are named."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp


@pytest.fixture
def flags():
    def set_flags(**kw):
        for k, v in kw.items():
            yax.config.update(k, v)
    yield set_flags
    set_flags(debug_nans=False, debug_infs=False)


def f(x):
    y = jnp.sin(x)
    z = jnp.log(y - 2.0)  # the NaN is made here
    return z * 2


def test_debug_nans_names_primitive_and_line_eager_and_jit(flags):
    flags(jax_debug_nans=True)  # the JAX name of the option works too
    pattern = r"invalid value \(nan\) encountered in log(.|\n)*test_debug_flags.py:23"
    for g in (f, yax.jit(f), yax.jit(lambda x: yax.jit(f)(x) + 1.0)):
        with pytest.raises(FloatingPointError, match=pattern):
            g(jnp.ones(3))
    ok = yax.jit(lambda x: jnp.sqrt(x) + 1)(jnp.ones(2))  # no NaN: no error
    np.testing.assert_allclose(ok, 2.0)


def test_debug_infs_and_flags_off(flags):
    flags(debug_infs=True)
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
        yax.jit(lambda x: 1.0 / x)(jnp.zeros(2))
    flags(debug_infs=False)
    assert np.isnan(np.asarray(f(jnp.ones(3)))).all()  # off: NaNs flow through
