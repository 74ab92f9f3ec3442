"""More jax names yax mirrors: scipy.cluster.vq, lax.linalg.symmetric_product and
tridiagonal_solve, experimental.profiler; each compared with jax."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
from yax.lax import linalg as ylinalg

RNG = np.random.default_rng(1)


def test_vq_matches_jax():
    import jax.scipy.cluster.vq as jvq

    import yax.scipy.cluster.vq as yvq
    obs = RNG.normal(size=(7, 3)).astype(np.float32)
    book = RNG.normal(size=(4, 3)).astype(np.float32)
    (c, d), (cj, dj) = yvq.vq(obs, book), jvq.vq(obs, book)
    np.testing.assert_array_equal(c, cj)
    np.testing.assert_allclose(d, dj, rtol=1e-5)
    c1, _ = yvq.vq(obs[:, 0], book[:, 0])
    np.testing.assert_array_equal(c1, jvq.vq(obs[:, 0], book[:, 0])[0])
    g = yax.grad(lambda b: yvq.vq(obs, b)[1].sum())(book)
    gj = jax.grad(lambda b: jvq.vq(obs, b)[1].sum())(book)
    np.testing.assert_allclose(g, gj, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="same rank"):
        yvq.vq(obs, book[0])


@pytest.mark.parametrize("symmetrize", [False, True])
def test_symmetric_product(symmetrize):
    a = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    c = RNG.normal(size=(2, 3, 3)).astype(np.float32)
    c = c + c.transpose(0, 2, 1)
    ours = ylinalg.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=symmetrize)
    theirs = jax.lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5,
                                              symmetrize_output=symmetrize)
    np.testing.assert_allclose(np.tril(ours), np.tril(theirs), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, 2 * a @ a.transpose(0, 2, 1) + 0.5 * c, rtol=1e-5,
                               atol=1e-5)


def _system(batch=(2,), m=6, k=3):
    d = RNG.uniform(3, 4, size=(*batch, m)).astype(np.float32)
    dl, du = (RNG.normal(size=(*batch, m)).astype(np.float32) for _ in range(2))
    dl[..., 0] = 0
    du[..., -1] = 0
    return dl, d, du, RNG.normal(size=(*batch, m, k)).astype(np.float32)


def test_tridiagonal_solve_matches_jax_and_differentiates():
    dl, d, du, b = _system()
    x = ylinalg.tridiagonal_solve(dl, d, du, b)
    np.testing.assert_allclose(x, jax.lax.linalg.tridiagonal_solve(dl, d, du, b), rtol=1e-5,
                               atol=1e-6)
    dense = np.zeros((2, 6, 6), np.float32)
    for n in range(2):
        dense[n] = np.diag(d[n]) + np.diag(dl[n, 1:], -1) + np.diag(du[n, :-1], 1)
    np.testing.assert_allclose(dense @ np.asarray(x), b, rtol=1e-4, atol=1e-5)

    def loss(solve):
        return lambda d_: (solve(dl, d_, du, b) ** 2).sum()
    np.testing.assert_allclose(yax.grad(loss(ylinalg.tridiagonal_solve))(d),
                               jax.grad(loss(jax.lax.linalg.tridiagonal_solve))(d),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(yax.jit(ylinalg.tridiagonal_solve)(dl[0], d[0], du[0], b[0]),
                               x[0], rtol=1e-6)
    np.testing.assert_allclose(yax.vmap(ylinalg.tridiagonal_solve)(dl, d, du, b), x,
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        ylinalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)


def test_experimental_profiler_reads_a_trace(tmp_path):
    import yax.experimental.profiler
    import yax.profiler
    with yax.profiler.trace(str(tmp_path)):
        yax.jit(lambda x: x + 1)(1.0).block_until_ready()
    runs = [p for p in tmp_path.rglob("*") if p.is_dir() and p.parent.name == "profile"]
    assert runs
    out = yax.experimental.profiler.get_profiled_instructions_proto(str(runs[0]))
    assert isinstance(out, bytes)  # empty on CPU (jax: non-empty only for NVIDIA GPUs)


@pytest.mark.parametrize("shape", [(4,), (5,), (1,), (2, 3)])
def test_extend_random_threefry_2x32_matches_jax(shape):
    import jax.extend.random as jr

    import yax._jax_names.extend_random as yr
    keypair = (np.uint32(3), np.uint32(0xDEADBEEF))
    count = np.arange(int(np.prod(shape)), dtype=np.uint32).reshape(shape)
    np.testing.assert_array_equal(yr.threefry_2x32(keypair, count),
                                  jr.threefry_2x32(keypair, count))
    np.testing.assert_array_equal(yax.jit(yr.threefry_2x32)(keypair, count),
                                  jr.threefry_2x32(keypair, count))
    with pytest.raises(TypeError, match="uint32"):
        yr.threefry_2x32(keypair, count.astype(np.int32))


def test_extend_random_keys_from_an_impl():
    import jax.extend.random as jr

    import yax._jax_names.extend_random as yr
    key = yr.seed_with_impl(yr.threefry_prng_impl, 5)
    assert key.dtype == yax.random.key(0).dtype
    np.testing.assert_array_equal(yax.random.key_data(key),
                                  jax.random.key_data(jr.seed_with_impl(jr.threefry_prng_impl, 5)))
    keys = yr.random_seed(np.arange(3, dtype=np.int32), yr.threefry_prng_impl)
    theirs = jr.random_seed(np.arange(3, dtype=np.int32), jr.threefry_prng_impl)
    assert keys.shape == (3,)
    np.testing.assert_array_equal(yax.random.key_data(keys), jax.random.key_data(theirs))
    np.testing.assert_allclose(yax.random.uniform(key, (2,)),
                               jax.random.uniform(jr.seed_with_impl(jr.threefry_prng_impl, 5),
                                                  (2,)))
    assert yr.threefry_prng_impl.key_shape == jr.threefry_prng_impl.key_shape == (2,)
    with pytest.raises(ValueError, match="one PRNG implementation"):
        yr.seed_with_impl("rbg", 0)


def test_zero_from_primal():
    import jax.custom_derivatives as jcd

    from yax._jax_names.custom_derivatives import zero_from_primal
    tree = {"a": np.ones((2,), np.float32), "b": 3}
    ours, theirs = zero_from_primal(tree), jcd.zero_from_primal(tree)
    np.testing.assert_array_equal(ours["a"], theirs["a"])
    assert ours["a"].dtype == theirs["a"].dtype
    assert ours["b"].dtype == yax.float0 and ours["b"].shape == ()
    sym = zero_from_primal(tree, symbolic_zeros=True)
    assert sym["a"].shape == (2,) and sym["b"].dtype == yax.float0


def test_visualize_sharding(capsys):
    mesh = yax.make_mesh((1,), ("x",))
    s = yax.sharding.NamedSharding(mesh, yax.sharding.PartitionSpec("x"))
    yax.debug.visualize_sharding((4, 4), s)
    out = capsys.readouterr().out
    assert "CPU 0" in out and out.startswith("┌")
    x = yax.device_put(np.zeros((4, 4), np.float32), s)
    yax.debug.visualize_array_sharding(x)
    assert capsys.readouterr().out == out


def test_ragged_dot_matches_jax():
    lhs = RNG.normal(size=(7, 3)).astype(np.float32)
    rhs = RNG.normal(size=(3, 3, 4)).astype(np.float32)
    sizes = np.array([2, 0, 4], np.int32)  # an empty group, and a row past the groups
    np.testing.assert_allclose(yax.lax.ragged_dot(lhs, rhs, sizes),
                               jax.lax.ragged_dot(lhs, rhs, sizes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yax.jit(yax.lax.ragged_dot)(lhs, rhs, sizes),
                               jax.lax.ragged_dot(lhs, rhs, sizes), rtol=1e-5, atol=1e-6)

    def loss(dot):
        return lambda a, b: (dot(a, b, sizes) ** 2).sum()
    for ours, theirs in zip(yax.grad(loss(yax.lax.ragged_dot), (0, 1))(lhs, rhs),
                            jax.grad(loss(jax.lax.ragged_dot), (0, 1))(lhs, rhs)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    batched = yax.vmap(yax.lax.ragged_dot, (0, None, None))(np.stack([lhs, lhs]), rhs, sizes)
    np.testing.assert_allclose(batched[1], jax.lax.ragged_dot(lhs, rhs, sizes), rtol=1e-5,
                               atol=1e-6)


def test_ragged_dot_general_contracting_form():
    dims = (([1], [0]), ([], []))
    lhs = RNG.normal(size=(2, 6)).astype(np.float32)
    rhs = RNG.normal(size=(6, 3)).astype(np.float32)
    sizes = np.array([1, 3, 2], np.int32)
    ours = yax.lax.ragged_dot_general(lhs, rhs, sizes,
                                      yax.lax.RaggedDotDimensionNumbers(dims, [1], []))
    theirs = jax.lax.ragged_dot_general(lhs, rhs, sizes,
                                        jax.lax.RaggedDotDimensionNumbers(dims, [1], []))
    assert ours.shape == (3, 2, 3)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="2-D forms"):
        yax.lax.ragged_dot_general(np.ones((2, 2, 6)), rhs, sizes,
                                   yax.lax.RaggedDotDimensionNumbers((([2], [0]), ([], [])),
                                                                     [2], []))
    # group_offset: groups before it are skipped (zero rows)
    out = yax.lax.ragged_dot(np.ones((4, 2), np.float32), np.ones((2, 2, 1), np.float32),
                             np.array([1, 3], np.int32), group_offset=np.array([1], np.int32))
    np.testing.assert_array_equal(np.asarray(out)[:, 0], [0, 2, 2, 2])


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator_matches_jax(method):
    from jax.scipy.interpolate import RegularGridInterpolator as JRGI

    from yax.scipy.interpolate import RegularGridInterpolator as YRGI
    x = np.linspace(0, 1, 5).astype(np.float32)
    y = np.array([0.0, 0.3, 1.0, 2.0], np.float32)
    values = RNG.normal(size=(5, 4, 2)).astype(np.float32)  # a trailing axis too
    pts = np.array([[0.1, 0.2], [0.5, 1.5], [0.99, 0.0], [1.2, 0.5], [-0.1, 3.0]], np.float32)
    ours, theirs = YRGI((x, y), values, method=method), JRGI((x, y), values, method=method)
    np.testing.assert_allclose(ours(pts), theirs(pts), rtol=1e-5, atol=1e-6)
    extrap = YRGI((x, y), values, method=method, fill_value=None)
    np.testing.assert_allclose(extrap(pts), JRGI((x, y), values, method=method,
                                                 fill_value=None)(pts), rtol=1e-5, atol=1e-5)
    g = yax.grad(lambda v: YRGI((x, y), v)(pts[:3]).sum())(values)
    gj = jax.grad(lambda v: JRGI((x, y), v)(pts[:3]).sum())(values)
    np.testing.assert_allclose(g, gj, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yax.jit(lambda r, p: r(p))(ours, pts), theirs(pts), rtol=1e-5,
                               atol=1e-6)


def test_checkify_init_error_and_hijax_shaped_array():
    from yax._jax_names import hijax
    from yax.experimental import checkify
    assert checkify.init_error.get() is None
    checkify.init_error.throw()
    from yax._jax_names.core import ShapedArray
    assert hijax.ShapedArray is ShapedArray


def _raw_qr(a):
    h, taus = jax.numpy.linalg.qr(a, mode="raw")
    return np.asarray(h).swapaxes(-1, -2), np.asarray(taus)


def test_householder_product_and_ormqr_match_jax():
    a = RNG.normal(size=(5, 3)).astype(np.float32)
    h, taus = _raw_qr(a)
    np.testing.assert_allclose(ylinalg.householder_product(h, taus),
                               jax.lax.linalg.householder_product(h, taus), rtol=1e-5,
                               atol=1e-6)
    c, c_right = (RNG.normal(size=s).astype(np.float32) for s in [(5, 2), (2, 5)])
    for left, transpose, m in [(True, False, c), (True, True, c), (False, False, c_right),
                               (False, True, c_right)]:
        np.testing.assert_allclose(
            ylinalg.ormqr(h, taus, m, left=left, transpose=transpose),
            jax.lax.linalg.ormqr(h, taus, m, left=left, transpose=transpose),
            rtol=1e-5, atol=1e-6)
    hb, tb = np.stack([h, h]), np.stack([taus, taus])
    np.testing.assert_allclose(ylinalg.householder_product(hb, tb)[1],
                               jax.lax.linalg.householder_product(h, taus), rtol=1e-5,
                               atol=1e-6)


def test_cholesky_update_matches_jax(x64):
    m = RNG.normal(size=(4, 4)).astype(np.float32)
    m = m @ m.T + 4 * np.eye(4, dtype=np.float32)
    r = np.linalg.cholesky(m).T.astype(np.float32)
    w = RNG.normal(size=4).astype(np.float32)
    out = ylinalg.cholesky_update(r, w)
    np.testing.assert_allclose(out, jax.lax.linalg.cholesky_update(r, w), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out).T @ np.asarray(out), m + np.outer(w, w),
                               rtol=1e-4, atol=1e-4)
    # jax has no derivative rule for cholesky_update; yax's is that of its rotations
    from yax.test_util import check_grads
    check_grads(lambda w_: ylinalg.cholesky_update(r.astype(np.float64), w_),
                (w.astype(np.float64),), order=1, modes=("rev",))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
def test_mulhi_matches_jax(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, size=64, endpoint=True).astype(dtype)
    y = RNG.integers(info.min, info.max, size=64, endpoint=True).astype(dtype)
    x[:3], y[:3] = info.min, [info.min, info.max, 0]  # the extremes
    np.testing.assert_array_equal(yax.lax.mulhi(x, y), jax.lax.mulhi(x, y))
    np.testing.assert_array_equal(yax.jit(yax.lax.mulhi)(x, y), jax.lax.mulhi(x, y))
    with pytest.raises(TypeError, match="integer"):
        yax.lax.mulhi(np.ones(2, np.float32), np.ones(2, np.float32))
