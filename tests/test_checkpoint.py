"""checkpoint/remat with policies, checkpoint_name, and saved_residuals."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import checkpoint_policies as cp
from yax.test_util import check_grads

RNG = np.random.default_rng(0)
WS = [(RNG.normal(size=(6, 6)) * 0.6).astype(np.float32) for _ in range(6)]
X = RNG.normal(size=(3, 6)).astype(np.float32)


def deep(lib, np_, wrap):
    def layer(W, h):
        return np_.tanh(np_.sin(h @ W))

    def net(Ws, x):
        h = x
        for W in Ws:
            h = wrap(layer)(W, h)
        return np_.sum(h * h)
    return net


POLICIES = {"default": None, "nothing": cp.nothing_saveable, "everything": cp.everything_saveable,
            "dots": cp.dots_saveable, "dots_no_batch": cp.dots_with_no_batch_dims_saveable}


@pytest.mark.parametrize("policy", list(POLICIES))
def test_grad_with_checkpoint_equals_grad_without(policy):
    plain = deep(yax, jnp, lambda f: f)
    ck = deep(yax, jnp, lambda f: yax.checkpoint(f, policy=POLICIES[policy]))
    want = yax.grad(plain)(WS, X)
    for got in (yax.grad(ck)(WS, X), yax.jit(yax.grad(ck))(WS, X)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
    oracle = jax.grad(deep(jax, jjnp, jax.checkpoint))(WS, X)
    for g, w in zip(yax.grad(ck)(WS, X), oracle, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def test_checkpoint_passes_check_grads_and_composes(x64):
    f = yax.checkpoint(lambda W, h: jnp.sum(jnp.tanh(jnp.sin(h @ W)) ** 2))
    W, h = WS[0].astype(np.float64), X.astype(np.float64)
    check_grads(f, (W, h), order=2, modes=("fwd", "rev"))
    check_grads(yax.vmap(f, in_axes=(None, 0)), (W, h), order=1, modes=("fwd", "rev"))
    hvp = yax.jvp(yax.grad(f), (W, h), (np.ones_like(W), np.zeros_like(h)))[1]
    plain = lambda W, h: jnp.sum(jnp.tanh(jnp.sin(h @ W)) ** 2)
    np.testing.assert_allclose(
        hvp, yax.jvp(yax.grad(plain), (W, h), (np.ones_like(W), np.zeros_like(h)))[1],
        rtol=1e-10)


def test_checkpoint_inside_scan_and_around_scan_and_cond():
    W = WS[0]
    xs = RNG.normal(size=(5, 6)).astype(np.float32)

    def make(lib, np_, wrap):
        def body(c, x):
            return np_.tanh(np_.sin(c @ W) + x), np_.sum(c)

        def f(c0, xs):
            c, ys = lib.lax.scan(wrap(body), c0, xs)
            c = lib.lax.cond(np_.sum(c) > 0, lambda c: c * 2.0, np_.sin, c)
            return np_.sum(c) + np_.sum(ys)
        return f
    c0 = X[0]
    want = jax.grad(make(jax, jjnp, lambda f: f))(c0, xs)
    inside = make(yax, jnp, yax.checkpoint)
    around = yax.checkpoint(make(yax, jnp, lambda f: f))
    for f in (inside, around):
        np.testing.assert_allclose(yax.grad(f)(c0, xs), want, rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(yax.jit(yax.grad(f))(c0, xs), want, rtol=2e-5, atol=1e-6)
    batched = yax.vmap(yax.grad(inside), in_axes=(0, None))(X, xs)
    np.testing.assert_allclose(batched[1], yax.grad(inside)(X[1], xs), rtol=2e-5, atol=1e-6)


def test_nothing_saveable_stores_only_the_segment_inputs():
    f = yax.checkpoint(deep(yax, jnp, lambda f: f), policy=cp.nothing_saveable)
    report = yax.saved_residuals(f, WS, X)
    assert len(report) == len(WS) + 1 and all(r.is_input for r in report)
    assert report.total_bytes == sum(w.nbytes for w in WS) + X.nbytes
    plain = yax.saved_residuals(deep(yax, jnp, lambda f: f), WS, X)
    assert plain.total_bytes > report.total_bytes
    assert plain.checkpointed_bytes == report.total_bytes


def test_dots_saveable_stores_inputs_and_products():
    f = yax.checkpoint(deep(yax, jnp, lambda f: f), policy=cp.dots_saveable)
    report = yax.saved_residuals(f, WS, X)
    made = [r.primitive for r in report if not r.is_input]
    assert made == ["dot_general"] * len(WS)


def test_save_only_these_names():
    def layer(W, h):
        z = yax.checkpoint_name(h @ W, "pre")
        return jnp.tanh(yax.checkpoint_name(jnp.sin(z), "act"))
    f = yax.checkpoint(lambda W, h: jnp.sum(layer(W, h)), policy=cp.save_only_these_names("act"))
    report = yax.saved_residuals(f, WS[0], X)
    assert [r.primitive for r in report if not r.is_input] == ["name"]
    g = yax.checkpoint(lambda W, h: jnp.sum(layer(W, h)),
                       policy=cp.save_any_names_but_these("act"))
    assert [r.primitive for r in yax.saved_residuals(g, WS[0], X) if not r.is_input] == ["name"]
    want = yax.grad(lambda W, h: jnp.sum(layer(W, h)))(WS[0], X)
    np.testing.assert_allclose(yax.grad(f)(WS[0], X), want, rtol=1e-5)  # float32 rounding


def test_prevent_cse_puts_a_barrier_in_the_backward_program():
    f = yax.checkpoint(lambda W, h: jnp.sum(jnp.tanh(jnp.sin(h @ W))))
    text = yax.jit(yax.grad(f)).lower(WS[0], X).as_text()
    assert "optimization_barrier" in text
    g = yax.checkpoint(lambda W, h: jnp.sum(jnp.tanh(jnp.sin(h @ W))), prevent_cse=False)
    assert "optimization_barrier" not in yax.jit(yax.grad(g)).lower(WS[0], X).as_text()


def test_static_argnums_and_no_transformation():
    calls = []

    def f(x, n):
        calls.append(n)
        return x ** n
    ck = yax.checkpoint(f, static_argnums=(1,))
    assert float(ck(2.0, 3)) == 8.0
    assert float(yax.grad(ck)(2.0, 3)) == 12.0
    assert float(yax.jit(ck, static_argnums=1)(2.0, 3)) == 8.0


def test_unhashable_static_argument_is_accepted_as_in_jax():
    """equinox's filter_checkpoint passes a dict-holding tree as its static argument; jax
    accepts it (and traces again each call), so yax must too."""
    def f(opts, x):
        return jnp.sin(x) * opts["scale"]

    def f_jax(opts, x):
        return jjnp.sin(x) * opts["scale"]
    opts = {"scale": 3.0}
    got = yax.grad(lambda x: yax.checkpoint(f, static_argnums=(0,))(opts, x))(0.5)
    want = jax.grad(lambda x: jax.checkpoint(f_jax, static_argnums=(0,))(opts, x))(0.5)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)


def mlp(params, x, y):
    (W1, b1), (W2, b2), (W3, b3) = params
    h1 = jnp.tanh(x @ W1 + b1)
    h2 = jnp.tanh(h1 @ W2 + b2)
    out = h2 @ W3 + b3
    return jnp.mean((out - y) ** 2)


def test_saved_residuals_of_a_three_layer_mlp():
    sizes = [5, 7, 6, 3]
    params = [(RNG.normal(size=(a, b)).astype(np.float32), np.zeros(b, np.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x, y = RNG.normal(size=(4, 5)).astype(np.float32), RNG.normal(size=(4, 3)).astype(np.float32)
    report = yax.saved_residuals(mlp, params, x, y)
    first = inspect.getsourcelines(mlp)[1]
    line = {"h1": first + 2, "h2": first + 3, "loss": first + 5}

    def where(r):
        return r.source if r.is_input else (int(r.source.split(":")[1].split()[0]), r.primitive)
    got = [(where(r), r.shape) for r in report]
    assert got == [
        ("argument [0][0][0]", (5, 7)),          # W1: d h1_pre / d x is not needed, d/dW1 is x
        ("argument [1]", (4, 5)),                # x, for dL/dW1
        ((line["h1"], "tanh"), (4, 7)),          # h1: for dL/dW2 and tanh's (t + t h1)
        ((line["h1"], "sub"), (4, 7)),           # 1 - h1 (tanh's derivative, as JAX's)
        ("argument [0][1][0]", (7, 6)),          # W2, to backpropagate into h1
        ((line["h2"], "tanh"), (4, 6)),          # h2, likewise for layer 2
        ((line["h2"], "sub"), (4, 6)),           # 1 - h2
        ("argument [0][2][0]", (6, 3)),          # W3
        ((line["loss"], "mul"), (4, 3)),         # 2 (out - y) / n
    ]
    assert all(r.source.endswith("(mlp)") for r in report if not r.is_input)
    assert report.total_bytes == sum(int(np.prod(s)) * 4 for _, s in got)
    text = str(report)
    assert "9 residuals" in text and f"test_checkpoint.py:{line['h1']} (mlp)" in text
    ranked = [s for s, _, _ in report.by_line()]
    assert ranked[0].endswith(f":{line['h1']} (mlp)")  # 224 bytes: the largest line


def test_docs_page_runs(capsys):
    from tests.test_custom_derivatives import _run_doc
    _run_doc("checkpoint.md", 4)
    assert "residuals" in capsys.readouterr().out
