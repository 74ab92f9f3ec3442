"""yax.example_libraries.optimizers and stax against jax.example_libraries: the same parameter
pytrees and initial values for the same key, the same outputs and the same optimizer steps."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.example_libraries import optimizers as jo
from jax.example_libraries import stax as js

import yax
from yax.example_libraries import optimizers as yo
from yax.example_libraries import stax as ys


def _model(st):
    return st.serial(
        st.Conv(4, (3, 3), padding="SAME"), st.BatchNorm(), st.Relu,
        st.MaxPool((2, 2), strides=(2, 2)), st.Conv(3, (2, 2), strides=(2, 1)),
        st.AvgPool((2, 2), padding="SAME"), st.SumPool((1, 2)), st.Flatten, st.FanOut(2),
        st.parallel(st.Dense(5), st.serial(st.Dense(5), st.Tanh)), st.FanInSum, st.FanOut(2),
        st.parallel(st.Gelu, st.Selu), st.FanInConcat(), st.Dropout(0.8), st.Identity,
        st.Dense(3), st.LogSoftmax)


def _leaves_equal(ours, theirs):
    assert str(yax.tree_util.tree_structure(ours)) == str(jax.tree_util.tree_structure(theirs))
    for a, b in zip(yax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_stax_params_shapes_outputs_match_jax():
    x = np.random.default_rng(0).normal(size=(2, 8, 8, 2)).astype(np.float32)
    (y_init, y_apply), (j_init, j_apply) = _model(ys), _model(js)
    for seed in (0, 1):
        y_shape, y_params = y_init(yax.random.key(seed), x.shape)
        j_shape, j_params = j_init(jax.random.key(seed), x.shape)
        assert tuple(map(int, y_shape)) == tuple(map(int, j_shape))
        _leaves_equal(y_params, j_params)
        ours = yax.jit(lambda p, x, k: y_apply(p, x, rng=k))(y_params, x, yax.random.key(3))
        np.testing.assert_allclose(ours, j_apply(j_params, x, rng=jax.random.key(3)),
                                   rtol=1e-5, atol=1e-6)


def test_stax_more_layers():
    x = np.random.default_rng(1).normal(size=(2, 6, 3)).astype(np.float32)
    layers = lambda st: st.serial(  # noqa: E731
        st.GeneralConv(("NHC", "HIO", "NHC"), 4, (2,), padding=((1, 0),)),
        st.BatchNorm(axis=(0, 1), center=False), st.Elu, st.LeakyRelu, st.Sigmoid,
        st.Softplus, st.Exp, st.shape_dependent(lambda s: st.Dense(s[-1])), st.Softmax)
    (yi, ya), (ji, ja) = layers(ys), layers(js)
    (ysh, yp), (jsh, jp) = yi(yax.random.PRNGKey(0), x.shape), ji(jax.random.PRNGKey(0), x.shape)
    assert tuple(ysh) == tuple(jsh)
    _leaves_equal(yp, jp)
    np.testing.assert_allclose(ya(yp, x), ja(jp, x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="PRNG key"):
        ys.Dropout(0.5)[1]((), x)
    assert ys.Dropout(0.5, mode="test")[1]((), x, rng=yax.random.key(0)) is x


def test_conv_transpose_or_clear_error():
    x = np.ones((1, 4, 4, 2), np.float32)
    init, apply = ys.ConvTranspose(3, (2, 2), strides=(2, 2))
    if not hasattr(yax.lax, "conv_transpose"):
        with pytest.raises(NotImplementedError, match="conv_transpose"):
            init(yax.random.key(0), x.shape)
        return
    shape, params = init(yax.random.key(0), x.shape)
    j_shape, j_params = js.ConvTranspose(3, (2, 2), strides=(2, 2))[0](jax.random.key(0),
                                                                       x.shape)
    assert tuple(shape) == tuple(j_shape)
    _leaves_equal(params, j_params)
    np.testing.assert_allclose(apply(params, x), js.ConvTranspose(3, (2, 2), strides=(2, 2))[1](
        j_params, x), rtol=1e-5, atol=1e-6)


OPTIMIZERS = [("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)),
              ("adagrad", (0.1,)), ("rmsprop", (0.1,)), ("rmsprop_momentum", (0.1,)),
              ("adam", (0.1,)), ("adamax", (0.1,)), ("sm3", (0.1,))]
SCHEDULES = [("exponential_decay", (0.1, 10, 0.5)), ("inverse_time_decay", (0.1, 2, 0.5, True)),
             ("inverse_time_decay", (0.1, 2, 0.5)), ("polynomial_decay", (0.1, 5, 0.01)),
             ("piecewise_constant", ([2, 4], [0.1, 0.05, 0.01])), ("constant", (0.1,))]


def _run(lib, name, args, jit):
    params = {"w": np.ones((3, 2), np.float32), "b": [np.zeros(2, np.float32)]}
    init, update, get = getattr(lib, name)(*args)
    update = (yax.jit if lib is yo else jax.jit)(update) if jit else update
    state = init(params)
    for i in range(4):
        grads = jax.tree_util.tree_map(lambda p: np.sin(np.asarray(p) + i).astype(np.float32),
                                       get(state))
        state = update(i, grads, state)
    return get(state)


def test_optimizers_match_jax():
    for name, args in OPTIMIZERS:
        jit = name in ("adam", "adagrad")  # jitted steps are compared with jitted steps
        _leaves_equal(_run(yo, name, args, jit=jit), _run(jo, name, args, jit=jit))
    for name, args in SCHEDULES:
        ours = _run(yo, "adam", (getattr(yo, name)(*args),), jit=False)
        _leaves_equal(ours, _run(jo, "adam", (getattr(jo, name)(*args),), jit=False))


def test_state_utilities():
    init, update, get = yo.momentum(0.1, 0.9)
    state = update(0, {"a": np.ones(3, np.float32)}, init({"a": np.zeros(3, np.float32)}))
    assert isinstance(state, yo.OptimizerState)
    packed = yo.pack_optimizer_state(yo.unpack_optimizer_state(state))
    _leaves_equal(get(packed), jo.momentum(0.1, 0.9)[2](jo.momentum(0.1, 0.9)[1](
        0, {"a": np.ones(3, np.float32)}, jo.momentum(0.1, 0.9)[0]({"a": np.zeros(3,
                                                                             np.float32)}))))
    g = {"a": np.array([3.0, 4.0], np.float32), "b": np.array([12.0], np.float32)}
    np.testing.assert_allclose(yo.l2_norm(g), 13.0)
    _leaves_equal(yo.clip_grads(g, 1.0), jo.clip_grads(g, 1.0))
    _leaves_equal(yo.clip_grads(g, 100.0), g)
    assert yo.make_schedule(0.3)(5) == 0.3
    with pytest.raises(TypeError, match="did not match"):
        update(0, {"b": np.ones(3, np.float32)}, state)
    with pytest.raises(ValueError, match="one shorter"):
        yo.piecewise_constant([1, 2], [0.1])
    opt = yo.sgd(0.1)
    assert isinstance(opt, yo.Optimizer) and opt.init_fn is opt[0]
