"""yax.lax.scan / map / fori_loop: against plain Python loops and jax.lax.scan, under every
transformation."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax
from yax.lax.scan import LoopBoundsError, ScanCarryError, ScanLengthError
from yax.test_util import check_grads

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def _close(a, b, tol=1e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def _python_scan(f, init, xs, reverse=False):
    """The reference meaning: a Python loop over the leading axis."""
    n = len(jax.tree_util.tree_leaves(xs)[0])
    carry, ys = init, [None] * n
    for i in (reversed(range(n)) if reverse else range(n)):
        carry, ys[i] = f(carry, jax.tree_util.tree_map(lambda x: x[i], xs))
    stacked = jax.tree_util.tree_map(lambda *y: np.stack([np.asarray(v) for v in y]), *ys)
    return carry, stacked


def _cell(w):
    """An RNN-like body closing over a parameter `w` (a const of the scan)."""
    def f(c, x):
        h = jnp.tanh(jnp.dot(w, c) + x)
        return h, jnp.sum(h * h)
    return f


# --- evaluation ---------------------------------------------------------------------------

@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_python_loop_eager_and_jit(reverse):
    w, c0, xs = _f32(3, 3), _f32(3), _f32(6, 3)
    want = _python_scan(_cell(w), c0, xs, reverse)
    _close(lax.scan(_cell(w), c0, xs, reverse=reverse), want)
    jitted = yax.jit(lambda w, c, xs: lax.scan(_cell(w), c, xs, reverse=reverse))
    _close(jitted(w, c0, xs), want)


def test_scan_pytrees_and_xs_none():
    def f(carry, x):
        a, b = carry["a"], carry["b"]
        return {"a": a + x[0], "b": b * x[1]}, (a, {"s": jnp.sum(b)})
    init = {"a": _f32(2), "b": _f32(2)}
    xs = (_f32(4, 2), _f32(4, 2))
    _close(lax.scan(f, init, xs), _python_scan(f, init, xs))
    carry, ys = lax.scan(lambda c, _: (c + 1.0, c), np.float32(0), None, length=3)
    _close((carry, ys), (3.0, np.array([0.0, 1.0, 2.0])))
    # integer/bool carries, and an empty loop (no iteration at all)
    got = lax.scan(lambda c, x: ((c[0] + x, c[1] | (x > 2)), x * 2), (np.int32(0), False),
                   np.arange(5, dtype=np.int32))
    _close(got, ((10, True), np.arange(5) * 2))
    _close(lax.scan(lambda c, x: (c + x, c), np.float32(1), np.zeros((0,), np.float32)),
           (1.0, np.zeros((0,))))


def test_scan_against_jax():
    w, c0, xs = _f32(3, 3), _f32(3), _f32(5, 3)

    def jf(c, x):
        h = jjnp.tanh(w @ c + x)
        return h, jjnp.sum(h * h)
    for reverse in (False, True):
        _close(lax.scan(_cell(w), c0, xs, reverse=reverse),
               jax.lax.scan(jf, c0, xs, reverse=reverse))
        g = yax.grad(lambda c: jnp.sum(lax.scan(_cell(w), c, xs, reverse=reverse)[1]))(c0)
        jg = jax.grad(lambda c: jjnp.sum(jax.lax.scan(jf, c, xs, reverse=reverse)[1]))(c0)
        _close(g, jg, 1e-4)


def test_map_and_fori_loop():
    xs = _f32(5, 3)
    _close(lax.map(lambda x: jnp.sin(x) * 2.0, xs), np.sin(xs) * 2.0)

    def body(i, v):
        return v * 0.5 + i
    want = np.float32(1.0)
    for i in range(2, 7):
        want = want * 0.5 + i
    _close(lax.fori_loop(2, 7, body, np.float32(1.0)), want)
    _close(yax.jit(lambda v: lax.fori_loop(2, 7, body, v))(np.float32(1.0)), want)
    _close(lax.fori_loop(np.int32(2), 7, body, np.float32(1.0)), want)
    _close(lax.fori_loop(5, 2, body, np.float32(1.0)), 1.0)  # empty range: init unchanged


def test_fori_loop_traced_bounds_use_while_loop():
    pytest.importorskip("yax.lax.while_loop")

    def f(n):
        return lax.fori_loop(0, n, lambda i, v: v + i.astype(jnp.float32), np.float32(0))
    _close(yax.jit(f)(np.int32(5)), 10.0)


def test_nested_scan():
    xs = _f32(4, 3, 2)

    def outer(c, row):
        inner_c, ys = lax.scan(lambda a, x: (a * jnp.cos(x) + x, a), c, row)
        return inner_c, jnp.sum(ys)

    def jouter(c, row):
        inner_c, ys = jax.lax.scan(lambda a, x: (a * jjnp.cos(x) + x, a), c, row)
        return inner_c, jjnp.sum(ys)
    c0 = _f32(2)
    _close(lax.scan(outer, c0, xs), jax.lax.scan(jouter, c0, xs))
    g = yax.grad(lambda c, xs: jnp.sum(lax.scan(outer, c, xs)[1]), argnums=(0, 1))(c0, xs)
    jg = jax.grad(lambda c, xs: jjnp.sum(jax.lax.scan(jouter, c, xs)[1]), argnums=(0, 1))(c0, xs)
    _close(g, jg, 1e-4)


# --- differentiation ----------------------------------------------------------------------

def _loss(w, c, xs):
    carry, ys = lax.scan(_cell(w), c, xs)
    return jnp.sum(carry) + jnp.sum(ys)


def test_jvp_matches_jax():
    w, c0, xs = _f32(3, 3), _f32(3), _f32(4, 3)
    tw, tc, tx = _f32(3, 3), _f32(3), _f32(4, 3)

    def jloss(w, c, xs):
        def jf(c, x):
            h = jjnp.tanh(w @ c + x)
            return h, jjnp.sum(h * h)
        carry, ys = jax.lax.scan(jf, c, xs)
        return jjnp.sum(carry) + jjnp.sum(ys)
    got = yax.jvp(_loss, (w, c0, xs), (tw, tc, tx))
    want = jax.jvp(jloss, (w, c0, xs), (tw, tc, tx))
    _close(got, want, 1e-4)
    # only xs perturbed: the carry tangent becomes nonzero after one iteration (fixpoint)
    got = yax.jvp(lambda xs: _loss(w, c0, xs), (xs,), (tx,))
    _close(got, jax.jvp(lambda xs: jloss(w, c0, xs), (xs,), (tx,)), 1e-4)


@pytest.mark.parametrize("reverse", [False, True])
def test_check_grads_order2(x64, reverse):
    rng = np.random.default_rng(1)
    w, c0, xs = rng.normal(size=(2, 2)) * 0.5, rng.normal(size=2), rng.normal(size=(3, 2))

    def f(w, c, xs):
        carry, ys = lax.scan(_cell(w), c, xs, reverse=reverse)
        return carry, ys
    check_grads(f, (w, c0, xs), order=2, modes=("fwd", "rev"))


def test_check_grads_fori_loop(x64):
    def f(v, a):
        return lax.fori_loop(0, 4, lambda i, v: jnp.sin(v * a) + i, v)
    check_grads(f, (np.array([0.3, -0.2]), np.array(1.1)), order=2, modes=("fwd", "rev"))


def test_grad_equals_unrolled_loop():
    w, c0, xs = _f32(3, 3), _f32(3), _f32(5, 3)

    def unrolled(w, c, xs):
        f, total = _cell(w), 0.0
        for i in range(xs.shape[0]):
            c, y = f(c, xs[i])
            total = total + y
        return jnp.sum(c) + total
    got = yax.grad(_loss, argnums=(0, 1, 2))(w, c0, xs)
    want = yax.grad(unrolled, argnums=(0, 1, 2))(w, c0, xs)
    _close(got, want, 1e-5)
    _close(yax.jit(yax.grad(_loss, argnums=(0, 1, 2)))(w, c0, xs), want, 1e-5)


def test_grad_jaxpr_has_forward_and_one_reverse_scan():
    w, c0, xs = _f32(3, 3), _f32(3), _f32(50, 3)
    jaxpr = yax.make_jaxpr(yax.grad(_loss, argnums=(0, 1, 2)))(w, c0, xs)
    scans = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 2, jaxpr
    assert [e.params["reverse"] for e in scans] == [False, True]
    assert len(jaxpr.jaxpr.eqns) < 30  # not an unrolled loop


# --- batching -----------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["xs", "init", "consts", "all"])
def test_vmap(which):
    w, c0, xs = _f32(3, 3), _f32(3), _f32(4, 3)
    ws, cs, xss = _f32(2, 3, 3), _f32(2, 3), _f32(4, 2, 3)  # xs batched along axis 1
    axes = {"xs": (None, None, 1), "init": (None, 0, None), "consts": (0, None, None),
            "all": (0, 0, 1)}[which]
    args = [ws if axes[0] is not None else w, cs if axes[1] is not None else c0,
            xss if axes[2] is not None else xs]

    def f(w, c, xs):
        return lax.scan(_cell(w), c, xs)
    got = yax.vmap(f, in_axes=axes)(*args)
    per = [f(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, axes)])
           for b in range(2)]
    want = jax.tree_util.tree_map(lambda *v: np.stack([np.asarray(x) for x in v]), *per)
    _close(got, want)


def test_vmap_of_grad_and_reverse():
    w, cs, xs = _f32(3, 3), _f32(2, 3), _f32(4, 3)
    g = yax.vmap(yax.grad(_loss, argnums=1), in_axes=(None, 0, None))(w, cs, xs)
    want = np.stack([np.asarray(yax.grad(_loss, argnums=1)(w, c, xs)) for c in cs])
    _close(g, want, 1e-5)
    f = lambda c: lax.scan(_cell(w), c, xs, reverse=True)  # noqa: E731
    _close(yax.vmap(f)(cs), jax.tree_util.tree_map(
        lambda *v: np.stack([np.asarray(x) for x in v]), *[f(c) for c in cs]))


# --- errors and caching -------------------------------------------------------------------

def test_errors_name_the_problem():
    xs = _f32(3, 2)
    with pytest.raises(ScanCarryError, match="structure"):
        lax.scan(lambda c, x: ((c, c), x), np.float32(0), xs)
    with pytest.raises(ScanCarryError, match=r"f32\[2\].*f32\[\]"):
        lax.scan(lambda c, x: (x, x), np.float32(0), xs)
    with pytest.raises(ScanCarryError, match="pair"):
        lax.scan(lambda c, x: c, np.float32(0), xs)
    with pytest.raises(ScanLengthError, match=r"xs\[0\]: 3, xs\[1\]: 4"):
        lax.scan(lambda c, x: (c, x), np.float32(0), (xs, _f32(4)))
    with pytest.raises(ScanLengthError, match="length=5"):
        lax.scan(lambda c, x: (c, x), np.float32(0), xs, length=5)
    with pytest.raises(ScanLengthError, match="length="):
        lax.scan(lambda c, x: (c, x), np.float32(0), None)
    with pytest.raises(LoopBoundsError, match="integer"):
        lax.fori_loop(0.0, 3, lambda i, v: v, np.float32(0))
    with pytest.raises(yax.errors.YaxError, match="test_scan.py"):
        lax.scan(lambda c, x: (x, x), np.float32(0), xs)


def test_eager_loops_do_not_retrace():
    calls = []

    def f(c, x):
        calls.append(1)
        return c + x, c
    xs = _f32(3)
    for _ in range(3):
        lax.scan(f, np.float32(0), xs)
    assert len(calls) == 1
    lax.scan(f, np.float32(0), _f32(3, 2)[:, 0])
    assert len(calls) == 1  # same types: same traced body
    lax.scan(f, np.zeros(2, np.float32), _f32(3, 2))
    assert len(calls) == 2
