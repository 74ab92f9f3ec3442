"""yax.lax.linalg primitives (cholesky, triangular_solve, lu, qr, eigh, svd): values against
NumPy/SciPy in float32 and float64, derivatives (check_grads), vmap against a loop, leading
batch dims, jit against eager, and clear errors for invalid input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

import yax
from tests.linalg_helpers import rand, spd
from yax import errors
from yax.primitives.linalg import custom_call, triangular
from yax.test_util import check_grads

L = yax.lax.linalg
TOL = {np.float32: 2e-4, np.float64: 1e-10}


def tri(seed, shape, lower=True, dtype=np.float64):
    """Well-conditioned triangular matrices (the other triangle holds junk that must be
    ignored)."""
    a = rand(seed, shape)
    n = shape[-1]
    a = a + 3 * np.sign(np.diagonal(a, axis1=-2, axis2=-1))[..., None] * np.eye(n)
    return a.astype(dtype)


def close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got), want, rtol=TOL[dtype], atol=TOL[dtype])


def jit_matches_eager(f, *args):
    eager = yax.tree_util.tree_leaves(f(*args))
    jitted = yax.tree_util.tree_leaves(yax.jit(f)(*args))
    for e, j in zip(eager, jitted, strict=True):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-6, atol=1e-6)


def vmap_matches_loop(f, x, *rest):
    got = yax.tree_util.tree_leaves(yax.vmap(f)(x, *rest))
    loop = [yax.tree_util.tree_leaves(f(xi, *[r[i] for r in rest])) for i, xi in enumerate(x)]
    for k, g in enumerate(got):
        want = np.stack([np.asarray(o[k]) for o in loop])
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-5)


# --- cholesky ------------------------------------------------------------------------------------

def test_cholesky_values(dtype):
    a = spd(0, (2, 3, 5, 5), dtype)
    l = L.cholesky(a)
    assert l.dtype == dtype and l.shape == a.shape
    close(l, np.linalg.cholesky(a.astype(np.float64)), dtype)
    jit_matches_eager(L.cholesky, a)


def test_cholesky_not_positive_definite_is_nan():
    a = np.stack([spd(1, (3, 3)), -np.eye(3)]).astype(np.float32)
    l = np.asarray(L.cholesky(a))
    assert np.isfinite(l[0]).all() and np.isnan(l[1]).all()


def test_cholesky_reads_lower_triangle_only(x64):
    a = spd(2, (4, 4))
    junk = a + np.triu(rand(3, (4, 4)), 1)
    close(L.cholesky(junk, symmetrize_input=False), np.linalg.cholesky(a), np.float64)


def test_cholesky_grads(x64):
    a = spd(4, (4, 4))
    check_grads(L.cholesky, (a,), order=2)
    check_grads(lambda x: L.cholesky(x, symmetrize_input=False), (a,), order=1)


def test_cholesky_vmap(x64):
    a = spd(5, (3, 4, 4))
    vmap_matches_loop(L.cholesky, a)
    close(yax.vmap(L.cholesky, in_axes=1, out_axes=2)(np.moveaxis(a, 0, 1)),
          np.moveaxis(np.linalg.cholesky(a), 0, 2), np.float64)


# --- triangular_solve ----------------------------------------------------------------------------

def _op(a, lower, transpose_a, conjugate_a, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t - np.diag(np.diagonal(t)) + np.eye(a.shape[-1])
    t = t.T if transpose_a else t
    return np.conj(t) if conjugate_a else t


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower,transpose_a,unit", [(True, False, False), (False, True, False),
                                                    (True, True, True), (False, False, True)])
def test_triangular_solve_values(dtype, left_side, lower, transpose_a, unit):
    a = tri(6, (4, 4), dtype=dtype)
    b = rand(7, (4, 3) if left_side else (3, 4), dtype)
    x = L.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                           unit_diagonal=unit)
    op = _op(a.astype(np.float64), lower, transpose_a, False, unit)
    want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    close(x, want, dtype)


@pytest.mark.parametrize("use_trsm", [True, False], ids=["lapack_trsm", "native"])
def test_triangular_solve_both_lowerings(use_trsm, monkeypatch):
    """The LAPACK trsm custom call and stablehlo.triangular_solve agree (complex too)."""
    monkeypatch.setattr(triangular, "USE_LAPACK_TRSM", use_trsm)
    n = 6 if use_trsm else 7  # distinct shapes: the eager executable cache keys on shapes
    a = (rand(8, (2, n, n)) + 1j * rand(9, (2, n, n)) + 4 * np.eye(n)).astype(np.complex64)
    b = (rand(10, (2, n, 2)) + 1j * rand(11, (2, n, 2))).astype(np.complex64)
    for transpose_a, conjugate_a in [(False, False), (True, False), (True, True), (False, True)]:
        x = L.triangular_solve(a, b, left_side=True, lower=True, transpose_a=transpose_a,
                               conjugate_a=conjugate_a)
        want = [np.linalg.solve(_op(ai, True, transpose_a, conjugate_a, False), bi)
                for ai, bi in zip(a, b)]
        np.testing.assert_allclose(np.asarray(x), np.stack(want), rtol=1e-4, atol=1e-4)


def test_triangular_solve_grads(x64):
    a, b = tri(12, (4, 4)), rand(13, (4, 2))
    check_grads(lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True), (a, b),
                order=2)
    check_grads(lambda a, b: L.triangular_solve(a, b, left_side=False, lower=False,
                                                transpose_a=True, unit_diagonal=True),
                (a, b.T), order=1)


def test_triangular_solve_batching(x64):
    a, b = tri(14, (3, 4, 4)), rand(15, (3, 4, 2))

    def f(a, b):
        return L.triangular_solve(a, b, left_side=True, lower=True)
    vmap_matches_loop(f, a, b)
    # one operand unbatched, and leading batch dims broadcast by the wrapper
    got = yax.vmap(f, in_axes=(None, 0))(a[0], b)
    close(got, np.linalg.solve(np.tril(a[0]), b), np.float64)
    close(f(a[0], b), np.linalg.solve(np.tril(a[0]), b), np.float64)
    jit_matches_eager(f, a, b)


def test_native_cholesky_lowering(monkeypatch, x64):
    """The GPU path (stablehlo.cholesky) runs on CPU too: check it there."""
    monkeypatch.setattr(custom_call, "is_cpu", lambda ctx: False)
    a = spd(16, (2, 7, 7))
    close(L.cholesky(a), np.linalg.cholesky(a), np.float64)


# --- lu -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 5), (2, 6, 4), (3, 5)])
def test_lu_values(dtype, shape):
    a = rand(17, shape, dtype)
    lu, piv, perm = L.lu(a)
    assert piv.dtype == np.int32 and perm.dtype == np.int32
    m, n = shape[-2:]
    k = min(m, n)
    lu = np.asarray(lu).astype(np.float64)
    lo = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    up = np.triu(lu)[..., :k, :]
    permuted = np.take_along_axis(a.astype(np.float64), np.asarray(perm)[..., None], axis=-2)
    close(lo @ up, permuted, dtype)
    if len(shape) == 2 and m == n:
        want_lu, want_piv = sla.lu_factor(a.astype(np.float64))
        close(lu, want_lu, dtype)
        np.testing.assert_array_equal(np.asarray(piv), want_piv)
    jit_matches_eager(L.lu, a)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_lu_grads(x64, shape):
    check_grads(lambda x: L.lu(x)[0], (rand(18, shape),), order=1)


def test_lu_vmap(x64):
    vmap_matches_loop(L.lu, rand(19, (3, 4, 4)))


# --- qr -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_qr_values(dtype, shape, full):
    a = rand(20, shape, dtype)
    q, r = L.qr(a, full_matrices=full)
    nq, nr = np.linalg.qr(a.astype(np.float64), mode="complete" if full else "reduced")
    assert q.shape == nq.shape and r.shape == nr.shape
    q, r = np.asarray(q), np.asarray(r)
    close(q @ r, a.astype(np.float64), dtype)
    qtq = np.swapaxes(q, -1, -2) @ q
    close(qtq, np.broadcast_to(np.eye(q.shape[-1]), qtq.shape), dtype)
    assert (np.tril(r, -1) == 0).all()
    # LAPACK's sign convention, as NumPy's
    close(np.abs(r), np.abs(nr), dtype)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4)])
def test_qr_grads(x64, shape):
    check_grads(lambda x: L.qr(x, full_matrices=False), (rand(21, shape),), order=1)


def test_qr_vmap_and_jit(x64):
    a = rand(22, (3, 5, 3))
    vmap_matches_loop(lambda x: L.qr(x, full_matrices=False), a)
    jit_matches_eager(lambda x: L.qr(x, full_matrices=True), a)


# --- eigh ---------------------------------------------------------------------------------------

def test_eigh_values(dtype):
    a = rand(23, (2, 5, 5), dtype)
    a = a + np.swapaxes(a, -1, -2)
    v, w = L.eigh(a)
    assert w.dtype == dtype
    close(w, np.linalg.eigvalsh(a.astype(np.float64)), dtype)
    v = np.asarray(v).astype(np.float64)
    close(v @ (np.asarray(w)[..., None] * np.swapaxes(v, -1, -2)), a, dtype)
    jit_matches_eager(L.eigh, a)


def test_eigh_grads(x64):
    a = rand(24, (4, 4))
    a = a + a.T  # distinct eigenvalues (checked below)
    assert np.min(np.diff(np.linalg.eigvalsh(a))) > 0.1
    check_grads(lambda x: L.eigh(x)[1], (a,), order=2)
    # eigenvectors up to sign: a sign-invariant function of them
    check_grads(lambda x: L.eigh(x)[0] ** 2, (a,), order=1)


def test_eigh_degenerate_convention_is_finite(x64):
    """Repeated eigenvalues: the eigenvector derivative takes the zero in-eigenspace rotation,
    so it stays finite, and the eigenvalue derivative is still right for diagonal tangents."""
    a = np.diag([1.0, 1.0, 3.0])
    da = np.diag([0.5, -1.0, 2.0])
    (v, w), (dv, dw) = yax.jvp(L.eigh, (a,), (da,))
    assert np.isfinite(np.asarray(dv)).all()
    np.testing.assert_allclose(np.sort(np.asarray(dw)), np.sort(np.diag(da)), atol=1e-12)


def test_eigh_vmap(x64):
    a = rand(25, (3, 4, 4))
    vmap_matches_loop(L.eigh, a + np.swapaxes(a, -1, -2))


# --- svd ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_values(dtype, shape):
    a = rand(26, shape, dtype)
    s = L.svd(a, compute_uv=False)
    close(s, np.linalg.svd(a.astype(np.float64), compute_uv=False), dtype)
    for full in (False, True):
        u, s, vh = L.svd(a, full_matrices=full)
        nu, _, nvh = np.linalg.svd(a.astype(np.float64), full_matrices=full)
        assert u.shape == nu.shape and vh.shape == nvh.shape and s.dtype == dtype
        k = s.shape[-1]
        u, vh = np.asarray(u).astype(np.float64), np.asarray(vh).astype(np.float64)
        close((u[..., :, :k] * np.asarray(s)[..., None, :]) @ vh[..., :k, :], a, dtype)
    jit_matches_eager(lambda x: L.svd(x, full_matrices=False), a)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_svd_grads(x64, shape):
    a = rand(27, shape)
    check_grads(lambda x: L.svd(x, compute_uv=False), (a,), order=2)
    check_grads(lambda x: L.svd(x, full_matrices=False), (a,), order=1)


def test_svd_vmap(x64):
    vmap_matches_loop(lambda x: L.svd(x, full_matrices=False), rand(28, (3, 4, 3)))


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [L.cholesky, L.eigh, lambda x: L.triangular_solve(x, x)])
def test_non_square_is_shape_error(fn):
    with pytest.raises(errors.ShapeError, match=r"f32\[3,4\]"):
        fn(np.ones((3, 4), np.float32))


@pytest.mark.parametrize("fn", [L.cholesky, L.lu, L.qr, L.eigh, L.svd])
def test_rank_one_is_shape_error(fn):
    with pytest.raises(errors.ShapeError, match=r"rank >= 2.*f32\[3\]"):
        fn(np.ones((3,), np.float32))


@pytest.mark.parametrize("fn", [L.cholesky, L.lu, L.qr, L.eigh, L.svd])
def test_integer_is_dtype_error(fn):
    with pytest.raises(errors.DTypeError, match=r"i32\[3,3\].*astype"):
        fn(np.ones((3, 3), np.int32))


def test_triangular_solve_mismatch_names_both_shapes():
    with pytest.raises(errors.ShapeError, match=r"f32\[3,3\].*f32\[4,2\]"):
        L.triangular_solve(np.eye(3, dtype=np.float32), np.ones((4, 2), np.float32),
                           left_side=True)


def test_lu_permutation_matches_pivots():
    """The permutation the lowering computes equals the yax-level loop over the pivots."""
    a = rand(29, (4, 6, 6), np.float32)
    _, piv, perm = L.lu(a)
    want = L.lu_pivots_to_permutation(piv, 6)
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(want))
    assert sorted(np.asarray(perm)[0].tolist()) == list(range(6))


def _crand(seed, shape):
    return rand(seed, shape) + 1j * rand(seed + 100, shape)


def test_complex_grads(x64):
    h = _crand(30, (3, 3))
    h = h @ h.conj().T + 3 * np.eye(3)
    check_grads(L.cholesky, (h,), order=1)
    check_grads(lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True,
                                                transpose_a=True, conjugate_a=True),
                (h, _crand(31, (3, 2))), order=1)
    check_grads(lambda a, b: L.triangular_solve(a, b, left_side=False, conjugate_a=True),
                (h, _crand(32, (2, 3))), order=1)
    check_grads(lambda x: L.eigh(x)[1], (h,), order=1)
    check_grads(lambda x: L.svd(x, compute_uv=False), (_crand(33, (4, 3)),), order=1)
    check_grads(lambda x: L.qr(x, full_matrices=False), (_crand(34, (4, 3)),), order=1)
    check_grads(lambda x: L.lu(x)[0], (_crand(35, (3, 3)),), order=1)


def test_complex_values():
    h = _crand(36, (2, 4, 4)).astype(np.complex64)
    h = h @ np.conj(np.swapaxes(h, -1, -2)) + 4 * np.eye(4, dtype=np.complex64)
    np.testing.assert_allclose(np.asarray(L.cholesky(h)), np.linalg.cholesky(h), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(np.asarray(L.eigh(h)[1]), np.linalg.eigvalsh(h), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(L.svd(h, compute_uv=False)),
                               np.linalg.svd(h, compute_uv=False), rtol=1e-4)
    q, r = L.qr(h)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), h, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (3, 0), (0, 3)])
def test_empty_matrices(shape):
    a = np.zeros(shape, np.float32)
    m, n = shape[-2:]
    lu, piv, perm = L.lu(a)
    assert lu.shape == shape and piv.shape == shape[:-2] + (0,)
    np.testing.assert_array_equal(np.asarray(perm), np.broadcast_to(np.arange(m),
                                                                     shape[:-2] + (m,)))
    u, s, vh = L.svd(a)
    assert s.shape == shape[:-2] + (0,) and u.shape == shape[:-2] + (m, m)
    np.testing.assert_array_equal(np.asarray(vh), np.broadcast_to(np.eye(n), vh.shape))
    q, r = L.qr(a)
    assert q.shape == shape[:-2] + (m, m) and r.shape == shape
    if m == n:
        assert L.cholesky(a).shape == shape and L.eigh(a)[1].shape == shape[:-2] + (0,)
        np.testing.assert_array_equal(np.asarray(yax.numpy.linalg.det(a)),
                                      np.ones(shape[:-2]))


@pytest.mark.parametrize("name", ["lu", "qr", "eigh", "svd", "cholesky"])
def test_vmap_over_a_minor_axis(x64, name):
    """The batch axis may be any axis of the input; outputs are stacked on out_axes."""
    xs = spd(37, (3, 4, 4))
    f = {"lu": L.lu, "qr": lambda x: L.qr(x, full_matrices=False), "eigh": L.eigh,
         "svd": lambda x: L.svd(x, compute_uv=False), "cholesky": L.cholesky}[name]
    got = yax.tree_util.tree_leaves(yax.vmap(f, in_axes=2, out_axes=-1)(np.moveaxis(xs, 0, 2)))
    loop = [yax.tree_util.tree_leaves(f(x)) for x in xs]
    for k, g in enumerate(got):
        want = np.stack([np.asarray(o[k]) for o in loop], axis=-1)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10, atol=1e-10)


def test_upper_triangle_variants_grads(x64):
    a = spd(38, (3, 3))
    check_grads(lambda x: L.eigh(x, lower=False, symmetrize_input=False)[1], (a,), order=1)
    junk = a + np.tril(rand(39, (3, 3)), -1)
    w = np.asarray(L.eigh(junk, lower=False, symmetrize_input=False)[1])
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a, UPLO="U"), rtol=1e-12)


@pytest.mark.parametrize("name", ["cholesky", "lu", "qr", "eigh", "svd"])
def test_jvp_matches_jax(x64, name):
    """Same LAPACK routines, same conventions: tangents agree with jax's."""
    import jax

    a = spd(40, (4, 4)) + 0.3 * rand(41, (4, 4))  # well conditioned, not symmetric
    t = rand(42, (4, 4))
    if name in ("cholesky", "eigh"):
        a, t = a + a.T, t + t.T
    ours = {"cholesky": L.cholesky, "lu": lambda x: L.lu(x)[0],
            "qr": lambda x: L.qr(x, full_matrices=False), "eigh": L.eigh,
            "svd": lambda x: L.svd(x, full_matrices=False)}[name]
    theirs = {"cholesky": jax.lax.linalg.cholesky, "lu": lambda x: jax.lax.linalg.lu(x)[0],
              "qr": lambda x: jax.lax.linalg.qr(x, full_matrices=False),
              "eigh": jax.lax.linalg.eigh,
              "svd": lambda x: jax.lax.linalg.svd(x, full_matrices=False)}[name]
    _, got = yax.jvp(ours, (a,), (t,))
    _, want = jax.jvp(theirs, (a,), (t,))
    for g, w in zip(yax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-8)
