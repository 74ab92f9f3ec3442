"""jnp.sort / jnp.argsort against NumPy and jax (stable, NaNs last, descending like jax)."""

from __future__ import annotations

import numpy as np
import pytest

import yax.numpy as ynp
from tests.harness import check_eager_and_jit


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_match_numpy(axis):
    x = np.array([[3.0, 1.0, np.nan], [1.0, 1.0, 0.0]], np.float32)
    check_eager_and_jit(lambda a: ynp.sort(a, axis=axis), [x], np.sort(x, axis=axis))
    want = np.argsort(x, axis=axis, kind="stable").astype(np.int32)
    check_eager_and_jit(lambda a: ynp.argsort(a, axis=axis), [x], want)


def test_descending_matches_jax():
    import jax.numpy as jnp
    x = np.array([3.0, 1.0, 2.0, 1.0, np.nan, 0.0], np.float32)
    np.testing.assert_array_equal(ynp.argsort(x, descending=True),
                                  jnp.argsort(x, descending=True))
    np.testing.assert_array_equal(ynp.sort(x, descending=True), jnp.sort(x, descending=True))
