"""jax.nn's further activations and dot_product_attention: values against jax.nn, derivatives by
check_grads, jit against eager, vmap against a loop."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import nn
from yax.test_util import check_grads

X = np.array([-3.5, -1.0, -0.4, 0.3, 0.9, 1.7, 6.0], np.float32)
POS = np.array([0.05, 0.3, 0.69, 0.7, 2.0, 30.0], np.float32)
ACTIVATIONS = ["celu", "selu", "mish", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
               "soft_sign", "squareplus", "sparse_plus", "sparse_sigmoid", "tanh", "identity"]


def _all(lib, x, pos, g):
    out = {name: getattr(lib.nn, name)(x) for name in ACTIVATIONS}
    out["celu_alpha"] = lib.nn.celu(x, alpha=0.5)
    out["squareplus_b"] = lib.nn.squareplus(x, b=1.0)
    out["log1mexp"] = lib.nn.log1mexp(pos)
    out["glu"] = lib.nn.glu(g)
    out["glu0"] = lib.nn.glu(g, axis=0)
    out["logmeanexp"] = lib.nn.logmeanexp(g, axis=1)
    out["logmeanexp_all"] = lib.nn.logmeanexp(g)
    return out


def test_values_match_jax_eager_and_jit():
    g = np.arange(24, dtype=np.float32).reshape(4, 6) / 10 - 1
    theirs = _all(jax, X, POS, g)
    for ours in (_all(yax, X, POS, g), yax.jit(lambda *a: _all(yax, *a))(X, POS, g)):
        for name, value in theirs.items():
            np.testing.assert_allclose(ours[name], value, rtol=2e-6, atol=1e-7, err_msg=name)
    assert set(ACTIVATIONS) <= set(nn.__all__)


@pytest.mark.parametrize("name", ["celu", "selu", "mish", "soft_sign", "squareplus",
                                  "log1mexp", "glu"])
def test_grads(x64, name):
    x = POS[1:5].astype(np.float64) if name == "log1mexp" else X[1:].astype(np.float64)
    check_grads(getattr(nn, name), (x,), order=2, modes=["fwd", "rev"])


def test_piecewise_grads_match_jax():
    for name in ("hard_sigmoid", "hard_tanh", "sparse_plus", "sparse_sigmoid", "hard_silu"):
        ours = yax.vmap(yax.grad(getattr(nn, name)))(X)
        theirs = jax.vmap(jax.grad(getattr(jax.nn, name)))(X)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=name)
    assert np.isfinite(np.asarray(yax.grad(lambda x: nn.log1mexp(x))(np.float32(20.0))))


def _qkv(seed=0, b=2, t=4, s=5, n=4, k=2, h=8, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in
            ((b, t, n, h), (b, s, k, h), (b, s, k, h))]


ATTENTION_CASES = {
    "plain": {},
    "bias": {"bias": np.random.default_rng(1).normal(size=(1, 4, 4, 5)).astype(np.float32)},
    "mask": {"mask": np.random.default_rng(2).random((2, 1, 4, 5)) > 0.3},
    "causal_scale": {"is_causal": True, "scale": 0.3},
    "lengths": {"query_seq_lengths": np.array([3, 4], np.int32),
                "key_value_seq_lengths": np.array([5, 2], np.int32)},
    "window": {"local_window_size": (1, 0)},
}


def test_attention_values_match_jax():
    q, k, v = _qkv()
    for name, kw in ATTENTION_CASES.items():
        np.testing.assert_allclose(nn.dot_product_attention(q, k, v, **kw),
                                   jax.nn.dot_product_attention(q, k, v, **kw),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    # Unbatched (T, N, H) inputs, and multi-head (K = N) attention.
    q3, k3, v3 = _qkv(3, k=4)
    np.testing.assert_allclose(nn.dot_product_attention(q3[0], k3[0], v3[0]),
                               jax.nn.dot_product_attention(q3[0], k3[0], v3[0]), rtol=1e-5,
                               atol=1e-6)
    qb, kb, vb = (x.astype(jjnp.bfloat16) for x in (q, k, v))
    ours = nn.dot_product_attention(qb, kb, vb, is_causal=True)
    assert ours.dtype == jjnp.bfloat16
    np.testing.assert_allclose(np.asarray(ours, np.float32), np.asarray(
        jax.nn.dot_product_attention(qb, kb, vb, is_causal=True), np.float32), atol=1e-2)


def test_attention_grads_jit_vmap():
    q, k, v = _qkv()
    bias = ATTENTION_CASES["bias"]["bias"]

    def loss(lib, q, k, v):
        return lib.numpy.sum(lib.nn.dot_product_attention(q, k, v, bias=bias, is_causal=True)
                             ** 2)

    ours = yax.jit(yax.grad(lambda *a: loss(yax, *a), (0, 1, 2)))(q, k, v)
    theirs = jax.grad(lambda *a: loss(jax, *a), (0, 1, 2))(q, k, v)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    batched = yax.vmap(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True))(
        q, k, v)
    loop = np.stack([nn.dot_product_attention(q[i], k[i], v[i], is_causal=True)
                     for i in range(2)])
    np.testing.assert_allclose(batched, loop, rtol=1e-6, atol=1e-7)


def test_attention_check_grads(x64):
    q, k, v = (x[:1, :3, :2, :4].astype(np.float64) for x in _qkv(k=2))
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True), (q, k, v),
                order=1, modes=["rev"])


def test_attention_errors():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(ValueError, match="mask"):
        nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 4, 5), np.float32))
    with pytest.raises(NotImplementedError):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    _ = jnp  # yax.numpy is imported for the examples in the docstrings
