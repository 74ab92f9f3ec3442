"""yax.scipy.signal against scipy.signal: every mode, both orders of sizes, complex inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

import yax
import yax.numpy as jnp
import yax.scipy.signal as ys
from yax import errors
from yax.test_util import check_grads

SHAPES = [((7,), (3,)), ((3,), (6,)), ((5, 6), (2, 3))]
FUNCS = ["convolve", "correlate", "fftconvolve"]


def _cases():
    for s1, s2 in SHAPES:
        for mode in ("full", "same", "valid"):
            for name in FUNCS:
                try:
                    getattr(ss, name)(np.ones(s1), np.ones(s2), mode=mode)
                except ValueError:
                    continue  # neither input contains the other: an error in both (tested below)
                yield name, s1, s2, mode


def test_values_match_scipy(x64):
    cases = list(_cases())
    rng = np.random.default_rng(0)
    args = [(rng.normal(size=s1), rng.normal(size=s2)) for _, s1, s2, _ in cases]
    fs = [lambda a, b, name=name, mode=mode: getattr(ys, name)(a, b, mode=mode)
          for name, _, _, mode in cases]
    got = yax.jit(lambda args: [f(a, b) for f, (a, b) in zip(fs, args, strict=True)])(args)
    for (name, s1, s2, mode), (a, b), g in zip(cases, args, got, strict=True):
        want = getattr(ss, name)(a, b, mode=mode)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-9, atol=1e-9,
                                   err_msg=f"{name} {s1} {s2} {mode}")


def test_complex_2d_and_detrend(x64):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6,)) + 1j * rng.normal(size=6)
    b = rng.normal(size=(3,)) + 1j * rng.normal(size=3)
    x, k = rng.normal(size=(5, 7)), rng.normal(size=(2, 3))

    def everything(a, b, x, k):
        return (ys.correlate(a, b), ys.convolve(a, b, "same"), ys.fftconvolve(a, b, "valid"),
                ys.convolve2d(x, k, "same"), ys.correlate2d(x, k, "valid"),
                ys.convolve(x, k, method="fft"), ys.detrend(x), ys.detrend(x, 0, "constant"),
                ys.fftconvolve(x, k[:1], axes=1))

    want = (ss.correlate(a, b), ss.convolve(a, b, "same"), ss.fftconvolve(a, b, "valid"),
            ss.convolve2d(x, k, "same"), ss.correlate2d(x, k, "valid"), ss.convolve(x, k),
            ss.detrend(x), ss.detrend(x, 0, "constant"), ss.fftconvolve(x, k[:1], axes=1))
    for i, (g, w) in enumerate(zip(yax.jit(everything)(a, b, x, k), want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-9, err_msg=str(i))


def test_eager_and_grads(x64):
    a, b = np.arange(5.0, dtype=np.float32), np.array([1.0, -1.0, 0.5], np.float32)
    got = ys.convolve(a, b, mode="same")
    np.testing.assert_allclose(np.asarray(got), ss.convolve(a, b, mode="same"), rtol=1e-6)
    a, b = a.astype(np.float64), b.astype(np.float64)
    check_grads(yax.jit(lambda a, b: jnp.sum(jnp.sin(ys.convolve(a, b)))), (a, b), order=1)
    check_grads(yax.jit(lambda a, b: jnp.sum(ys.fftconvolve(a, b, "same") ** 2)), (a, b),
                order=1, modes=("rev",))


def test_errors():
    with pytest.raises(errors.YaxError, match="mode"):
        ys.convolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(errors.YaxError, match="every dimension"):
        ys.convolve(np.ones((3, 2)), np.ones((2, 3)), mode="valid")
    with pytest.raises(errors.YaxError, match="2-D"):
        ys.convolve2d(np.ones(3), np.ones(2))


def test_spectral_analysis_matches_scipy(x64):
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(2, 300)), rng.normal(size=(2, 300))
    _, _, z = ss.stft(x, nperseg=64)

    def everything(x, y, z):
        return (ys.stft(x, fs=10.0, nperseg=64),
                ys.stft(x, nperseg=50, noverlap=20, nfft=64, boundary=None, padded=False,
                        detrend="linear", window="hamming"),
                ys.welch(x, fs=5.0, nperseg=64),
                ys.welch(x, nperseg=60, scaling="spectrum", average="median"),
                ys.csd(x, y, nperseg=64), ys.istft(z, nperseg=64))

    want = (ss.stft(x, fs=10.0, nperseg=64),
            ss.stft(x, nperseg=50, noverlap=20, nfft=64, boundary=None, padded=False,
                    detrend="linear", window="hamming"),
            ss.welch(x, fs=5.0, nperseg=64),
            ss.welch(x, nperseg=60, scaling="spectrum", average="median"),
            ss.csd(x, y, nperseg=64), ss.istft(z, nperseg=64))
    got = yax.jit(everything)(x, y, z)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        for gv, wv in zip(g, w, strict=True):
            np.testing.assert_allclose(np.asarray(gv), wv, rtol=1e-9, atol=1e-10, err_msg=str(i))
    roundtrip = yax.jit(lambda x: ys.istft(ys.stft(x, nperseg=64)[2], nperseg=64)[1])(x)
    np.testing.assert_allclose(np.asarray(roundtrip)[..., :300], x, atol=1e-10)
