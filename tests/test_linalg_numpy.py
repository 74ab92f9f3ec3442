"""yax.numpy.linalg against numpy.linalg (float32 and float64), with derivatives
(check_grads), vmap against a loop, leading batch dims, jit against eager, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.linalg_helpers import rand, spd, well_conditioned
from yax import errors
from yax.test_util import check_grads

LA = jnp.linalg
TOL = {np.float32: 5e-4, np.float64: 1e-9}


def close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=TOL[dtype] * scale,
                               atol=TOL[dtype] * scale)


def both(f, *args):
    """f eagerly and under jit (they must agree)."""
    eager, jitted = f(*args), yax.jit(f)(*args)
    for e, j in zip(yax.tree_util.tree_leaves(eager), yax.tree_util.tree_leaves(jitted),
                    strict=True):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-5, atol=1e-6)
    return eager


# --- values ---------------------------------------------------------------------------------------

def test_solve_inv_det_slogdet(dtype):
    a = well_conditioned(0, (2, 4, 4), dtype)
    b = rand(1, (2, 4, 3), dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close(both(LA.solve, a, b), np.linalg.solve(a64, b64), dtype)
    close(both(LA.solve, a[0], b[0, :, 0]), np.linalg.solve(a64[0], b64[0, :, 0]), dtype)
    close(both(LA.solve, a, b[0]), np.linalg.solve(a64, b64[0]), dtype)  # batch broadcast
    close(both(LA.inv, a), np.linalg.inv(a64), dtype)
    close(both(LA.det, a), np.linalg.det(a64), dtype, scale=100)
    sign, logdet = both(LA.slogdet, a)
    want_sign, want_log = np.linalg.slogdet(a64)
    close(sign, want_sign, dtype)
    close(logdet, want_log, dtype)
    assert LA.det(a).dtype == dtype


def test_det_sign_and_singular(x64):
    perm = np.eye(3)[[1, 0, 2]]
    assert float(LA.det(perm)) == pytest.approx(-1.0)
    assert float(LA.det(np.ones((3, 3)))) == pytest.approx(0.0, abs=1e-12)
    sign, logdet = LA.slogdet(np.zeros((2, 2)))
    assert float(sign) == 0.0 and float(logdet) == -np.inf


def test_decompositions(dtype):
    a = rand(2, (3, 5, 4), dtype)
    s = LA.svd(a, compute_uv=False)
    close(s, np.linalg.svd(a.astype(np.float64), compute_uv=False), dtype)
    u, s, vh = LA.svd(a, full_matrices=False)
    close(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vh), a, dtype)
    q, r = LA.qr(a)
    close(np.asarray(q) @ np.asarray(r), a, dtype)
    assert LA.qr(a, mode="complete").Q.shape == (3, 5, 5)
    assert LA.qr(a, mode="r").shape == (3, 4, 4)
    h = spd(3, (2, 4, 4), dtype)
    w, v = LA.eigh(h)
    close(w, np.linalg.eigvalsh(h.astype(np.float64)), dtype)
    close(LA.eigvalsh(h), np.linalg.eigvalsh(h.astype(np.float64)), dtype)
    close(LA.cholesky(h), np.linalg.cholesky(h.astype(np.float64)), dtype)
    close(LA.cholesky(h, upper=True),
          np.swapaxes(np.linalg.cholesky(h.astype(np.float64)), -1, -2), dtype)


def test_lstsq_pinv_rank_cond_power(dtype):
    a = rand(4, (6, 3), dtype)
    b = rand(5, (6, 2), dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    x, resid, rank, s = LA.lstsq(a, b)
    wx, wres, wrank, ws = np.linalg.lstsq(a64, b64)
    close(x, wx, dtype)
    close(resid, wres, dtype, scale=10)
    assert int(rank) == wrank
    close(s, ws, dtype)
    close(LA.lstsq(a, b[:, 0])[0], wx[:, 0], dtype)
    close(both(LA.pinv, a), np.linalg.pinv(a64), dtype)
    low_rank = a64 @ rand(6, (3, 5))
    assert int(LA.matrix_rank(low_rank.astype(dtype))) == 3
    sq = well_conditioned(7, (4, 4), dtype)
    close(LA.cond(sq), np.linalg.cond(sq.astype(np.float64)), dtype, scale=10)
    close(LA.cond(sq, "fro"), np.linalg.cond(sq.astype(np.float64), "fro"), dtype, scale=10)
    for n in (0, 1, 2, 5, -2):
        close(LA.matrix_power(sq, n), np.linalg.matrix_power(sq.astype(np.float64), n), dtype,
              scale=100)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(dtype, ord):
    a = rand(8, (3, 4, 5), dtype)
    close(LA.norm(a[0], ord), np.linalg.norm(a[0].astype(np.float64), ord), dtype)
    close(LA.norm(a, ord, axis=(2, 0)),
          np.linalg.norm(a.astype(np.float64), ord, axis=(2, 0)), dtype)
    close(LA.norm(a, ord, axis=(1, 2), keepdims=True),
          np.linalg.norm(a.astype(np.float64), ord, axis=(1, 2), keepdims=True), dtype)


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0, 0.5, np.inf, -np.inf])
def test_vector_norms(dtype, ord):
    a = rand(9, (3, 5), dtype)
    close(LA.norm(a[0], ord), np.linalg.norm(a[0].astype(np.float64), ord), dtype)
    close(LA.norm(a, ord, axis=1), np.linalg.norm(a.astype(np.float64), ord, axis=1), dtype)
    close(LA.norm(a), np.linalg.norm(a.astype(np.float64)), dtype)


# --- derivatives ---------------------------------------------------------------------------------

def test_grads_second_order(x64):
    a = well_conditioned(10, (3, 3))
    b = rand(11, (3, 2))
    check_grads(LA.solve, (a, b), order=2)
    check_grads(LA.inv, (a,), order=2)
    check_grads(LA.det, (a,), order=2)
    check_grads(lambda x: LA.slogdet(x).logabsdet, (a,), order=1)
    check_grads(LA.cholesky, (spd(12, (3, 3)),), order=2)


def test_grads_first_order(x64):
    a = rand(13, (4, 3))
    check_grads(LA.pinv, (a,), order=1)
    check_grads(lambda x: LA.lstsq(x, rand(14, (4,)))[0], (a,), order=1)
    check_grads(lambda x: LA.norm(x, "nuc"), (a,), order=1)
    check_grads(lambda x: LA.norm(x, 2), (a,), order=1)
    check_grads(lambda x: LA.norm(x, "fro"), (a,), order=1)
    check_grads(lambda x: LA.eigvalsh(x), (spd(15, (3, 3)),), order=1)
    check_grads(lambda x: LA.matrix_power(x, 3), (well_conditioned(16, (3, 3)),), order=1)


def test_det_grad_is_cofactor(x64):
    """d det(a) / da = det(a) inv(a)^T (Jacobi's formula)."""
    a = well_conditioned(17, (4, 4))
    np.testing.assert_allclose(np.asarray(yax.grad(LA.det)(a)),
                               np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-9)


# --- batching ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "pinv", "cholesky", "eigh",
                                  "svd", "qr", "norm"])
def test_vmap_matches_loop(x64, name):
    xs = spd(18, (3, 4, 4))
    b = rand(19, (3, 4, 2))
    f = {"solve": LA.solve, "inv": lambda x, b: LA.inv(x), "det": lambda x, b: LA.det(x),
         "slogdet": lambda x, b: LA.slogdet(x), "pinv": lambda x, b: LA.pinv(x),
         "cholesky": lambda x, b: LA.cholesky(x), "eigh": lambda x, b: LA.eigh(x),
         "svd": lambda x, b: LA.svd(x), "qr": lambda x, b: LA.qr(x),
         "norm": lambda x, b: LA.norm(x, 2)}[name]
    got = yax.tree_util.tree_leaves(yax.vmap(f)(xs, b))
    loop = [yax.tree_util.tree_leaves(f(x, bi)) for x, bi in zip(xs, b)]
    for k, g in enumerate(got):
        np.testing.assert_allclose(np.asarray(g), np.stack([np.asarray(o[k]) for o in loop]),
                                   rtol=1e-9, atol=1e-9)


# --- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh])
def test_non_square_error_names_shape(fn):
    with pytest.raises(errors.ShapeError, match=r"f32\[2,3\]"):
        fn(np.ones((2, 3), np.float32))


@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.svd, LA.qr, LA.pinv])
def test_integer_and_vector_errors(fn):
    with pytest.raises(errors.DTypeError, match=r"i32\[3,3\]"):
        fn(np.eye(3, dtype=np.int32))
    with pytest.raises(errors.ShapeError, match=r"rank >= 2"):
        fn(np.ones(3, np.float32))


def test_solve_shape_mismatch():
    with pytest.raises(errors.ShapeError, match=r"f32\[3,3\].*f32\[4\]"):
        LA.solve(np.eye(3, dtype=np.float32), np.ones(4, np.float32))


def test_norm_bad_ord():
    with pytest.raises(errors.YaxError, match="ord"):
        LA.norm(np.ones((2, 2), np.float32), 3)


def test_array_api_norms_and_svdvals(x64):
    import jax.numpy as jjnp

    a = rand(20, (2, 3, 4))
    for ord in (2, 1, np.inf):
        for axis in (None, 1, (0, 2)):
            close(LA.vector_norm(a, axis=axis, ord=ord),
                  jjnp.linalg.vector_norm(a, axis=axis, ord=ord), np.float64)
    close(LA.vector_norm(a, axis=(0, 2), keepdims=True),
          jjnp.linalg.vector_norm(a, axis=(0, 2), keepdims=True), np.float64)
    close(LA.matrix_norm(a, ord="nuc"), jjnp.linalg.matrix_norm(a, ord="nuc"), np.float64)
    close(LA.svdvals(a), np.linalg.svd(a, compute_uv=False), np.float64)
