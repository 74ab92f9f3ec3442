"""`yax.lax.scan(..., checkpoint="sqrt" | k)`: the loop as checkpointed segments.

Values and derivatives must be the plain scan's (jax.lax.scan and jax.grad are the oracle);
the residuals between the passes must shrink from O(n) steps to O(sqrt n) carries.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import yax
import yax.numpy as ynp
from yax.errors import InvalidArgumentError

RNG = np.random.default_rng(0)
W = (RNG.normal(size=(6, 6)) / 3).astype(np.float32)
H0 = RNG.normal(size=(6,)).astype(np.float32)


def _loss(np_mod, scan, n, **kw):
    xs = np.linspace(-1, 1, n * 6, dtype=np.float32).reshape(n, 6)

    def loss(W, h0):
        def body(h, x):
            h = np_mod.tanh(np_mod.sin(h @ W) + x)
            return h, np_mod.sum(h * x)
        h, ys = scan(body, h0, xs, **kw)
        return np_mod.sum(h * h) + np_mod.sum(ys * ys)
    return loss


def _close(a, b, tol=2e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


@pytest.mark.parametrize("n,checkpoint,reverse", [
    (1, "sqrt", False), (2, "sqrt", False), (9, "sqrt", False), (10, "sqrt", False),
    (10, "sqrt", True), (17, 4, False), (17, 4, True), (5, 1, False), (7, 7, False),
])
def test_values_and_grads_match_jax(n, checkpoint, reverse):
    yl = _loss(ynp, yax.lax.scan, n, reverse=reverse, checkpoint=checkpoint)
    jl = _loss(jnp, jax.lax.scan, n, reverse=reverse)
    value, grads = yax.jit(yax.value_and_grad(yl, argnums=(0, 1)))(W, H0)
    jvalue, jgrads = jax.value_and_grad(jl, argnums=(0, 1))(W, H0)
    _close(value, jvalue)
    _close(grads, jgrads)


def test_ys_and_carry_equal_plain_scan_including_reverse():
    xs = np.arange(11 * 2, dtype=np.float32).reshape(11, 2)

    def body(c, x):
        return c * 0.5 + x, c - x   # ys depend on the order the steps run in
    for reverse in (False, True):
        want = jax.lax.scan(body, np.zeros(2, np.float32), xs, reverse=reverse)
        got = yax.lax.scan(body, np.zeros(2, np.float32), xs, reverse=reverse,
                           checkpoint="sqrt")
        _close(got, want)


def test_pytree_carry_and_xs_and_no_xs():
    xs = {"a": np.linspace(0, 1, 13 * 3, dtype=np.float32).reshape(13, 3),
          "b": np.linspace(1, 2, 13, dtype=np.float32)}

    def make(np_mod, scan, **kw):
        def loss(W3, c0):
            def body(c, x):
                u, (v,) = c
                u = np_mod.sin(u @ W3 + x["a"]) * x["b"]
                return (u, (v + np_mod.sum(u),)), u[0]
            (u, (v,)), ys = scan(body, c0, xs, **kw)
            (_, (w,)), _ = scan(lambda c, _: ((c[0], (c[1][0] * 1.01,)), None), (u, (v,)),
                                None, length=6, **kw)
            return np_mod.sum(u) + v + w + np_mod.sum(ys)
        return loss
    W3 = W[:3, :3]
    c0 = (H0[:3], (np.float32(0.5),))
    got = yax.grad(make(ynp, yax.lax.scan, checkpoint="sqrt"), argnums=(0, 1))(W3, c0)
    want = jax.grad(make(jnp, jax.lax.scan), argnums=(0, 1))(W3, c0)
    _close(got, want)


def test_vmap_and_grad_of_grad():
    yl = _loss(ynp, yax.lax.scan, 10, checkpoint="sqrt")
    jl = _loss(jnp, jax.lax.scan, 10)
    Hs = np.stack([H0, H0 * 0.5, -H0])
    _close(yax.vmap(yax.grad(yl, argnums=1), in_axes=(None, 0))(W, Hs),
           jax.vmap(jax.grad(jl, argnums=1), in_axes=(None, 0))(W, Hs))
    _close(yax.grad(lambda W, h: yax.vmap(lambda h: yl(W, h))(h).sum())(W, Hs),
           jax.grad(lambda W, h: jax.vmap(lambda h: jl(W, h))(h).sum())(W, Hs))
    # second order: the derivative of a directional derivative (Hessian-vector product)
    v = np.ones_like(H0)
    yhvp = yax.grad(lambda h: ynp.vdot(yax.grad(yl, argnums=1)(W, h), v))
    jhvp = jax.grad(lambda h: jnp.vdot(jax.grad(jl, argnums=1)(W, h), v))
    _close(yax.jit(yhvp)(H0), jhvp(H0), tol=1e-4)


def _residual_bytes(n, checkpoint, width=16):
    def loss(h0):
        def body(h, _):
            h = ynp.tanh(ynp.sin(h) * 1.5)   # two width-sized residuals per step
            return h, None
        return ynp.sum(yax.lax.scan(body, h0, None, length=n, checkpoint=checkpoint)[0])
    return yax.saved_residuals(loss, np.ones(width, np.float32),
                               compare_checkpoint=False).total_bytes


def test_residuals_shrink_to_sqrt_n_carries():
    carry = 16 * 4
    for n in (16, 100):
        plain, sqrt = _residual_bytes(n, None), _residual_bytes(n, "sqrt")
        assert plain >= 2 * n * carry             # every step stores its values
        k = -(-n // int(np.sqrt(n)))
        assert sqrt <= (k + 1) * carry            # one carry per segment (and the input)
    # and the growth is sub-linear: 100 steps store barely more than 2.5x 16 steps
    assert _residual_bytes(100, "sqrt") < 3 * _residual_bytes(16, "sqrt")


def test_segments_are_checkpointed_in_the_jaxpr():
    f = lambda h: yax.lax.scan(lambda c, x: (c * x, c), h, np.ones(10, np.float32),
                               checkpoint="sqrt")
    text = str(yax.make_jaxpr(f)(np.float32(1)))
    assert text.count("remat") >= 2 and "length=4" in text and "length=2" in text


@pytest.mark.parametrize("bad", ["cbrt", 0, -2, 1.5, True])
def test_bad_checkpoint_argument_is_a_clear_error(bad):
    with pytest.raises(InvalidArgumentError, match="checkpoint="):
        yax.lax.scan(lambda c, x: (c + x, c), np.float32(0), np.ones(4, np.float32),
                     checkpoint=bad)
