"""experimental.rnn: yax's lstm against jax's reference LSTM (jax's own lstm is cuDNN only),
with jax's weight layout helpers."""

from __future__ import annotations

import jax
import jax.experimental.rnn as jrnn
import numpy as np
import pytest

import yax
from yax._jax_names import rnn as yrnn

I, H, B, T = 3, 4, 2, 5


@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, False), (2, True)])
def test_layout_and_values_match_jax(layers, bidirectional):
    assert yrnn.get_num_params_in_lstm(I, H, layers, bidirectional) == \
        jrnn.get_num_params_in_lstm(I, H, layers, bidirectional)
    w = np.asarray(yrnn.init_lstm_weight(yax.random.key(0), I, H, layers, bidirectional))
    assert w.shape == (jrnn.get_num_params_in_lstm(I, H, layers, bidirectional),)
    assert np.abs(w).max() <= 1 / np.sqrt(H)
    ours = yrnn.unpack_lstm_weights(w, I, H, layers, bidirectional)
    theirs = jrnn.unpack_lstm_weights(w, I, H, layers, bidirectional)
    for o, t in zip(ours, theirs):
        assert o.keys() == t.keys()
        for k in o:
            np.testing.assert_array_equal(o[k], t[k])
    rng = np.random.default_rng(0)
    x = rng.normal(size=(B, T, I)).astype(np.float32)
    dirs = 2 if bidirectional else 1
    h0 = rng.normal(size=(layers * dirs, B, H)).astype(np.float32)
    c0 = rng.normal(size=(layers * dirs, B, H)).astype(np.float32)
    lengths = np.array([T, 3], np.int32)  # one padded sequence
    got = yrnn.lstm(x, h0, c0, w, lengths, I, H, layers, 0.0, bidirectional)
    want = jrnn.lstm_ref(x, h0, c0, *theirs, lengths, I, H, layers, 0.0, bidirectional)
    for g, wv in zip(got, want):
        np.testing.assert_allclose(g, wv, rtol=1e-5, atol=1e-5)


def test_gradients_match_jax_reference():
    w = np.asarray(yrnn.init_lstm_weight(yax.random.key(1), I, H, 1, True))
    rng = np.random.default_rng(1)
    x = rng.normal(size=(B, T, I)).astype(np.float32)
    h0 = np.zeros((2, B, H), np.float32)
    lengths = np.array([T, 2], np.int32)

    def ours(w, x):
        return yrnn.lstm(x, h0, h0, w, lengths, I, H, 1, 0.0, True)[0].sum()

    def theirs(w, x):
        return jrnn.lstm_ref(x, h0, h0, *jrnn.unpack_lstm_weights(w, I, H, 1, True), lengths,
                             I, H, 1, 0.0, True)[0].sum()
    for g, gj in zip(yax.grad(ours, (0, 1))(w, x), jax.grad(theirs, (0, 1))(w, x)):
        np.testing.assert_allclose(g, gj, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(yax.jit(ours)(w, x), theirs(w, x), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="dropout"):
        yrnn.lstm(x, h0, h0, w, lengths, I, H, 1, 0.5, True)
