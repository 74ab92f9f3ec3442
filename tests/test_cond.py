"""lax.cond / lax.switch: against Python `if`, under jit, jvp, grad, vmap, and against jax."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax
from yax.lax.cond import BranchOutputMismatchError, CondPredicateError
from yax.test_util import check_grads

rng = np.random.default_rng(0)


def _true(x, y):
    return jnp.sin(x) * y, x + y


def _false(x, y):
    return x * x - y, jnp.cos(y) * 2.0


def _py(p, x, y):
    return _true(x, y) if p else _false(x, y)


def _yax(p, x, y):
    return lax.cond(p, _true, _false, x, y)


def _f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def _close(got, want, **kw):
    for g, w in zip(yax.tree_util.tree_leaves(got), yax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6, **kw)


@pytest.mark.parametrize("p", [True, False])
def test_eager_and_jit_match_python_if(p):
    x, y = _f32(3), _f32(3)
    _close(_yax(p, x, y), _py(p, x, y))
    _close(_yax(np.bool_(p), x, y), _py(p, x, y))
    _close(yax.jit(_yax)(p, x, y), _py(p, x, y))


@pytest.mark.parametrize("p", [True, False])
def test_jvp_matches_python_if(p):
    x, y, tx, ty = _f32(4), _f32(4), _f32(4), _f32(4)
    out, t = yax.jvp(lambda x, y: _yax(p, x, y), (x, y), (tx, ty))
    out_w, t_w = yax.jvp(lambda x, y: _py(p, x, y), (x, y), (tx, ty))
    _close(out, out_w)
    _close(t, t_w)


@pytest.mark.parametrize("p", [True, False])
def test_check_grads_order2(x64, p):
    x, y = rng.normal(size=3), rng.normal(size=3)

    def f(x, y):
        a, b = _yax(jnp.sum(x) > 0 if p else jnp.sum(x) < -100, x, y)
        return a * b
    check_grads(f, (x, y), order=2, modes=("fwd", "rev"))


def test_grad_takes_the_right_branch():
    def f(x):
        return lax.cond(x > 0, lambda x: x ** 3, lambda x: jnp.sin(x), x)
    np.testing.assert_allclose(yax.grad(f)(2.0), 12.0, rtol=1e-6)
    np.testing.assert_allclose(yax.grad(f)(-1.0), np.cos(-1.0), rtol=1e-6)
    np.testing.assert_allclose(yax.grad(yax.grad(f))(2.0), 12.0, rtol=1e-6)


def test_closure_over_differentiated_value(x64):
    # branches capture `w` (a tracer of the enclosing grad) instead of taking it as an operand
    def f(w, x):
        return lax.cond(jnp.sum(x) > 0, lambda x: jnp.sum(w * x), lambda x: jnp.sum(w ** 2), x)
    w = rng.normal(size=3)
    for x in (np.ones(3), -np.ones(3)):
        np.testing.assert_allclose(yax.grad(f)(w, x), x if x[0] > 0 else 2 * w, rtol=1e-12)
    check_grads(f, (w, np.ones(3)), order=1)


@yax.jit
def _jitted(x):
    return lax.cond(x[0] > 0, lambda x: jnp.sum(jnp.exp(x)), lambda x: jnp.sum(x ** 2), x)


def test_cond_inside_jit_inside_grad(x64):
    for x in (np.array([1.0, 0.5]), np.array([-1.0, 0.5])):
        want = np.exp(x) if x[0] > 0 else 2 * x
        np.testing.assert_allclose(yax.grad(_jitted)(x), want, rtol=1e-10)
        np.testing.assert_allclose(yax.jit(yax.grad(_jitted))(x), want, rtol=1e-10)
    check_grads(_jitted, (np.array([1.0, 0.5]),), order=1)


def _inner(x):
    return lax.cond(x[1] > 0, _times3, jnp.tanh, x)


def _times3(x):
    return x * 3.0


def _sinx(x):
    return jnp.sin(x) * x


def _nested(x):
    return jnp.sum(lax.cond(x[0] > 0, _inner, _sinx, x))


def test_nested_cond(x64):
    def py(x):
        if x[0] > 0:
            return np.sum(x * 3.0 if x[1] > 0 else np.tanh(x))
        return np.sum(np.sin(x) * x)
    for signs in ([1, 1], [1, -1], [-1, 1]):
        x = np.abs(rng.normal(size=2)) * np.array(signs)
        np.testing.assert_allclose(_nested(x), py(x), rtol=1e-10)
        np.testing.assert_allclose(yax.jit(_nested)(x), py(x), rtol=1e-10)
    check_grads(_nested, (np.array([0.7, -0.4]),), order=2)


def test_vmap_batched_predicate_and_operands():
    ps = np.array([True, False, True, False])
    xs, ys = _f32(4, 3), _f32(4, 3)
    got = yax.vmap(_yax)(ps, xs, ys)
    want = [np.stack(c) for c in zip(*[_py(p, x, y) for p, x, y in zip(ps, xs, ys)])]
    _close(got, want)
    # batched predicate, unbatched operand y, batch axis 1 for x
    got = yax.vmap(_yax, in_axes=(0, 1, None))(ps, xs.T, ys[0])
    want = [np.stack(c) for c in zip(*[_py(p, x, ys[0]) for p, x in zip(ps, xs)])]
    _close(got, want)


@pytest.mark.parametrize("p", [True, False])
def test_vmap_unbatched_predicate(p):
    xs, y = _f32(5, 2), _f32(2)
    got = yax.vmap(_yax, in_axes=(None, 0, None))(p, xs, y)
    want = [np.stack(c) for c in zip(*[_py(p, x, y) for x in xs])]
    _close(got, want)
    jaxpr = str(yax.make_jaxpr(yax.vmap(_yax, in_axes=(None, 0, None)))(p, xs, y))
    assert "cond[" in jaxpr and "select_n" not in jaxpr  # one cond, no select of both branches


def test_grad_of_vmap_and_vmap_of_grad():
    def f(x):
        return lax.cond(x > 0, lambda x: x ** 2, lambda x: jnp.exp(x), x)
    xs = np.array([-1.0, 0.5, 2.0], np.float32)
    want = np.where(xs > 0, 2 * xs, np.exp(xs))
    np.testing.assert_allclose(yax.vmap(yax.grad(f))(xs), want, rtol=1e-5)
    np.testing.assert_allclose(yax.grad(lambda xs: jnp.sum(yax.vmap(f)(xs)))(xs), want, rtol=1e-5)


_BRANCHES = [lambda x: x + 1.0, lambda x: jnp.sin(x) * 2.0, lambda x: x * x]


@pytest.mark.parametrize("i", [-5, -1, 0, 1, 2, 3, 100])
def test_switch_clamps_index(i):
    x = _f32(3)
    want = _BRANCHES[min(max(i, 0), 2)](x)
    _close(lax.switch(i, _BRANCHES, x), want)
    _close(yax.jit(lambda i, x: lax.switch(i, _BRANCHES, x))(np.int32(i), x), want)


def test_switch_vmap_and_grad(x64):
    idx = np.array([-2, 0, 1, 2, 9], np.int32)
    xs = rng.normal(size=(5, 3))
    got = yax.vmap(lambda i, x: lax.switch(i, _BRANCHES, x))(idx, xs)
    want = np.stack([_BRANCHES[min(max(i, 0), 2)](x) for i, x in zip(idx, xs)])
    _close(got, want)
    for i in range(3):
        check_grads(lambda x: lax.switch(i, _BRANCHES, x), (xs[0],), order=2)
    check_grads(lambda x: yax.vmap(lambda i, x: lax.switch(i, _BRANCHES, x))(idx, x), (xs,),
                order=1)


def test_pytrees_and_integer_outputs():
    def t(d):
        return {"a": d["x"] * 2.0, "n": d["n"] + 1}

    def f(d):
        return {"a": -d["x"], "n": d["n"] * 3}
    d = {"x": _f32(2), "n": np.int32(4)}
    out = lax.cond(False, t, f, d)
    _close(out["a"], -d["x"])
    assert int(out["n"]) == 12
    g = yax.grad(lambda x: jnp.sum(lax.cond(True, t, f, {"x": x, "n": np.int32(1)})["a"]))
    np.testing.assert_allclose(g(d["x"]), [2.0, 2.0])


def test_weak_types_join():
    x = np.float32(2.0)
    out = lax.cond(True, lambda x: 1.0, lambda x: x, x)  # weak f32 vs strong f32 -> strong
    assert out.dtype == np.float32 and not out.aval.weak_type
    out = lax.cond(True, lambda x: 1.0, lambda x: 2.0, x)
    assert out.aval.weak_type


def test_eager_loop_does_not_retrace():
    calls = []

    def t(x):
        calls.append(1)
        return x + 1.0

    def f(x):
        return x - 1.0
    x = _f32(3)
    for p in (True, False, True, False):
        lax.cond(p, t, f, x)
    assert len(calls) == 1


def test_predicate_errors():
    x = _f32(3)
    with pytest.raises(CondPredicateError, match=r"f32\[\].*pred > 0") as e:
        lax.cond(np.float32(1.0), lambda x: x, lambda x: x, x)
    assert "test_cond.py" in str(e.value)
    with pytest.raises(CondPredicateError, match=r"bool\[3\].*jnp.all"):
        lax.cond(x > 0, lambda x: x, lambda x: x, x)
    with pytest.raises(CondPredicateError, match=r"f32\[\]"):
        lax.switch(np.float32(1.0), _BRANCHES, x)


def test_mismatched_branch_errors():
    x = _f32(3)
    with pytest.raises(BranchOutputMismatchError, match=r"f32\[3\][\s\S]*f32\[1\]") as e:
        lax.cond(True, lambda x: x, lambda x: x[:1], x)
    assert "test_cond.py" in str(e.value)
    with pytest.raises(BranchOutputMismatchError, match=r"i32\[3\]"):
        yax.jit(lambda x: lax.cond(True, lambda x: x, lambda x: x.astype(np.int32), x))(x)
    with pytest.raises(BranchOutputMismatchError, match="branch 2"):
        lax.switch(0, [lambda x: x, lambda x: x, lambda x: (x, x)], x)


def test_against_jax():
    import jax
    x, y = _f32(3), _f32(3)

    def prog(lx, nx, p, i, x, y):
        a = lx.cond(p, lambda x, y: (nx.sin(x) * y, x), lambda x, y: (x * y, y - 1.0), x, y)
        b = lx.switch(i, [lambda z: z * 2.0, lambda z: nx.exp(z), lambda z: z - 3.0], a[0])
        return nx.sum(b * a[1])
    for p, i in ((True, -1), (False, 4)):
        want = prog(jax.lax, jax.numpy, p, i, x, y)
        np.testing.assert_allclose(prog(lax, jnp, p, i, x, y), want, rtol=1e-5)
        gw = jax.grad(lambda x: prog(jax.lax, jax.numpy, p, i, x, y))(x)
        gy = yax.grad(lambda x: prog(lax, jnp, p, i, x, y))(x)
        np.testing.assert_allclose(gy, gw, rtol=1e-5, atol=1e-6)
    ps = np.array([True, False, True])
    want = jax.vmap(lambda p, x: prog(jax.lax, jax.numpy, p, 1, x, y))(ps, np.stack([x] * 3))
    got = yax.vmap(lambda p, x: prog(lax, jnp, p, 1, x, y))(ps, np.stack([x] * 3))
    np.testing.assert_allclose(got, want, rtol=1e-5)
