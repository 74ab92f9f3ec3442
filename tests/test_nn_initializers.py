"""yax.nn.initializers against jax.nn.initializers: bit-identical arrays for the same key."""

from __future__ import annotations

import jax
import jax.nn.initializers as ji
import numpy as np
import pytest

import yax
import yax.nn.initializers as yi

CASES = [
    ("glorot_uniform", (), (5, 7)), ("glorot_normal", (), (3, 3, 4, 8)),
    ("lecun_uniform", (), (4, 6)), ("lecun_normal", (), (4, 6)), ("he_uniform", (), (2, 3, 5)),
    ("he_normal", (), (6, 2)), ("orthogonal", (), (4, 3)), ("orthogonal", (2.0, 0), (2, 5)),
    ("delta_orthogonal", (), (3, 3, 4, 6)), ("normal", (), (3, 4)), ("uniform", (0.5,), (3, 4)),
    ("truncated_normal", (1.0,), (3, 4)), ("constant", (2.5,), (2, 3)),
]


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,args,shape", CASES, ids=[f"{c[0]}{c[2]}" for c in CASES])
def test_matches_jax(name, args, shape):
    for seed in (0, 42):
        assert_same(getattr(yi, name)(*args)(yax.random.key(seed), shape),
                    getattr(ji, name)(*args)(jax.random.key(seed), shape))


def test_variance_scaling_modes_axes_dtypes(x64):
    for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        for dist in ("truncated_normal", "normal", "uniform"):
            for dtype in (np.float32, np.float64)[(mode == "fan_in"):]:
                ours = yi.variance_scaling(0.5, mode, dist, in_axis=0, out_axis=(1, 2))
                theirs = ji.variance_scaling(0.5, mode, dist, in_axis=0, out_axis=(1, 2))
                assert_same(ours(yax.random.PRNGKey(1), (4, 2, 3), dtype),
                            theirs(jax.random.PRNGKey(1), (4, 2, 3), dtype))
    for dist in ("normal", "uniform", "truncated_normal"):
        assert_same(yi.variance_scaling(1.0, "fan_in", dist)(yax.random.key(0), (3, 2),
                                                             np.complex64),
                    ji.variance_scaling(1.0, "fan_in", dist)(jax.random.key(0), (3, 2),
                                                             np.complex64))


def test_zeros_ones_aliases_and_errors():
    assert yi.xavier_uniform is yi.glorot_uniform and yi.kaiming_normal is yi.he_normal
    assert yi.xavier_normal is yi.glorot_normal and yi.kaiming_uniform is yi.he_uniform
    assert_same(yi.zeros(yax.random.key(0), (2, 3)), ji.zeros(jax.random.key(0), (2, 3)))
    assert_same(yi.ones(yax.random.key(0), (2,), np.int32), ji.ones(jax.random.key(0), (2,),
                                                                    np.int32))
    with pytest.raises(ValueError, match="in_axis"):
        yi.glorot_uniform()(yax.random.key(0), (3,))
    with pytest.raises(ValueError, match="mode"):
        yi.variance_scaling(1.0, "fan_bad", "normal")
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        yi.delta_orthogonal()(yax.random.key(0), (3, 3))


def test_under_jit():
    init = yi.he_normal()
    ours = yax.jit(lambda k: init(k, (4, 5)))(yax.random.key(2))
    assert_same(ours, ji.he_normal()(jax.random.key(2), (4, 5)))
