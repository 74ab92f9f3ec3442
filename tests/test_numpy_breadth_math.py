"""jnp math breadth (calculus.py, float_bits.py, products.py..., polynomial.py), array methods
and finfo/iinfo against jax.numpy: values and dtypes eagerly and under jit, derivatives in
float64, vmap against a loop."""

from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import ml_dtypes
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import assert_close, check_against_jax_numpy
from tests.suiteb_util import batched_checks, check_yax_numpy, jax_numpy_table
from yax import errors
from yax.test_util import check_grads

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 5)).astype(np.float32)
XS = np.cumsum(RNG.random(5) + 0.1).astype(np.float32)
A3 = RNG.normal(size=(4, 3)).astype(np.float32)
B3 = RNG.normal(size=(4, 3)).astype(np.float32)
U7 = RNG.normal(size=7).astype(np.float32)
W3 = RNG.normal(size=3).astype(np.float32)


check = check_against_jax_numpy
# Tests of several checks run them under `batched_checks` (tests/suiteb_util.py): jax's values
# for all of a test's checks come from one jitted program rather than eager jax's compile per
# primitive per check; yax's side of each check is unchanged.


CASES = {
    "diff2": (lambda m, x: m.diff(x, 2, axis=0), X),
    "diff_prepend_append": (lambda m, x: m.diff(x, prepend=0.0, append=x[:, :2]), X),
    "diff_bool": (lambda m, x: m.diff(x > 0), X),
    "ediff1d": (lambda m, x: m.ediff1d(x, to_end=np.array([1.0, 2.0], np.float32),
                                       to_begin=-1.0), X),
    "gradient_all": (lambda m, x: m.gradient(x), X),
    "gradient_step": (lambda m, x: m.gradient(x, 0.5, axis=1), X),
    "gradient_coords": (lambda m, x, c: m.gradient(x, c, axis=1), X, XS),
    "gradient_int": (lambda m, x: m.gradient(x), np.arange(5, dtype=np.int32) ** 2),
    "trapezoid": (lambda m, x: m.trapezoid(x, axis=0), X),
    "trapezoid_x": (lambda m, x, c: m.trapezoid(x, c), X, XS),
    "trapezoid_dx": (lambda m, x: m.trapezoid(x, dx=0.3), X),
    "kron": (lambda m, x: m.kron(x[:2, :3], np.arange(4, dtype=np.int32).reshape(2, 2)), X),
    "kron_1d_2d": (lambda m, x: m.kron(x[0], x[:2, :2]), X),
    "cross3": (lambda m, a, b: m.cross(a, b), A3, B3),
    "cross2": (lambda m, a, b: m.cross(a[:, :2], b[:, :2]), A3, B3),
    "cross23": (lambda m, a, b: m.cross(a[:, :2], b), A3, B3),
    "cross_axes": (lambda m, a, b: m.cross(a.T, b.T, axisa=0, axisb=0, axisc=0), A3, B3),
    "nan_to_num": (lambda m, x: m.nan_to_num(x),
                   np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)),
    "nan_to_num_args": (lambda m, x: m.nan_to_num(x, nan=1, posinf=2, neginf=-2),
                        np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)),
    "nan_to_num_complex": (lambda m, x: m.nan_to_num(x * (1 + 1j)),
                           np.array([np.nan, np.inf, 1.0], np.float32)),
    "isreal": (lambda m, x: m.isreal(x + 1j * (x > 0)), X),
    "iscomplex": (lambda m, x: m.iscomplex(x + 1j * (x > 0)), X),
    "isreal_float": (lambda m, x: m.isreal(x), X),
    "array_equal": (lambda m, x: m.array_equal(x, x), X),
    "array_equal_shapes": (lambda m, x: m.array_equal(x, x[:2]), X),
    "array_equal_nan": (lambda m, x: m.array_equal(x, x, equal_nan=True),
                        np.array([np.nan, 1.0], np.float32)),
    "array_equiv": (lambda m, x: m.array_equiv(x[:1], m.concatenate([x[:1]] * 3)), X),
    "modf": (lambda m, x: m.modf(x * 3), X),
    "gcd": (lambda m, a, b: m.gcd(a, b), np.array([12, -18, 0, 0, 7, 100], np.int32),
            np.array([8, 12, 5, 0, 13, -75], np.int32)),
    "lcm": (lambda m, a, b: m.lcm(a, b), np.array([12, -18, 0, 0, 7, 100], np.int32),
            np.array([8, 12, 5, 0, 13, -75], np.int32)),
    "polyval": (lambda m, x: m.polyval(np.array([1.0, -2.0, 0.5], np.float32), x), X),
    "polyval_int": (lambda m, x: m.polyval(np.array([1, 2, 3], np.int32), x),
                    np.arange(4, dtype=np.int32)),
    "polyadd": (lambda m, p: m.polyadd(p, np.ones(4, np.float32)), W3),
    "polysub": (lambda m, p: m.polysub(p, np.array([1, 1], np.int32)), W3),
    "polymul": (lambda m, p: m.polymul(p, np.array([1.0, 1.0, 3.0], np.float32)), W3),
    "polyder": (lambda m, p: m.polyder(p, 2), np.array([1.0, 2, 3, 4], np.float32)),
    "polyder_int": (lambda m, p: m.polyder(p), np.array([1, 2, 3, 4], np.int32)),
    "polyint": (lambda m, p: m.polyint(p, 2, k=np.array([1.0, 2.0], np.float32)), W3),
    "poly": (lambda m, p: m.poly(p), W3),
    "convolve_int": (lambda m, a: m.convolve(a, a[:3]), np.arange(4, dtype=np.int32)),
    "polydiv": (lambda m, p: m.polydiv(p, np.array([2.0, 1.0], np.float32)), U7[:4]),
    "angle": (lambda m, x: m.angle(x + 1j * x[::-1]), X),
    "angle_real_deg": (lambda m, x: m.angle(x, deg=True), X),
    "unwrap": (lambda m, p: m.unwrap(m.cumsum(p) * 2), U7),
    "unwrap_period": (lambda m, p: m.unwrap(m.cumsum(p) * 2, discont=1.0, period=4.0), U7),
    "bitwise_count": (lambda m, x: m.bitwise_count(x), np.array([-5, 0, 7, 255], np.int32)),
    "vecdot": (lambda m, x: m.vecdot(x, x[0]), X),
    "matvec": (lambda m, x: m.matvec(x, x[0]), X),
    "vecmat": (lambda m, x: m.vecmat(x[:, 0], x), X),
}


EAGER_SAMPLE = {"diff_prepend_append", "gradient_coords", "trapezoid_x", "kron", "cross3",
                "nan_to_num_complex", "array_equal_nan", "gcd", "polyval", "polymul",
                "polyint", "polydiv", "unwrap", "bitwise_count", "matvec"}


# jax's values for the whole CASES table in one jitted program (tests/suiteb_util.py) rather
# than eager jax's compile per primitive per case; yax's side of each case is unchanged
_CASES_ORACLE = jax_numpy_table(lambda: {name: (fn, args) for name, (fn, *args) in
                                         CASES.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    fn, *args = CASES[name]
    check_yax_numpy(fn, args, _CASES_ORACLE()[name], rtol=1e-5, atol=1e-5,
                    eager=name in EAGER_SAMPLE)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_match_jax(mode):
    with batched_checks() as check:
        for a, b in ((U7, W3), (W3, U7)):
            check(lambda m, a, b: m.convolve(a, b, mode), a, b, rtol=1e-5, atol=1e-5,
                  eager=mode == "same")
            check(lambda m, a, b: m.correlate(a, b, mode), a, b, rtol=1e-5, atol=1e-5,
                  eager=mode == "same")
        check(lambda m, a, b: m.correlate(a + 1j * a[::-1], b, mode), W3, U7, rtol=1e-5, atol=1e-5,
              eager=False)


def test_interp_matches_jax():
    with batched_checks() as check:
        xp = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
        fp = np.array([1.0, -1.0, 3.0, 0.0], np.float32)
        q = np.linspace(-1, 5, 13).astype(np.float32)
        check(lambda m, q, xp, fp: m.interp(q, xp, fp), q, xp, fp)
        check(lambda m, q, xp, fp: m.interp(q, xp, fp, left=-9, right=9), q, xp, fp, eager=False)
        check(lambda m, q, xp, fp: m.interp(q, xp, fp, period=3.0), q, xp, fp, rtol=1e-5,
              atol=1e-5, eager=False)
        check(lambda m, q, xp, fp: m.interp(q, xp, fp * 1j), q, xp, fp, eager=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64])
def test_frexp_ldexp_match_jax(dtype, x64):
    with batched_checks() as check:
        v = np.array([0.0, -0.0, 1.0, -3.5, 1e-3, -2e-4, np.inf, -np.inf, np.nan, 3e4, 0.75],
                     np.float32).astype(dtype)
        check(lambda m, v: m.frexp(v), v)
        k = np.array([0, 1, -1, 10, -14, 5, 2, 3, -2, -9, 4], np.int32)
        check(lambda m, v, k: m.ldexp(v, k), v, k)


def test_ldexp_wide_exponents():
    with batched_checks() as check:
        check(lambda m, a, k: m.ldexp(a, k), np.float32(1e-30), np.int32(200))
        check(lambda m, a, k: m.ldexp(a, k), np.float32(3e20), np.int32(-200))
        check(lambda m, a, k: m.ldexp(a, k), np.int32(3), np.int32(4))


@pytest.mark.parametrize("M", [0, 1, 7])
def test_windows_match_jax(M):
    with batched_checks() as check:
        for name in ("hamming", "hanning", "blackman", "bartlett"):
            check(lambda m, name=name: getattr(m, name)(M), rtol=1e-5, atol=1e-6, eager=False)
        check(lambda m: m.kaiser(M, 3.5), rtol=1e-5, atol=1e-6)


def test_i0_float32():
    with batched_checks() as check:
        x = np.array([0.0, 0.5, -3.0, 10.0, 14.9, 15.1, 30.0, 80.0], np.float32)
        check(lambda m, x: m.i0(x), x, rtol=2e-6)


def test_i0_float64_and_grad(x64):
    with batched_checks() as check:
        x = np.array([0.0, 0.5, -3.0, 10.0, 14.9, 15.1, 30.0, 200.0])
        check(lambda m, x: m.i0(x), x, rtol=1e-13)
        check_grads(jnp.i0, (np.array([0.3, -2.0, 7.0, 20.0]),), order=1)


def test_polyfit_matches_jax():
    with batched_checks() as check:
        xx = np.linspace(0, 1, 20).astype(np.float32)
        yy = (3 * xx ** 2 - xx + 0.5).astype(np.float32)
        check(lambda m, x, y: m.polyfit(x, y, 2), xx, yy, rtol=1e-3, atol=1e-3)
        noisy = yy + np.sin(40 * xx).astype(np.float32) * 0.1
        # the rest only under jit: eager lstsq compiles many small programs
        for fn in (lambda m, x, y: m.polyfit(x, m.stack([y, 2 * y], 1), 2, w=x + 1),
                   lambda m, x, y: m.polyfit(x, y, 2, cov=True),
                   lambda m, x, y: m.polyfit(x, m.stack([y, 2 * y], 1), 1, cov="unscaled")):
            got = jax.tree_util.tree_leaves(
                yax.jit(lambda x, y, fn=fn: fn(jnp, x, y))(xx, noisy))
            # jax's values jitted too: one compile instead of eager jax's one per primitive
            want = jax.tree_util.tree_leaves(
                jax.jit(lambda x, y, fn=fn: fn(jnp_ref, x, y))(xx, noisy))
            for g, w in zip(got, want, strict=True):
                assert_close(g, np.asarray(w), rtol=1e-3, atol=1e-4)


def test_isscalar_and_objs():
    for v in [1, 1.0, 1j, np.float32(1), np.array(1.0), X, [1]]:
        assert jnp.isscalar(v) == jnp_ref.isscalar(v), v
    assert jnp.isscalar(jnp.ones(())) and not jnp.isscalar(jnp.ones((1,)))
    assert jnp.iscomplexobj(X + 1j) and not jnp.iscomplexobj(X) and jnp.isrealobj(X)
    assert yax.jit(lambda v: jnp.asarray(jnp.isscalar(v)))(np.float32(1.0))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_jax(name):
    ours, theirs = jnp.finfo(getattr(jnp, name)), jnp_ref.finfo(getattr(jnp_ref, name))
    for attr in ("eps", "tiny", "max", "min", "bits", "resolution", "smallest_normal",
                 "epsneg", "nmant", "nexp", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32", "uint32", "int64"])
def test_iinfo_matches_jax(name):
    ours, theirs = jnp.iinfo(getattr(jnp, name)), jnp_ref.iinfo(getattr(jnp_ref, name))
    assert (ours.min, ours.max, ours.bits) == (theirs.min, theirs.max, theirs.bits)


def test_existing_ufuncs_verified():
    with batched_checks() as check:
        check(lambda m, x: (m.sinc(x), m.heaviside(x, 0.5), m.hypot(x, 2 * x),
                            m.logaddexp(x, -x), m.signbit(x)), X)


def test_array_methods():
    x = jnp.asarray(np.array([[3.0, 1.0, 2.0], [2.0, 5.0, 0.0]], np.float32))
    r = np.asarray(x)
    assert_close(x.sort(), np.sort(r))
    assert_close(x.argsort(axis=0), np.argsort(r, axis=0, kind="stable").astype(np.int32))
    assert_close(x.trace(), np.float32(np.trace(r)))
    assert_close(x.diagonal(1), np.diagonal(r, 1))
    assert_close(x.repeat(2, axis=0), np.repeat(r, 2, axis=0))
    for g, w in zip(x.nonzero(), np.nonzero(r), strict=True):
        assert_close(g, w.astype(np.int32))
    assert_close(x.nonzero(size=6, fill_value=-1)[0],
                 np.array([0, 0, 0, 1, 1, -1], np.int32))
    assert_close(x.var(ddof=1), np.var(r, ddof=1).astype(np.float32))
    assert_close(x.std(axis=0), np.std(r, axis=0).astype(np.float32))
    assert_close(x.astype(jnp.int32), r.astype(np.int32))
    assert_close(x.clip(1, 2), np.clip(r, 1, 2))
    assert_close(x.round(), np.round(r))
    assert_close(x.cumsum(axis=1), np.cumsum(r, axis=1))
    assert x.flatten().shape == (6,) and x[None].squeeze().shape == (2, 3)
    assert x.item(1) == 1.0 and x.tolist() == r.tolist()
    assert_close(yax.jit(lambda v: v.sort(axis=0))(x), np.sort(r, axis=0))


def test_item_and_tolist_on_tracer_raise_clear_errors():
    with pytest.raises(errors.ConcretizationError, match=r"\.item\(\).*Return the value"):
        yax.jit(lambda v: v.item())(np.float32(1.0))
    with pytest.raises(errors.ConcretizationError, match=r"\.tolist\(\)"):
        yax.jit(lambda v: v.tolist())(np.ones(2, np.float32))


def test_grads(x64):
    x = RNG.normal(size=(4, 5))
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    for f in [lambda a: jnp.diff(a, 2), lambda a: jnp.gradient(a, axis=1),
              lambda a: jnp.gradient(a, np.cumsum(np.ones(5) * 0.7), axis=1),
              lambda a: jnp.trapezoid(a, np.arange(5.0) ** 2),
              lambda a: jnp.interp(a, xp, np.array([1.0, -1.0, 3.0, 0.0])),
              lambda a: jnp.interp(1.7, xp, a[0, :4]),
              lambda a: jnp.kron(a[:2, :2], a[2:, 3:]), lambda a: jnp.cross(a[:, :3], a[:, 2:]),
              lambda a: jnp.polyval(a[0], a[1]), lambda a: jnp.convolve(a[0], a[1, :3], "same"),
              lambda a: jnp.correlate(a[0], a[1, :2]), lambda a: jnp.ldexp(a, 3),
              lambda a: jnp.polyint(a[0]), lambda a: jnp.polyder(a[0], 2)]:
        check_grads(yax.jit(f), (x,), order=1, modes=("fwd", "rev"))


def test_vmap_matches_loop():
    xp = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    fps = RNG.normal(size=(3, 4)).astype(np.float32)
    qs = RNG.uniform(-1, 5, size=(3, 6)).astype(np.float32)
    cases = [(lambda q, fp: jnp.interp(q, xp, fp), (qs, fps)),
             (lambda q, fp: jnp.convolve(q, fp), (qs, fps)),
             (lambda q, fp: jnp.polyval(fp, q), (qs, fps)),
             (lambda q, fp: jnp.gradient(q), (qs, fps)),
             (lambda q, fp: jnp.frexp(q), (qs, fps)),
             (lambda q, fp: jnp.gcd(jnp.asarray(q * 10, jnp.int32), 6), (qs, fps))]
    for f, args in cases:
        got, fj = yax.jit(yax.vmap(f))(*args), yax.jit(f)
        for i in range(3):
            want = fj(*(a[i] for a in args))
            for g, w in zip(yax.tree_util.tree_leaves(got), yax.tree_util.tree_leaves(want),
                            strict=True):
                assert_close(np.asarray(g)[i], w)


def test_x64_result_dtypes_match_jax(x64):
    x = RNG.normal(size=(4, 5))
    xi = np.arange(12).reshape(3, 4)
    cases = [lambda m: m.frexp(x), lambda m: m.ldexp(x.astype(np.float32), np.array(3)),
             lambda m: m.gcd(xi, 4), lambda m: m.polyval(np.array([1, 2]), x.astype(
                 np.float32)), lambda m: m.trapezoid(xi), lambda m: m.i0(x.astype(np.float32)),
             lambda m: m.kaiser(5, 2.0), lambda m: m.bitwise_count(xi), lambda m: m.angle(xi),
             lambda m: m.mgrid[0:1:3j], lambda m: m.fromfunction(lambda i, j: i + j, (2, 2)),
             lambda m: m.convolve(np.arange(3), np.arange(2)), lambda m: m.tril_indices(3),
             lambda m: m.unravel_index(np.array([3, 5]), (2, 3)),
             lambda m: m.pad(xi, 2, "linear_ramp"), lambda m: m.pad(xi, 2, "mean"),
             lambda m: m.logspace(0, 1, 3), lambda m: m.geomspace(1, 10, 3)]
    for f in cases:
        # jitted: one compile per case instead of one per primitive in a new dtype; jax's
        # result dtypes are those of its trace, which eval_shape gives without compiling
        got = jax.tree_util.tree_leaves(yax.jit(lambda f=f: f(jnp))())
        want = jax.tree_util.tree_leaves(jax.eval_shape(lambda f=f: f(jnp_ref)))
        assert [np.asarray(g).dtype for g in got] == [np.dtype(w.dtype) for w in want]
