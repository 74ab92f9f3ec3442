"""`arange`'s bounds: scalars work, anything else raises the class jax raises (an object that
answers every attribute, as a plotting stand-in does, is not a symbolic dimension)."""

from __future__ import annotations

import jax.numpy as jjnp
import numpy as np
import pytest

import yax.numpy as jnp


class _AnswersEverything:
    def __getattr__(self, name):
        return _AnswersEverything()

    def __call__(self, *args, **kwargs):
        return _AnswersEverything()


@pytest.mark.parametrize("bad", [np.array([3]), [1, 2], (4,), _AnswersEverything()],
                         ids=["array", "list", "tuple", "answers_everything"])
def test_non_scalar_bounds_raise_as_in_jax(bad):
    with pytest.raises(Exception) as theirs:
        jjnp.arange(bad)
    with pytest.raises(type(theirs.value)):
        jnp.arange(bad)


@pytest.mark.parametrize("args", [(3,), (2.5,), (np.array(3),), (1, 7, 2), (np.int8(5),)])
def test_scalar_bounds_give_jaxs_values(args):
    want = jjnp.arange(*args)
    got = jnp.arange(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
