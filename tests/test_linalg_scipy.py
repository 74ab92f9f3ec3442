"""yax.scipy.linalg against scipy.linalg (float32 and float64): values, derivatives, batching,
jit against eager, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import yax
import yax.scipy.linalg as ysl
from tests.linalg_helpers import rand, spd
from yax import errors
from yax.test_util import check_grads

TOL = {np.float32: 5e-4, np.float64: 1e-9}


def close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=TOL[dtype] * scale,
                               atol=TOL[dtype] * scale)


def test_cholesky_family(dtype):
    a = spd(0, (4, 4), dtype)
    b = rand(1, (4, 2), dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for lower in (False, True):
        close(ysl.cholesky(a, lower=lower), sl.cholesky(a64, lower=lower), dtype)
        c = ysl.cho_factor(a, lower=lower)
        assert c[1] is lower
        close(ysl.cho_solve(c, b), sl.cho_solve(sl.cho_factor(a64, lower=lower), b64), dtype)
        close(ysl.cho_solve(c, b[:, 0]), np.linalg.solve(a64, b64[:, 0]), dtype)
    close(ysl.solve(a, b, assume_a="pos"), np.linalg.solve(a64, b64), dtype)
    # assume_a='pos' reads one triangle only, as SciPy does
    junk = a + np.triu(rand(2, (4, 4), dtype), 1)
    close(ysl.solve(junk, b, assume_a="pos", lower=True), np.linalg.solve(a64, b64), dtype)


@pytest.mark.parametrize("trans", [0, 1, 2, "T"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_triangular(dtype, trans, lower):
    a = rand(3, (4, 4), dtype) + 3 * np.eye(4, dtype=dtype)
    b = rand(4, (4, 3), dtype)
    for unit in (False, True):
        got = ysl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
        want = sl.solve_triangular(a.astype(np.float64), b.astype(np.float64), trans=trans,
                                   lower=lower, unit_diagonal=unit)
        close(got, want, dtype, scale=10)
    close(ysl.solve_triangular(a, b[:, 0], trans=trans, lower=lower),
          sl.solve_triangular(a.astype(np.float64), b[:, 0].astype(np.float64), trans=trans,
                              lower=lower), dtype, scale=10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_lu(dtype, shape):
    a = rand(5, shape, dtype)
    p, l, u = ysl.lu(a)
    wp, wl, wu = sl.lu(a.astype(np.float64))
    close(p, wp, dtype)
    close(l, wl, dtype)
    close(u, wu, dtype)
    pl, u2 = ysl.lu(a, permute_l=True)
    close(np.asarray(pl) @ np.asarray(u2), a, dtype)


def test_lu_factor_and_solve(dtype):
    a = rand(6, (4, 4), dtype) + 2 * np.eye(4, dtype=dtype)
    b = rand(7, (4, 2), dtype)
    lu, piv = ysl.lu_factor(a)
    wlu, wpiv = sl.lu_factor(a.astype(np.float64))
    close(lu, wlu, dtype)
    np.testing.assert_array_equal(np.asarray(piv), wpiv)
    for trans in (0, 1, 2):
        close(ysl.lu_solve((lu, piv), b, trans=trans),
              sl.lu_solve((wlu, wpiv), b.astype(np.float64), trans=trans), dtype, scale=10)


def test_solve_inv_det_eigh_svd_qr(dtype):
    a = rand(8, (4, 4), dtype) + 3 * np.eye(4, dtype=dtype)
    a64 = a.astype(np.float64)
    b = rand(9, (4,), dtype)
    close(ysl.solve(a, b), sl.solve(a64, b.astype(np.float64)), dtype)
    close(ysl.inv(a), sl.inv(a64), dtype)
    close(ysl.det(a), sl.det(a64), dtype, scale=100)
    h = spd(10, (4, 4), dtype)
    close(ysl.eigh(h, eigvals_only=True), sl.eigh(h.astype(np.float64), eigvals_only=True),
          dtype)
    w, v = ysl.eigh(h, lower=False)
    close(np.asarray(v) @ np.diag(np.asarray(w)) @ np.asarray(v).T, h, dtype)
    close(ysl.svd(a, compute_uv=False), sl.svd(a64, compute_uv=False), dtype)
    u, s, vh = ysl.svd(a)
    close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a, dtype)
    r = rand(11, (5, 3), dtype)
    q, rr = ysl.qr(r, mode="economic")
    assert q.shape == (5, 3) and rr.shape == (3, 3)
    close(np.abs(np.asarray(rr)), np.abs(sl.qr(r.astype(np.float64), mode="economic")[1]),
          dtype)
    assert ysl.qr(r)[0].shape == (5, 5)
    assert isinstance(ysl.qr(r, mode="r"), tuple)


@pytest.mark.parametrize("scale", [0.01, 1.0, 20.0])
def test_expm(dtype, scale):
    a = rand(12, (2, 4, 4), dtype) * scale
    want = np.stack([sl.expm(x.astype(np.float64)) for x in a])
    got = np.asarray(ysl.expm(a))
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10 * np.abs(want).max())


def test_expm_identities(x64):
    z = np.zeros((3, 3))
    np.testing.assert_allclose(np.asarray(ysl.expm(z)), np.eye(3), atol=1e-15)
    d = np.diag([0.5, -2.0, 3.0])
    np.testing.assert_allclose(np.asarray(ysl.expm(d)), np.diag(np.exp([0.5, -2.0, 3.0])),
                               rtol=1e-13)


def test_grads(x64):
    a = spd(13, (3, 3))
    b = rand(14, (3, 2))
    c = np.linalg.cholesky(a)
    check_grads(lambda c, b: ysl.cho_solve((c, True), b), (c, b), order=2)
    check_grads(lambda a, b: ysl.solve_triangular(a, b, lower=True, trans=1), (c, b), order=2)
    check_grads(lambda a, b: ysl.solve(a, b, assume_a="pos"), (a, b), order=1)
    check_grads(lambda a: ysl.lu(a)[2], (rand(15, (3, 3)),), order=1)
    check_grads(lambda a: ysl.lu_solve(ysl.lu_factor(a), b), (a,), order=1)
    check_grads(ysl.expm, (rand(16, (3, 3)),), order=1)


def test_expm_grad_matches_jax(x64):
    import jax
    import jax.scipy.linalg as jsl

    a = rand(17, (3, 3))
    g = rand(18, (3, 3))
    got = yax.grad(lambda x: (ysl.expm(x) * g).sum())(a)
    want = jax.grad(lambda x: (jsl.expm(x) * g).sum())(a)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-8)


def test_batched_and_vmap(x64):
    a = spd(19, (3, 4, 4))
    b = rand(20, (3, 4, 2))

    def f(a, b):
        return ysl.cho_solve(ysl.cho_factor(a), b)
    want = np.linalg.solve(a, b)
    np.testing.assert_allclose(np.asarray(f(a, b)), want, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(yax.vmap(f)(a, b)), want, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(yax.jit(f)(a, b)), want, rtol=1e-9)
    lu_b = yax.vmap(lambda a, b: ysl.lu_solve(ysl.lu_factor(a), b))(a, b)
    np.testing.assert_allclose(np.asarray(lu_b), want, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(yax.vmap(ysl.expm)(a * 0.1)),
                               np.stack([sl.expm(x * 0.1) for x in a]), rtol=1e-12)


def test_errors():
    with pytest.raises(errors.ShapeError, match=r"f32\[2,3\]"):
        ysl.cholesky(np.ones((2, 3), np.float32))
    with pytest.raises(errors.DTypeError, match=r"i32\[2,2\]"):
        ysl.lu_factor(np.eye(2, dtype=np.int32))
    with pytest.raises(errors.ShapeError, match=r"f32\[3,3\].*f32\[2,2\]"):
        ysl.solve_triangular(np.eye(3, dtype=np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(errors.YaxError, match="trans"):
        ysl.solve_triangular(np.eye(2, dtype=np.float32), np.ones(2, np.float32), trans=3)
    with pytest.raises(errors.NotImplementedRuleError, match="generalized"):
        ysl.eigh(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32))


def test_docs_page_runs():
    """The code blocks of docs/linalg.md run in order, in one namespace."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "linalg.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, "docs/linalg.md", "exec"), namespace)
