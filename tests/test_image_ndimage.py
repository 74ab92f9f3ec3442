"""yax.scipy.ndimage.map_coordinates and yax.image.resize / scale_and_translate against jax."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.image
import yax.scipy.ndimage


def test_map_coordinates_against_jax():
    import jax.scipy.ndimage as jnd
    rng = np.random.default_rng(0)
    image = rng.normal(size=(5, 6)).astype(np.float32)
    coords = [rng.uniform(-2.5, 7.5, size=(4, 3)).astype(np.float32) for _ in range(2)]
    cases = [(order, mode) for order in (0, 1)
             for mode in ("constant", "nearest", "wrap", "mirror", "reflect")]
    got = yax.jit(lambda im, c: [yax.scipy.ndimage.map_coordinates(im, c, o, mode=m, cval=1.5)
                                 for o, m in cases])(image, coords)
    for (order, mode), g in zip(cases, got, strict=True):
        want = jnd.map_coordinates(image, coords, order, mode=mode, cval=1.5)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=f"{order} {mode}")
    # vmap over a batch of images matches a loop
    batch = np.stack([image, 2 * image])
    out = yax.vmap(lambda im: yax.scipy.ndimage.map_coordinates(im, coords, 1))(batch)
    np.testing.assert_allclose(out[1], 2 * np.asarray(out[0]), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        yax.scipy.ndimage.map_coordinates(image, coords, 3)


def test_resize_against_jax():
    import jax
    import jax.image
    rng = np.random.default_rng(1)
    image = rng.uniform(size=(7, 9, 2)).astype(np.float32)
    # (12, 5) upscales one axis and downscales the other, so antialiasing matters
    cases = [(m, (12, 5, 2), True) for m in ("nearest", "linear", "cubic", "lanczos3",
                                              "lanczos5")]
    cases += [("linear", (3, 14, 2), False), ("lanczos3", (3, 14, 2), False)]
    got = yax.jit(lambda im: [yax.image.resize(im, s, m, antialias=a)
                              for m, s, a in cases])(image)
    want_all = jax.jit(lambda im: [jax.image.resize(im, s, m, antialias=a)
                                   for m, s, a in cases])(image)
    for (method, shape, _), g, want in zip(cases, got, want_all, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5, err_msg=f"{method} {shape}")


def test_scale_and_translate_against_jax():
    import jax
    import jax.image
    image = np.arange(30, dtype=np.float32).reshape(5, 6)
    args = ((8, 4), (0, 1), np.array([1.7, 0.6], np.float32), np.array([0.3, -1.0], np.float32))
    methods = ("linear", "cubic")
    got = yax.jit(lambda im: [yax.image.scale_and_translate(im, *args, method=m)
                              for m in methods])(image)
    want = jax.jit(lambda im: [jax.image.scale_and_translate(im, *args, method=m)
                               for m in methods])(image)
    for method, g, w in zip(methods, got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=method)
