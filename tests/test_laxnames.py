"""lax.linalg's eig, schur, hessenberg, tridiagonal, qdwh and option enums, and lax's
rng_bit_generator / rng_uniform / RandomAlgorithm, against the installed jax: values, dtypes,
shapes, printed jaxprs, bits (bit for bit), derivatives (jax and finite differences), vmap
against a loop, jit against eager, and jax's errors."""

from __future__ import annotations

import jax
import jax.lax.linalg as JL
import numpy as np
import pytest

import yax
from yax import errors

L = yax.lax.linalg
RS = np.random.RandomState(0)
A_F32 = RS.randn(2, 4, 4).astype(np.float32)
A_C64 = (RS.randn(2, 4, 4) + 1j * RS.randn(2, 4, 4)).astype(np.complex64)
KEY = np.array([1, 2, 3, 4], np.uint32)


def as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def same_as_jax(got, want, rtol=1e-5, atol=1e-5):
    got, want = as_list(got), as_list(want)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def eager_equals_jit(f, *args):
    for e, j in zip(as_list(f(*args)), as_list(yax.jit(f)(*args)), strict=True):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-5, atol=1e-5)


def vmap_equals_loop(f, xs):
    got = as_list(yax.vmap(f)(xs))
    loop = [as_list(f(x)) for x in xs]
    for k, g in enumerate(got):
        np.testing.assert_allclose(np.asarray(g), np.stack([np.asarray(o[k]) for o in loop]),
                                   rtol=1e-5, atol=1e-5)


# --- eig -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("a", [A_F32, A_C64], ids=["f32", "c64"])
@pytest.mark.parametrize("left,right", [(True, True), (False, True), (True, False),
                                        (False, False)])
def test_eig_matches_jax(a, left, right):
    kw = dict(compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    got = L.eig(a, **kw)
    assert isinstance(got, list) and len(got) == 1 + left + right
    same_as_jax(got, JL.eig(a, **kw))
    w = np.asarray(got[0])
    if right:  # a vr = vr diag(w)
        vr = np.asarray(got[-1])
        np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=1e-4)
    if left:  # vl^H a = diag(w) vl^H
        vlh = np.conj(np.swapaxes(np.asarray(got[1]), -1, -2))
        np.testing.assert_allclose(vlh @ a, w[..., :, None] * vlh, atol=1e-4)


def test_eig_jit_vmap_and_default_outputs():
    f = lambda x: L.eig(x)  # noqa: E731  (both eigenvector sets by default, as jax)
    assert len(f(A_F32)) == 3
    eager_equals_jit(f, A_F32)
    vmap_equals_loop(f, A_F32)


def test_eig_eigenvalue_jvp_matches_jax_and_finite_differences(x64):
    a, da = RS.randn(4, 4), RS.randn(4, 4)
    f = lambda m, x: m.eig(x, compute_left_eigenvectors=False,  # noqa: E731
                           compute_right_eigenvectors=False)[0]
    (_, t), (_, tj) = yax.jvp(lambda x: f(L, x), (a,), (da,)), jax.jvp(
        lambda x: f(JL, x), (a,), (da,))
    np.testing.assert_allclose(np.asarray(t), np.asarray(tj), atol=1e-10)
    eps = 1e-6
    fd = (np.asarray(f(L, a + eps * da)) - np.asarray(f(L, a - eps * da))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), fd, atol=1e-6)


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
def test_eig_eigenvector_jvp_with_opt_in(x64, cplx):
    a = RS.randn(4, 4) + (1j * RS.randn(4, 4) if cplx else 0)
    da = (RS.randn(4, 4) + (1j * RS.randn(4, 4) if cplx else 0)).astype(a.dtype)

    def f(m, x):
        return m.eig(x, enable_eigvec_derivs=True)

    _, t = yax.jvp(lambda x: f(L, x), (a,), (da,))
    _, tj = jax.jvp(lambda x: f(JL, x), (a,), (da,))
    same_as_jax(t, tj, rtol=1e-8, atol=1e-9)
    eps = 1e-6  # geev's normalisation is a smooth gauge away from ties: central differences
    fd = [(np.asarray(p) - np.asarray(q)) / (2 * eps)
          for p, q in zip(f(L, a + eps * da), f(L, a - eps * da), strict=True)]
    for got, want in zip(t, fd, strict=True):
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)


def test_eig_eigenvector_jvp_needs_opt_in():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        yax.jvp(lambda x: L.eig(x, compute_left_eigenvectors=False)[1], (A_F32[0],),
                (A_F32[1],))


def test_eig_implementation_options():
    same_as_jax(L.eig(A_F32, implementation=L.EigImplementation.LAPACK),
                JL.eig(A_F32, implementation=JL.EigImplementation.LAPACK))
    for bad in (L.EigImplementation.MAGMA, L.EigImplementation.CUSOLVER, "lapack"):
        with pytest.raises(ValueError):
            L.eig(A_F32, implementation=bad)


# --- schur, hessenberg, tridiagonal --------------------------------------------------------------

@pytest.mark.parametrize("a", [A_F32, A_C64], ids=["f32", "c64"])
def test_schur_matches_jax(a):
    got = L.schur(a)
    assert isinstance(got, list)
    same_as_jax(got, JL.schur(a))
    t, q = (np.asarray(x) for x in got)
    np.testing.assert_allclose(q @ t @ np.conj(np.swapaxes(q, -1, -2)), a, atol=1e-4)
    only_t = L.schur(a, compute_schur_vectors=False)
    assert isinstance(only_t, list) and len(only_t) == 1
    same_as_jax(only_t, JL.schur(a, compute_schur_vectors=False))


@pytest.mark.parametrize("a", [A_F32, A_C64], ids=["f32", "c64"])
def test_hessenberg_matches_jax(a):
    got = L.hessenberg(a)
    assert isinstance(got, list)
    same_as_jax(got, JL.hessenberg(a))
    eager_equals_jit(L.hessenberg, a)
    vmap_equals_loop(L.hessenberg, a)


@pytest.mark.parametrize("a", [A_F32, A_C64], ids=["f32", "c64"])
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_matches_jax(a, lower):
    got = L.tridiagonal(a, lower=lower)
    assert isinstance(got, list) and len(got) == 4
    same_as_jax(got, JL.tridiagonal(a, lower=lower))
    d, e = np.asarray(got[1]), np.asarray(got[2])  # t's eigenvalues are the Hermitian part's
    herm = np.tril(a) + np.conj(np.swapaxes(np.tril(a, -1), -1, -2)) if lower else \
        np.triu(a) + np.conj(np.swapaxes(np.triu(a, 1), -1, -2))
    t = [np.diag(d[i]) + np.diag(e[i], 1) + np.diag(e[i], -1) for i in range(2)]
    np.testing.assert_allclose(np.linalg.eigvalsh(np.stack(t)), np.linalg.eigvalsh(herm),
                               atol=1e-4)


def test_tridiagonal_jit_and_vmap():
    f = lambda x: L.tridiagonal(x, lower=False)  # noqa: E731
    eager_equals_jit(f, A_F32)
    vmap_equals_loop(f, A_F32)


@pytest.mark.parametrize("f", [lambda x: L.schur(x)[0], lambda x: L.hessenberg(x)[0],
                               lambda x: L.tridiagonal(x)[1]], ids=["schur", "hess", "tri"])
def test_no_derivatives_as_jax(f):
    with pytest.raises(NotImplementedError, match="no derivative"):
        yax.jvp(f, (A_F32[0],), (A_F32[1],))


# --- enums and the options of eigh / svd -------------------------------------------------------

@pytest.mark.parametrize("name", ["EigImplementation", "EighImplementation", "SvdAlgorithm"])
def test_enums_match_jax(name):
    ours, theirs = getattr(L, name), getattr(JL, name)
    assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]


def test_eigh_implementation():
    s = A_F32 + np.swapaxes(A_F32, -1, -2)
    same_as_jax(L.eigh(s, implementation=L.EighImplementation.QR),
                JL.eigh(s, implementation=JL.EighImplementation.QR))
    for bad in (L.EighImplementation.JACOBI, L.EighImplementation.QDWH):
        with pytest.raises(NotImplementedError):
            L.eigh(s, implementation=bad)


@pytest.mark.parametrize("algorithm", ["DEFAULT", "QR", "DIVIDE_AND_CONQUER"])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_algorithm(algorithm, full_matrices):
    a = RS.randn(2, 5, 3).astype(np.float32)
    same_as_jax(L.svd(a, full_matrices=full_matrices, algorithm=L.SvdAlgorithm[algorithm]),
                JL.svd(a, full_matrices=full_matrices, algorithm=JL.SvdAlgorithm[algorithm]))
    same_as_jax(L.svd(a, compute_uv=False, algorithm=L.SvdAlgorithm[algorithm]),
                JL.svd(a, compute_uv=False, algorithm=JL.SvdAlgorithm[algorithm]))


def test_svd_qr_algorithm_is_gesvd_and_differentiable():
    assert "gesvd" in str(yax.jit(lambda x: L.svd(x, algorithm=L.SvdAlgorithm.QR)).lower(
        A_F32[0]).as_text())
    f = lambda x: L.svd(x, compute_uv=False, algorithm=L.SvdAlgorithm.QR)  # noqa: E731
    _, t = yax.jvp(f, (A_F32[0],), (A_F32[1],))
    _, tj = jax.jvp(lambda x: JL.svd(x, compute_uv=False, algorithm=JL.SvdAlgorithm.QR),
                    (A_F32[0],), (A_F32[1],))
    np.testing.assert_allclose(np.asarray(t), np.asarray(tj), atol=1e-4)
    for bad in (L.SvdAlgorithm.JACOBI, L.SvdAlgorithm.POLAR):
        with pytest.raises(NotImplementedError):
            L.svd(A_F32, algorithm=bad)


JAXPR_CASES = {
    "eig": lambda m: m.eig,
    "eig_opts": lambda m: (lambda x: m.eig(x, implementation=m.EigImplementation.LAPACK,
                                          enable_eigvec_derivs=True)),
    "schur": lambda m: m.schur,
    "schur_t": lambda m: (lambda x: m.schur(x, compute_schur_vectors=False)),
    "hessenberg": lambda m: m.hessenberg,
    "tridiagonal": lambda m: (lambda x: m.tridiagonal(x, lower=False)),
    "svd_qr": lambda m: (lambda x: m.svd(x, algorithm=m.SvdAlgorithm.QR)),
    "svd_s": lambda m: (lambda x: m.svd(x, compute_uv=False)),
    "eigh": lambda m: (lambda x: m.eigh(x, implementation=m.EighImplementation.QR)),
}


@pytest.mark.parametrize("name", sorted(JAXPR_CASES))
def test_jaxprs_print_as_jax(name):
    f = JAXPR_CASES[name]
    assert str(yax.make_jaxpr(f(L))(A_F32[0])) == str(jax.make_jaxpr(f(JL))(A_F32[0]))


# --- qdwh ----------------------------------------------------------------------------------------

def _qdwh_inputs():
    rs = np.random.RandomState(1)
    ill = (rs.randn(8, 4) @ np.diag([1, 1e-2, 1e-4, 1e-5])).astype(np.float32)
    return {"f32": rs.randn(5, 3).astype(np.float32), "ill_f32": ill,
            "c64": (rs.randn(5, 3) + 1j * rs.randn(5, 3)).astype(np.complex64),
            "square": rs.randn(4, 4).astype(np.float32)}


QDWH = _qdwh_inputs()


@pytest.mark.parametrize("name", sorted(QDWH))
def test_qdwh_matches_jax(name):
    x = QDWH[name]
    u, h, k, ok = L.qdwh(x)
    uj, hj, kj, okj = JL.qdwh(x)
    same_as_jax([u, h], [uj, hj], rtol=1e-4, atol=2e-5)
    assert int(k) == int(kj) and bool(ok) == bool(okj) is True
    assert np.asarray(k).dtype == np.asarray(kj).dtype and np.asarray(ok).dtype == np.bool_
    u, h = np.asarray(u), np.asarray(h)
    np.testing.assert_allclose(u @ h, x, atol=1e-5)
    np.testing.assert_allclose(np.conj(u.T) @ u, np.eye(x.shape[1]), atol=1e-5)


def test_qdwh_float64(x64):
    x = RS.randn(6, 4)
    same_as_jax(L.qdwh(x), JL.qdwh(x), rtol=1e-12, atol=1e-13)


def test_qdwh_options():
    x = QDWH["f32"]
    for got, want in [(L.qdwh(x, max_iterations=2), JL.qdwh(x, max_iterations=2)),
                      (L.qdwh(x, eps=1e-3), JL.qdwh(x, eps=1e-3))]:
        assert int(got[2]) == int(want[2]) and bool(got[3]) == bool(want[3])
    padded = np.zeros((6, 5), np.float32)
    padded[:5, :3] = x
    padded[5, 4] = 7.0  # outside dynamic_shape: ignored
    same_as_jax(L.qdwh(padded, dynamic_shape=(5, 3))[:2],
                JL.qdwh(padded, dynamic_shape=(5, 3))[:2], atol=2e-5)
    with pytest.raises(ValueError, match="M >= N"):
        L.qdwh(x.T)


def test_qdwh_jit_and_vmap():
    xs = np.stack([QDWH["f32"], 2 * QDWH["f32"][::-1]])
    eager_equals_jit(L.qdwh, xs[0])
    vmap_equals_loop(L.qdwh, xs)


# --- rng_bit_generator / rng_uniform -------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32], ids=["u8", "u16", "u32"])
def test_rng_bit_generator_bits_match_jax(algorithm, dtype):
    got = yax.lax.rng_bit_generator(KEY, (3, 5), dtype, yax.lax.RandomAlgorithm[algorithm])
    want = jax.lax.rng_bit_generator(KEY, (3, 5), dtype, jax.lax.RandomAlgorithm[algorithm])
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_rng_bit_generator_uint64_and_x64(x64):
    got = yax.lax.rng_bit_generator(KEY, (4,), np.uint64, yax.lax.RandomAlgorithm.RNG_PHILOX)
    want = jax.lax.rng_bit_generator(KEY, (4,), np.uint64, jax.lax.RandomAlgorithm.RNG_PHILOX)
    assert np.asarray(got[1]).dtype == np.uint64
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


def test_rng_bit_generator_enum_jaxpr_jit():
    assert [(m.name, int(m)) for m in yax.lax.RandomAlgorithm] == [
        (m.name, int(m)) for m in jax.lax.RandomAlgorithm]
    f = lambda m: (lambda k: m.lax.rng_bit_generator(k, (2, 3), np.uint16))  # noqa: E731
    assert str(yax.make_jaxpr(f(yax))(KEY)) == str(jax.make_jaxpr(f(jax))(KEY))
    eager_equals_jit(f(yax), KEY)
    # the new key continues the stream: a second draw differs from the first
    k2, b1 = yax.lax.rng_bit_generator(KEY, (8,))
    _, b2 = yax.lax.rng_bit_generator(k2, (8,))
    assert not np.array_equal(np.asarray(b1), np.asarray(b2))


def test_rng_bit_generator_vmap_is_per_key():
    keys = np.stack([KEY, KEY + 1, KEY * 3])
    vmap_equals_loop(lambda k: yax.lax.rng_bit_generator(k, (2,)), keys)


def test_rng_bit_generator_errors_and_zero_tangents():
    with pytest.raises(errors.ShapeError, match="uint32"):
        yax.lax.rng_bit_generator(KEY[:2], (3,))
    with pytest.raises(TypeError, match="unsupported dtype"):
        yax.lax.rng_bit_generator(KEY, (3,), np.float32)
    bits = np.asarray(yax.lax.rng_bit_generator(KEY, (3,))[1]).astype(np.float32)
    g = yax.grad(lambda x: (x * yax.lax.rng_bit_generator(KEY, (3,))[1].astype(np.float32))
                 .sum())(1.0)
    np.testing.assert_allclose(float(g), bits.sum(), rtol=1e-6)


def test_rng_uniform():
    f = lambda m: (lambda a, b: m.lax.rng_uniform(a, b, (3,)))  # noqa: E731
    assert str(yax.make_jaxpr(f(yax))(0.0, 1.0)) == str(jax.make_jaxpr(f(jax))(0.0, 1.0))
    draws = [np.asarray(yax.lax.rng_uniform(np.float32(2), np.float32(3), (500,)))
             for _ in range(2)]
    for d in draws:
        assert d.dtype == np.float32 and d.shape == (500,)
        assert d.min() >= 2 and d.max() < 3 and 2.3 < d.mean() < 2.7
    assert not np.array_equal(draws[0], draws[1])  # stateful: a new draw per run
    ints = np.asarray(yax.jit(lambda: yax.lax.rng_uniform(np.int32(0), np.int32(10), (400,)))())
    assert ints.dtype == np.int32 and set(np.unique(ints)) == set(range(10))
    with pytest.raises(TypeError, match="identical dtypes"):
        yax.lax.rng_uniform(np.float32(0), np.int32(1), (3,))
    with pytest.raises(NotImplementedError, match="no derivative"):
        yax.grad(lambda a: yax.lax.rng_uniform(a, 1.0, (3,)).sum())(0.0)
    with pytest.raises(NotImplementedError, match="vmap"):
        yax.vmap(lambda a: yax.lax.rng_uniform(a, 1.0, (3,)))(np.zeros(2, np.float32))


# --- shape_as_value ------------------------------------------------------------------------------

def test_shape_as_value_concrete_and_jaxpr():
    for shape in [(2, 3), (), (7,)]:
        got, want = yax.lax.shape_as_value(shape), jax.lax.shape_as_value(shape)
        assert np.asarray(got).dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    f = lambda m: (lambda x: m.lax.shape_as_value(x.shape))  # noqa: E731
    x = np.zeros((2, 3), np.float32)
    assert str(yax.make_jaxpr(f(yax))(x)) == str(jax.make_jaxpr(f(jax))(x))


def test_shape_as_value_symbolic_export():
    import jax.export

    from yax import export as yexport
    b, = yexport.symbolic_shape("b")
    jb, = jax.export.symbolic_shape("b")
    ours = yexport.export(yax.jit(lambda x: yax.lax.shape_as_value(x.shape) + 1))(
        yax.ShapeDtypeStruct((b, 3, 2 * b), np.float32))
    theirs = jax.export.export(jax.jit(lambda x: jax.lax.shape_as_value(x.shape) + 1))(
        jax.ShapeDtypeStruct((jb, 3, 2 * jb), np.float32))
    for n in (1, 4):
        x = np.zeros((n, 3, 2 * n), np.float32)
        got, want = np.asarray(ours.call(x)), np.asarray(theirs.call(x))
        assert got.dtype == want.dtype == np.int32
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, [n + 1, 4, 2 * n + 1])
