"""`jax.experimental.rnn` (alias mode serves this module under that name): a multi-layer,
optionally bidirectional LSTM over batch-first padded sequences, with cuDNN's flat weight
layout.

The weights are one flat vector: for each pseudo-layer (layer x direction, forward first) its
input and hidden matrices (each 4 gates i|f|g|o stacked, `[4h, in]` and `[4h, h]`), then for
each pseudo-layer its two bias vectors (`[4h]`). jax runs this layout through cuDNN (GPU only);
yax computes the same recurrence with `lax.scan` on any device, so it is differentiable
(reverse and forward mode) and batches under vmap. Sequences shorter than the longest are
padded at the end: their outputs there are zero and their final state is the state at their
last element; the backward direction reads each sequence reversed in place.
"""

from __future__ import annotations

import math

import numpy as np

import yax.numpy as jnp
from yax import lax, random
from yax.nn import sigmoid

__all__ = ["get_num_params_in_lstm", "init_lstm_weight", "lstm", "unpack_lstm_weights"]


def _shapes(input_size: int, hidden_size: int, num_layers: int, bidirectional: bool):
    dirs = 2 if bidirectional else 1
    matrices, biases = [], []
    for p in range(num_layers * dirs):
        fan_in = input_size if p < dirs else dirs * hidden_size  # layer 0 reads the input
        matrices += [(4 * hidden_size, fan_in), (4 * hidden_size, hidden_size)]
        biases += [(4 * hidden_size,), (4 * hidden_size,)]
    return matrices + biases


def get_num_params_in_lstm(input_size: int, hidden_size: int, num_layers: int,
                           bidirectional: bool) -> int:
    """The length of the flat weight vector of such an LSTM."""
    return sum(math.prod(s) for s in _shapes(input_size, hidden_size, num_layers,
                                             bidirectional))


def init_lstm_weight(rng, input_size: int, hidden_size: int, num_layers: int,
                     bidirectional: bool):
    """Random flat weights, uniform in [-k, k] with k = 1/sqrt(hidden_size) (as jax)."""
    k = float(np.sqrt(1.0 / hidden_size))
    n = get_num_params_in_lstm(input_size, hidden_size, num_layers, bidirectional)
    return random.uniform(rng, (n,), jnp.float32, minval=-k, maxval=k)


def unpack_lstm_weights(weights, input_size: int, hidden_size: int, num_layers: int,
                        bidirectional: bool):
    """`(W_ih, W_hh, b_ih, b_hh)`: dicts from pseudo-layer index to its gate-stacked matrix
    or bias, cut out of the flat `weights`."""
    shapes = _shapes(input_size, hidden_size, num_layers, bidirectional)
    pieces, offset = [], 0
    for shape in shapes:
        size = math.prod(shape)
        pieces.append(jnp.reshape(weights[offset:offset + size], shape))
        offset += size
    n = len(shapes) // 4  # pseudo-layers
    mats, bias = pieces[:2 * n], pieces[2 * n:]
    return ({p: mats[2 * p] for p in range(n)}, {p: mats[2 * p + 1] for p in range(n)},
            {p: bias[2 * p] for p in range(n)}, {p: bias[2 * p + 1] for p in range(n)})


def _run_layer(xs, h0, c0, w_ih, w_hh, b_ih, b_hh, lengths, precision):
    """One direction of one layer over time-major `xs` [T, B, in]: (outputs, h_n, c_n)."""
    steps = jnp.arange(xs.shape[0], dtype=jnp.int32)

    def cell(carry, inputs):
        h, c = carry
        x, t = inputs
        z = (jnp.matmul(x, w_ih.T, precision=precision) + b_ih
             + jnp.matmul(h, w_hh.T, precision=precision) + b_hh)
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c_new = sigmoid(f) * c + sigmoid(i) * jnp.tanh(g)
        h_new = sigmoid(o) * jnp.tanh(c_new)
        live = (t < lengths)[:, None]  # past a sequence's end: keep its state, output zero
        return ((jnp.where(live, h_new, h), jnp.where(live, c_new, c)),
                jnp.where(live, h_new, 0))

    (h_n, c_n), ys = lax.scan(cell, (h0, c0), (xs, steps))
    return ys, h_n, c_n


def _reverse_in_place(xs, lengths):
    """Each sequence (time-major) reversed within its length, the padding left at the end."""
    t = jnp.arange(xs.shape[0], dtype=jnp.int32)[:, None]
    src = jnp.where(t < lengths[None], lengths[None] - 1 - t, t)  # [T, B]
    return jnp.take_along_axis(xs, src[..., None], axis=0)


def lstm(x, h_0, c_0, weights, seq_lengths, input_size: int, hidden_size: int,
         num_layers: int, dropout: float, bidirectional: bool, precision=None):
    """Run the LSTM over batch-first `x` [B, T, input_size] from states `h_0`, `c_0`
    [layers*dirs, B, hidden]; returns `(y, h_n, c_n)`, y [B, T, dirs*hidden]."""
    if dropout != 0.0:
        raise NotImplementedError("lstm: dropout between layers is not supported by yax")
    lengths = jnp.asarray(seq_lengths).astype(jnp.int32)
    w_ih, w_hh, b_ih, b_hh = unpack_lstm_weights(weights, input_size, hidden_size, num_layers,
                                                 bidirectional)
    dirs = 2 if bidirectional else 1
    xs = jnp.swapaxes(jnp.asarray(x), 0, 1)  # time-major for the scan
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            p = layer * dirs + d
            inputs = xs if d == 0 else _reverse_in_place(xs, lengths)
            ys, h_n, c_n = _run_layer(inputs, h_0[p], c_0[p], w_ih[p], w_hh[p], b_ih[p],
                                      b_hh[p], lengths, precision)
            outs.append(ys if d == 0 else _reverse_in_place(ys, lengths))
            hs.append(h_n)
            cs.append(c_n)
        xs = outs[0] if dirs == 1 else jnp.concatenate(outs, axis=-1)
    return jnp.swapaxes(xs, 0, 1), jnp.stack(hs), jnp.stack(cs)
