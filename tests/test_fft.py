"""The fft primitive and yax.numpy.fft against jax.numpy.fft: values, derivatives, vmap, jit."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import errors
from yax.test_util import check_grads

# (function, input shape, complex input, keyword arguments): every transform, with n/s, axes and
# each norm somewhere; shapes of odd and even lengths (RFFT's Nyquist bin).
CASES = [
    ("fft", (3, 5), True, {}),
    ("fft", (4, 6), False, {"n": 8, "axis": 0, "norm": "ortho"}),
    ("ifft", (3, 5), True, {"n": 4, "norm": "forward"}),
    ("rfft", (2, 7), False, {}),
    ("rfft", (2, 6), False, {"n": 9, "axis": 0, "norm": "ortho"}),
    ("irfft", (3, 4), True, {}),
    ("irfft", (3, 4), True, {"n": 7, "norm": "forward"}),
    ("fft2", (2, 3, 4), True, {"s": (4, 2)}),
    ("ifft2", (3, 4), True, {"axes": (1, 0), "norm": "ortho"}),
    ("rfft2", (3, 6), False, {"norm": "forward"}),
    ("irfft2", (4, 3), True, {"s": (4, 5)}),
    ("fftn", (2, 2, 3, 2), True, {}),  # four axes: done in two chunks
    ("ifftn", (3, 4), True, {"axes": (0,)}),
    ("rfftn", (2, 3, 2, 4), False, {}),
    ("irfftn", (2, 3, 2, 3), True, {"s": (2, 3, 2, 4)}),
    ("hfft", (5,), True, {"n": 9, "norm": "ortho"}),
    ("ihfft", (6,), False, {}),
]


def _input(shape, is_complex, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    return x + 1j * rng.normal(size=shape) if is_complex else x


def _apply(module, name, kw):
    return lambda v: getattr(module.fft, name)(v, **kw)


def test_values_match_jax(x64):
    # One jitted program holds every case (one compile); the oracle is jax.numpy.fft.
    inputs = [_input(shape, is_complex, seed=i) for i, (_, shape, is_complex, _) in
              enumerate(CASES)]
    fs = [_apply(jnp, name, kw) for name, _, _, kw in CASES]
    got = yax.jit(lambda xs: [f(x) for f, x in zip(fs, xs, strict=True)])(inputs)
    oracles = [_apply(jjnp, name, kw) for name, _, _, kw in CASES]
    wants = jax.jit(lambda xs: [f(x) for f, x in zip(oracles, xs, strict=True)])(inputs)
    for (name, _, _, kw), want, g in zip(CASES, wants, got, strict=True):
        assert g.dtype == want.dtype and g.shape == want.shape, name
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-10, atol=1e-10,
                                   err_msg=f"{name} {kw}")


def test_eager_matches_jit():
    x = _input((4, 6), False).astype(np.float32)

    def f(x):
        return jnp.fft.rfft(x), jnp.fft.irfft(jnp.fft.rfft(x), n=6), jnp.fft.fft(x, n=5)

    eager, jitted = f(x), yax.jit(f)(x)
    assert [o.dtype for o in eager] == [np.complex64, np.float32, np.complex64]
    for e, j, w in zip(eager, jitted, (np.fft.rfft(x), x, np.fft.fft(x, n=5)), strict=True):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(e), w, rtol=1e-4, atol=1e-4)


def test_vjp_matches_jax(x64):
    # Complex cotangents of real-to-complex maps pin down the transpose convention.
    cases = [CASES[i] for i in (1, 2, 4, 6, 9, 10, 13, 15, 16)]
    inputs = [_input(shape, is_complex, seed=i) for i, (_, shape, is_complex, _) in
              enumerate(cases)]
    oracles = [_apply(jjnp, name, kw) for name, _, _, kw in cases]
    outs = [jax.eval_shape(f, x) for f, x in zip(oracles, inputs, strict=True)]
    cts = [_input(o.shape, np.iscomplexobj(np.zeros((), o.dtype)), seed=i + 50)
           for i, o in enumerate(outs)]
    pullbacks = jax.jit(lambda xs, cts: [jax.vjp(f, x)[1](ct)[0] for f, x, ct in
                                         zip(oracles, xs, cts, strict=True)])(inputs, cts)
    fs = [_apply(jnp, name, kw) for name, _, _, kw in cases]
    got = yax.jit(lambda xs, cts: [yax.vjp(f, x)[1](ct)[0] for f, x, ct in
                                   zip(fs, xs, cts, strict=True)])(inputs, cts)
    for (name, _, _, kw), g, want in zip(cases, got, pullbacks, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-10, atol=1e-10,
                                   err_msg=f"{name} {kw}")


def test_check_grads_through_real_losses(x64):
    x = _input((3, 6), False, seed=3)

    def loss(x):
        spectrum = jnp.fft.rfft2(x, norm="ortho")
        back = jnp.fft.irfft(spectrum * (1 + 0.5j), n=6, axis=-1)
        return jnp.sum(jnp.abs(spectrum) ** 2) + jnp.sum(jnp.sin(back))

    check_grads(yax.jit(loss), (x,), order=1, modes=("fwd", "rev"))
    z = _input((4,), True, seed=4)
    check_grads(yax.jit(lambda z: jnp.real(jnp.fft.ifft(z * z)).sum()), (z,), order=1)


def test_vmap_matches_loop(x64):
    xs = _input((3, 4, 5), True, seed=5)
    f = lambda x: jnp.fft.fftn(x, axes=(0,), norm="ortho")  # noqa: E731
    want = np.stack([np.fft.fft(x, axis=0, norm="ortho") for x in xs])
    for axis in (0, 2):
        got = yax.jit(yax.vmap(f, in_axes=axis, out_axes=axis))(np.moveaxis(xs, 0, axis))
        np.testing.assert_allclose(np.moveaxis(np.asarray(got), axis, 0), want, atol=1e-12)


def test_lax_fft_and_jaxpr():
    x = np.ones((2, 8), np.float32)
    out = yax.lax.fft(x, yax.lax.FftType.RFFT, (8,))
    np.testing.assert_allclose(np.asarray(out), np.asarray(jax.lax.fft(x, "RFFT", (8,))))
    assert "fft" in str(yax.make_jaxpr(lambda v: yax.lax.fft(v, "fft", (8,)))(x))
    assert yax.lax.FftType.IRFFT == 3


def test_frequencies_and_shifts(x64):
    x = np.arange(12).reshape(3, 4)
    grid = ((5, 0.1), (6, 1.0))

    def everything(x):
        freqs = [(jnp.fft.fftfreq(n, d), jnp.fft.rfftfreq(n, d)) for n, d in grid]
        shifts = [(jnp.fft.fftshift(x, axes), jnp.fft.ifftshift(x, axes)) for axes in (None, 1)]
        return freqs, shifts

    freqs, shifts = yax.jit(everything)(x)
    for (n, d), (full, half) in zip(grid, freqs, strict=True):
        np.testing.assert_allclose(np.asarray(full), np.fft.fftfreq(n, d))
        np.testing.assert_allclose(np.asarray(half), np.fft.rfftfreq(n, d))
    for axes, (shifted, back) in zip((None, 1), shifts, strict=True):
        np.testing.assert_array_equal(np.asarray(shifted), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(back), np.fft.ifftshift(x, axes))
    assert jnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32


def test_errors_are_clear():
    x = np.ones((4,), np.float32)
    with pytest.raises(errors.YaxError, match="norm"):
        jnp.fft.fft(x, norm="unitary")
    with pytest.raises(errors.YaxError, match="out of range"):
        jnp.fft.fft(x, axis=1)
    with pytest.raises(errors.YaxError, match="fft_type"):
        yax.lax.fft(x, "dct", (4,))
    with pytest.raises(errors.YaxError, match="trailing axes"):
        yax.lax.fft(x.astype(np.complex64), "irfft", (4,))
    with pytest.raises(errors.YaxError, match="real operand"):
        yax.lax.fft(x.astype(np.complex64), "rfft", (4,))


def test_docs_page_runs():
    """The code blocks of docs/fft.md run in order, in one namespace."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "fft.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, "docs/fft.md", "exec"), namespace)


def test_spectral_fit_example(capsys):
    """examples/spectral_fit.py: FFT + scipy.optimize.minimize recover the resonance."""
    pytest.importorskip("yax.scipy.optimize")
    import pathlib
    import runpy

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "spectral_fit.py"
    old = yax.config.enable_x64
    try:
        result = runpy.run_path(str(path), run_name="spectral_fit")["main"]()
    finally:
        yax.config.update("enable_x64", old)
    assert result["success"]
    assert abs(result["f0"] - 23.3) < result["bin_width"]
    assert abs(result["tau"] - 0.15) < 0.2 * 0.15
    assert "resonance f0" in capsys.readouterr().out
