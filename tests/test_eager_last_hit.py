"""The eager path's memo of each primitive's last hit (interpreters/eager.py `_last_hit`): a
repeated application skips the cache key, and anything that differs (avals, weak types,
params, device, x64, cleared caches) still finds its own executable."""

from __future__ import annotations

import numpy as np

import yax
import yax.numpy as ynp
from yax import lax
from yax.interpreters import eager


def arr(x, dtype=np.float32):
    return yax.device_put(np.asarray(x, dtype))


def test_repeated_and_alternating_applications_agree_with_numpy():
    x = arr(np.arange(6).reshape(2, 3))
    for _ in range(3):
        np.testing.assert_allclose(ynp.sum(x, axis=0), [3.0, 5.0, 7.0])
        np.testing.assert_allclose(ynp.sum(x, axis=1), [3.0, 12.0])  # other params
        np.testing.assert_allclose(ynp.sum(x), 15.0)
    y = arr([0.5, 1.0])
    for _ in range(3):
        np.testing.assert_allclose(ynp.sin(y), np.sin([0.5, 1.0]), rtol=1e-6)
        assert ynp.sin(arr([0.5, 1.0, 2.0])).shape == (3,)  # other avals
        assert ynp.sin(arr([0.5], np.float16)).dtype == np.float16
    weak = lax.sin(yax.numpy.asarray(2.0))  # a weak aval: its own executable and result
    strong = lax.sin(arr(2.0))
    assert weak.weak_type and not strong.weak_type


def test_the_memo_holds_the_last_hit_and_is_emptied_with_the_caches():
    x = arr([1.0, 2.0])
    ynp.exp(x), ynp.exp(x)
    hits = [v for v in eager._last_hit.values() if v[0] == (x.aval,)]
    assert hits
    yax.clear_caches()
    assert not eager._last_hit
    np.testing.assert_allclose(ynp.exp(x), np.exp([1.0, 2.0]), rtol=1e-6)


def test_x64_changes_never_reuse_a_32_bit_executable(x64):
    yax.config.update("enable_x64", False)
    f32 = ynp.cos(arr([1.0]))
    f32 = ynp.cos(arr([1.0]))
    yax.config.update("enable_x64", True)
    f64 = ynp.cos(arr([1.0], np.float64))
    f64 = ynp.cos(arr([1.0], np.float64))
    assert f32.dtype == np.float32 and f64.dtype == np.float64
    np.testing.assert_allclose(f64, np.cos([1.0]), rtol=1e-12)
