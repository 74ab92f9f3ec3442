"""lax.while_loop: eager, jit, forward mode, vmap (batched and unbatched predicates), errors, and
real jax.lax.while_loop as the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax
from yax.lax.while_loop import WhileLoopBodyError, WhileLoopPredicateError
from yax.primitives.control_flow.while_loop import WhileLoopReverseModeError
from yax.test_util import check_grads


def py_while(cond, body, val):
    while cond(val):
        val = body(val)
    return val


# a damped map with a data-dependent trip count: (i, x) -> (i + 1, x * a + b) while |x| < lim
def make_loop(a, b, lim, max_i=50):
    def cond(c):
        i, x = c
        return (i < max_i) & (jnp.sum(jnp.abs(x)) < lim)

    def body(c):
        i, x = c
        return i + 1, x * a + b
    return cond, body


def np_loop(a, b, lim, x, max_i=50):
    i = 0
    while i < max_i and np.sum(np.abs(x)) < lim:
        i, x = i + 1, x * a + b
    return i, x


@pytest.mark.parametrize("seed", range(3))
def test_eager_and_jit_match_python(seed):
    rng = np.random.default_rng(seed)
    a, b = np.float32(1.0 + rng.uniform(0.1, 0.5)), rng.normal(size=3).astype(np.float32)
    x = rng.normal(size=3).astype(np.float32)
    want_i, want_x = np_loop(a, b, 20.0, x)
    cond, body = make_loop(a, b, 20.0)
    for f in (lambda x: lax.while_loop(cond, body, (0, x)),
              yax.jit(lambda x: lax.while_loop(cond, body, (0, x)))):
        i, got = f(x)
        assert int(i) == want_i
        np.testing.assert_allclose(np.asarray(got), want_x, rtol=1e-5)


def test_zero_iterations_and_dict_carry():
    out = lax.while_loop(lambda c: c["n"] < 0, lambda c: {"n": c["n"] + 1, "v": c["v"] * 2},
                         {"n": 3, "v": np.ones(2, np.float32)})
    assert int(out["n"]) == 3
    np.testing.assert_array_equal(np.asarray(out["v"]), np.ones(2))


def test_eager_loop_does_not_retrace():
    calls = []

    def body(x):
        calls.append(1)
        return x + 1.0

    def cond(x):
        return x < 5.0
    for _ in range(3):
        assert float(lax.while_loop(cond, body, np.float32(0.0))) == 5.0
    assert len(calls) == 1


def test_jvp_matches_finite_differences(x64):
    def f(x, y):
        def body(c):
            i, v = c
            return i + 1, jnp.sin(v) * y + v
        return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]
    x, y = np.array([0.3, -0.7]), np.array([1.2, 0.4])
    check_grads(f, (x, y), order=2, modes=("fwd",))


def test_jvp_tangent_enters_through_body_const_only(x64):
    # the carry starts with a zero tangent: the fixpoint must make it nonzero
    def f(y):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * y + 1.0),
                              (0, np.float64(1.0)))[1]
    _, t = yax.jvp(f, (np.float64(2.0),), (np.float64(1.0),))
    # v = y^3 + y^2 + y + 1 -> 3y^2 + 2y + 1 = 17
    np.testing.assert_allclose(float(t), 17.0)
    check_grads(f, (np.float64(0.7),), order=2, modes=("fwd",))


def test_grad_raises_clear_error():
    def f(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    with pytest.raises(WhileLoopReverseModeError, match="fori_loop") as info:
        yax.grad(f)(np.float32(1.0))
    assert "number of iterations" in str(info.value)
    assert "test_while_loop.py" in str(info.value)
    with pytest.raises(WhileLoopReverseModeError):
        yax.grad(yax.jit(f))(np.float32(1.0))


def test_vmap_unbatched_predicate():
    # the trip count depends only on the unbatched counter: one loop, batched body
    xs = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)

    def f(x):
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5 + c[0]),
                              (0, x))
    i, got = yax.vmap(f)(xs)
    np.testing.assert_array_equal(np.asarray(i), [4] * 5)
    want = xs.copy()
    for k in range(4):
        want = want * 1.5 + k
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    jaxpr = str(yax.make_jaxpr(yax.vmap(f))(xs))
    assert "select_n" not in jaxpr and "reduce_or" not in jaxpr


@pytest.mark.parametrize("seed", range(2))
def test_vmap_batched_predicate_lanes_finish_apart(seed):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(0.1, 3.0, size=(6, 2)).astype(np.float32)
    lims = rng.uniform(5.0, 200.0, size=6).astype(np.float32)

    def f(x, lim):
        cond, body = make_loop(np.float32(1.7), np.float32(0.5), lim)
        return lax.while_loop(cond, body, (0, x))
    for g in (yax.vmap(f), yax.jit(yax.vmap(f)), yax.vmap(yax.jit(f))):
        i, got = g(xs, lims)
        want = [np_loop(np.float32(1.7), np.float32(0.5), lim, x) for x, lim in zip(xs, lims)]
        assert len({w[0] for w in want}) > 1  # lanes really stop at different iterations
        np.testing.assert_array_equal(np.asarray(i), [w[0] for w in want])
        np.testing.assert_allclose(np.asarray(got), np.stack([w[1] for w in want]), rtol=1e-5)


def test_vmap_in_axes_and_jvp_of_vmap(x64):
    xs = np.linspace(0.5, 2.0, 4)

    def cond(c):
        return jnp.max(c[1]) < 10.0

    def body(c):
        return c[0] + 1, c[1] * 1.3 + 0.1

    def f(x):
        return lax.while_loop(cond, body, (0, x))
    # batch axis 1 of a (2, 4) input: each example is a 2-vector
    i, v = yax.vmap(f, in_axes=1)(np.stack([xs, xs / 2]))
    want = [py_while(lambda c: np.max(c[1]) < 10.0, body, (0, np.array([x, x / 2])))
            for x in xs]
    np.testing.assert_array_equal(np.asarray(i), [w[0] for w in want])
    np.testing.assert_allclose(np.asarray(v), np.stack([w[1] for w in want]), rtol=1e-12)
    _, t = yax.jvp(lambda x: yax.vmap(f)(x)[1], (xs,), (np.ones(4),))
    np.testing.assert_allclose(np.asarray(t), [1.3 ** w[0] for w in want], rtol=1e-10)


def test_nested_while_loops():
    def f(n):
        def outer_body(c):
            i, total = c
            inner = lax.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] + d[0]),
                                   (0, 0))[1]
            return i + 1, total + inner
        return lax.while_loop(lambda c: c[0] < n, outer_body, (0, 0))[1]
    want = [sum(sum(range(i)) for i in range(n)) for n in range(6)]
    assert int(f(5)) == want[5]
    assert int(yax.jit(f)(np.int32(4))) == want[4]
    np.testing.assert_array_equal(np.asarray(yax.vmap(f)(np.arange(6, dtype=np.int32))), want)


def test_predicate_error_names_the_problem():
    with pytest.raises(WhileLoopPredicateError, match=r"bool\[\].*returned f32\[\]") as info:
        lax.while_loop(lambda c: c * 1.0, lambda c: c, np.float32(1.0))
    assert "test_while_loop.py" in str(info.value)
    with pytest.raises(WhileLoopPredicateError, match=r"bool\[3\]"):
        lax.while_loop(lambda c: c < 1.0, lambda c: c, np.zeros(3, np.float32))


def test_body_structure_and_type_errors():
    with pytest.raises(WhileLoopBodyError, match="structure") as info:
        lax.while_loop(lambda c: c[0] < 3, lambda c: c[0] + 1, (0, 1.0))
    assert "test_while_loop.py" in str(info.value)
    with pytest.raises(WhileLoopBodyError, match=r"f32\[2\].*f32\[3\]"):
        lax.while_loop(lambda c: c[0] < 3.0, lambda c: c[:2], np.zeros(3, np.float32))
    with pytest.raises(WhileLoopBodyError, match=r"i32\[\].*weakly typed"):
        lax.while_loop(lambda c: c < 3.0, lambda c: c.astype(np.int32),
                       np.float32(0.0))


def test_weak_types_adapt_like_jax():
    # Python float init, f32 array in the body: the carry becomes f32 (strong)
    k = np.float32(2.0)
    out = lax.while_loop(lambda c: c < 10.0, lambda c: c * yax.device_put(k), 1.0)
    assert float(out) == 16.0 and out.dtype == np.float32 and not out.aval.weak_type
    # weak output into a strong carry keeps the carry's type
    out = lax.while_loop(lambda c: c < 3, lambda c: c + 1, np.int32(0))
    assert int(out) == 3 and out.dtype == np.int32 and not out.aval.weak_type


def test_against_jax_oracle():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(7)
    xs = rng.uniform(0.5, 2.0, size=(4, 3)).astype(np.float32)

    def make(lib_lax, np_):
        def f(x):
            def cond(c):
                return (c[0] < 20) & (np_.max(c[1]) < 50.0)

            def body(c):
                return c[0] + 1, c[1] * 1.4 + np_.sin(c[1])
            return lib_lax.while_loop(cond, body, (0, x))
        return f
    import jax.numpy as jjnp
    yf, jf = make(lax, jnp), make(jax.lax, jjnp)
    cases = ((yf, jf, xs[0]), (yax.jit(yf), jax.jit(jf), xs[1]),
             (yax.vmap(yf), jax.vmap(jf), xs))
    for g, h, arg in cases:
        (yi, yv), (ji, jv) = g(arg), h(arg)
        np.testing.assert_array_equal(np.asarray(yi), np.asarray(ji))
        np.testing.assert_allclose(np.asarray(yv), np.asarray(jv), rtol=1e-5)
    _, yt = yax.jvp(lambda x: yf(x)[1], (xs[0],), (np.ones(3, np.float32),))
    _, jt = jax.jvp(lambda x: jf(x)[1], (xs[0],), (np.ones(3, np.float32),))
    np.testing.assert_allclose(np.asarray(yt), np.asarray(jt), rtol=1e-4)


def test_bounded_while_loop_is_reverse_differentiable(x64):
    from yax import lax
    body = lambda c: (c[0] * 1.5 + c[1], c[1])
    f = lambda x: lax.while_loop(lambda c: c[0] < 10.0, body, (x, 1.0), max_steps=20)[0]

    def unrolled(x):  # the same loop unrolled 20 times with masking
        c = (x, 1.0)
        for _ in range(20):
            keep = c[0] < 10.0
            n = body(c)
            c = (yax.numpy.where(keep, n[0], c[0]), c[1])
        return c[0]

    for x in (0.5, 1.0, 3.0, 12.0):
        np.testing.assert_allclose(f(x), unrolled(x), rtol=1e-12)
        np.testing.assert_allclose(yax.grad(f)(x), yax.grad(unrolled)(x), rtol=1e-12)
        # the unbounded loop agrees on values
        full = lax.while_loop(lambda c: c[0] < 10.0, body, (x, 1.0))[0]
        np.testing.assert_allclose(f(x), full, rtol=1e-12)
    with pytest.raises(yax.errors.YaxError, match="max_steps"):
        lax.while_loop(lambda c: c < 1.0, lambda c: c, 0.0, max_steps=2.5)
