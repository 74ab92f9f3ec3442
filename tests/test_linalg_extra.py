"""jnp.linalg.eig/eigvals (LAPACK geev), jnp.roots, the tensor and array-API linalg names, and the
yax.scipy.linalg additions, against NumPy/SciPy/jax."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.linalg as sl

import yax
import yax.numpy as jnp
import yax.scipy.linalg as ysl
from yax import errors
from yax.test_util import check_grads


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_eig_decomposes(x64):
    a = _rng().normal(size=(3, 4, 4))
    ac = a + 1j * _rng(1).normal(size=a.shape)

    def everything(a, ac):
        return jnp.linalg.eig(a), jnp.linalg.eig(ac), jnp.linalg.eigvals(a)

    (w, v), (wc, vc), w_only = yax.jit(everything)(a, ac)
    for m, ws, vs in ((a, w, v), (ac, wc, vc)):
        ws, vs = np.asarray(ws), np.asarray(vs)
        assert ws.dtype == np.complex128 and vs.dtype == np.complex128
        np.testing.assert_allclose(m @ vs, vs * ws[:, None, :], atol=1e-10)
        np.testing.assert_allclose(np.linalg.norm(vs, axis=-2), 1.0, rtol=1e-10)
    for i in range(3):
        np.testing.assert_allclose(np.sort_complex(np.asarray(w_only)[i]),
                                   np.sort_complex(np.linalg.eigvals(a[i])), atol=1e-10)
    f32 = jnp.linalg.eigvals(a[0].astype(np.float32))
    assert f32.dtype == np.complex64


def test_eigvals_derivative_and_vmap(x64):
    a = _rng(2).normal(size=(4, 4))

    def spectrum_loss(lib):
        return lambda a: (lib.real(lib.linalg.eigvals(a) ** 2).sum()
                          + lib.imag(lib.linalg.eigvals(a)).max())

    got = yax.jit(yax.grad(spectrum_loss(jnp)))(a)
    want = jax.grad(spectrum_loss(jjnp))(a)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-8, atol=1e-10)
    check_grads(yax.jit(lambda a: jnp.real(jnp.linalg.eigvals(a) ** 2).sum()), (a,), order=1,
                modes=("fwd",))
    batch = _rng(3).normal(size=(2, 3, 3))
    np.testing.assert_allclose(np.asarray(yax.vmap(jnp.linalg.eigvals)(batch)),
                               np.asarray(jnp.linalg.eigvals(batch)))
    with pytest.raises(errors.YaxError, match="eigenvectors"):
        yax.grad(lambda a: jnp.real(jnp.linalg.eig(a)[1]).sum())(a)


def test_roots(x64):
    for p in ([1.0, -6.0, 11.0, -6.0], [0.0, 2.0, 0.0, -8.0, 0.0], [3.0, 1.0]):
        got = np.sort_complex(np.asarray(jnp.roots(np.array(p))))
        np.testing.assert_allclose(got, np.sort_complex(np.roots(p)), atol=1e-10)
    jitted = yax.jit(lambda p: jnp.roots(p, strip_zeros=False))(np.array([1.0, 0.0, -4.0]))
    np.testing.assert_allclose(np.sort_complex(np.asarray(jitted)), [-2.0, 2.0], atol=1e-12)


def test_tensor_and_array_api_names(x64):
    rng = _rng(4)
    chain = [rng.normal(size=s) for s in [(3,), (3, 5), (5, 2), (2, 4)]]
    a = rng.normal(size=(2, 3, 6))
    b = rng.normal(size=(2, 3))
    t = rng.normal(size=(4, 6, 8, 3))
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    m = rng.normal(size=(2, 3, 3))

    def everything(chain, a, b, t, x, y, m):
        la = jnp.linalg
        return (la.multi_dot(chain), la.tensorsolve(a, b), la.tensorinv(t, 2),
                la.cross(x, y), la.outer(x[0], y[0]), la.vecdot(x, y), la.matrix_transpose(m),
                la.diagonal(m, offset=1), la.trace(m), la.tensordot(x, y, axes=2),
                la.matmul(m, m))

    want = (np.linalg.multi_dot(chain), np.linalg.tensorsolve(a, b), np.linalg.tensorinv(t, 2),
            np.cross(x, y), np.outer(x[0], y[0]), (x * y).sum(-1), np.swapaxes(m, -1, -2),
            np.diagonal(m, 1, -2, -1), np.trace(m, axis1=-2, axis2=-1),
            np.tensordot(x, y, 2), m @ m)
    got = yax.jit(everything)(chain, a, b, t, x, y, m)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-10, err_msg=str(i))
    check_grads(yax.jit(lambda a, b: jnp.linalg.tensorsolve(a, b).sum()), (a, b), order=1,
                modes=("rev",))


def test_scipy_special_matrices(x64):
    rng = _rng(5)
    c, r = rng.normal(size=4), rng.normal(size=3)
    cases = [
        ("block_diag", lambda m: m.block_diag(c[:2].reshape(1, 2), 5.0, np.eye(2)), ()),
        ("toeplitz", lambda m: m.toeplitz(c, r), ()),
        ("toeplitz1", lambda m: m.toeplitz(c), ()),
        ("circulant", lambda m: m.circulant(c), ()),
        ("hankel", lambda m: m.hankel(c, r), ()),
        ("companion", lambda m: m.companion(c), ()),
        ("hilbert", lambda m: m.hilbert(4), ()),
        ("pascal", lambda m: m.pascal(5, "lower"), ()),
        ("dft", lambda m: m.dft(5, "sqrtn"), ()),
        ("hadamard", lambda m: m.hadamard(8), ()),
        ("helmert", lambda m: m.helmert(5, True), ()),
        ("leslie", lambda m: m.leslie(c, r), ()),
        ("fiedler", lambda m: m.fiedler(c), ()),
        ("convolution_matrix", lambda m: m.convolution_matrix(c[:3], 5, "same"), ()),
        ("fiedler_companion", lambda m: m.fiedler_companion(np.concatenate([c, r])), ()),
    ]
    got = yax.jit(lambda: [f(ysl) for _, f, _ in cases])()
    for (name, f, _), g in zip(cases, got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(f(sl)), atol=1e-12, err_msg=name)


def test_scipy_matrix_functions(x64):
    rng = _rng(6)
    a, e = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    spd = a @ a.T + np.eye(4)
    b, c = rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    d, off = rng.normal(size=5), rng.normal(size=4)

    def everything(a, e, spd, b, c, d, off):
        u, p = ysl.polar(a)
        ul, pl = ysl.polar(a, side="left")
        return (u, p, ul, pl, ysl.sqrtm(spd), ysl.funm(spd, jnp.exp),
                ysl.eigh_tridiagonal(d, off, eigvals_only=True), ysl.expm_frechet(a, e)[1],
                ysl.solve_sylvester(a, b, c))

    got = yax.jit(everything)(a, e, spd, b, c, d, off)
    up, pp = sl.polar(a)
    ul, pl = sl.polar(a, side="left")
    want = (up, pp, ul, pl, sl.sqrtm(spd), sl.expm(spd),
            sl.eigh_tridiagonal(d, off, eigvals_only=True), sl.expm_frechet(a, e)[1],
            sl.solve_sylvester(a, b, c))
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-8, atol=1e-8, err_msg=str(i))
    w, v = ysl.eigh_tridiagonal(d, off)
    tri = np.diag(d) + np.diag(off, 1) + np.diag(off, -1)
    np.testing.assert_allclose(tri @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-10)
    check_grads(yax.jit(lambda a: ysl.polar(a)[1].sum()), (a,), order=1, modes=("rev",))


def test_schur_hessenberg_and_friends(x64):
    rng = _rng(7)
    a = rng.normal(size=(5, 5))

    def everything(a):
        t, z = ysl.schur(a)
        tc, zc = ysl.schur(a, output="complex")
        t2, z2 = ysl.rsf2csf(t, z)
        h, q = ysl.hessenberg(a, calc_q=True)
        return t, z, tc, zc, t2, z2, h, q

    t, z, tc, zc, t2, z2, h, q = (np.asarray(v) for v in yax.jit(everything)(a))
    for tri, uni, strict in ((t, z, False), (tc, zc, True), (t2, z2, True), (h, q, False)):
        np.testing.assert_allclose(uni @ tri @ uni.conj().T, a, atol=1e-12)
        np.testing.assert_allclose(uni.conj().T @ uni, np.eye(5), atol=1e-12)
        if strict:
            np.testing.assert_array_equal(np.tril(tri, -1), 0)
    np.testing.assert_array_equal(np.tril(h, -2), 0)
    np.testing.assert_allclose(np.abs(t), np.abs(sl.schur(a)[0]), atol=1e-10)
    np.testing.assert_allclose(np.sort_complex(np.diag(t2)), np.sort_complex(np.linalg.eigvals(a)),
                               atol=1e-10)
    np.testing.assert_allclose(np.asarray(ysl.invhilbert(5)), sl.invhilbert(5), rtol=1e-12)
    for kind in ("symmetric", "lower", "upper"):
        np.testing.assert_allclose(np.asarray(ysl.invpascal(4, kind)), sl.invpascal(4, kind))
    c = rng.normal(size=(3, 5))
    np.testing.assert_allclose(np.asarray(ysl.qr_multiply(a, c)[0]), sl.qr_multiply(a, c)[0],
                               atol=1e-12)
    with pytest.raises(errors.YaxError, match="no derivative"):
        yax.grad(lambda a: ysl.schur(a)[0].sum())(a)
