"""Train an MLP classifier on scikit-learn's bundled 8x8 digits with a hand-written Adam.

The whole epoch (shuffled minibatches) is one jitted `lax.scan`; parameters and Adam moments
are pytrees updated with `yax.tree_util.tree_map`. Prints the loss per epoch and the test
accuracy (about 97-98%).

Run with `make demo` or `python examples/mlp_digits.py [epochs]`.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402
from yax import lax, nn  # noqa: E402
from yax.tree_util import tree_map  # noqa: E402


def load_data(seed: int = 0, test_fraction: float = 0.2):
    """Digits scaled to [0, 1], split into train and test sets by a seeded shuffle."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def shuffled_batches(rng, x, y, batch_size: int):
    """One epoch of minibatches in a fresh random order, as [n_batches, batch_size, ...] arrays.

    The last partial batch is dropped, so every epoch has the same shapes (one compile)."""
    n_batches = len(x) // batch_size
    order = rng.permutation(len(x))[:n_batches * batch_size]
    return (x[order].reshape(n_batches, batch_size, -1),
            y[order].reshape(n_batches, batch_size))


def init_params(sizes, seed: int = 0):
    """A list of {"w", "b"} layers, weights scaled by 1/sqrt(fan_in)."""
    rng = np.random.default_rng(seed)
    return [{"w": jnp.asarray(rng.normal(size=(a, b)).astype(np.float32) / np.sqrt(a)),
             "b": jnp.zeros((b,))} for a, b in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    """Logits of a ReLU MLP."""
    for layer in params[:-1]:
        x = nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    """Mean softmax cross-entropy plus a little L2."""
    logp = nn.log_softmax(predict(params, x))
    nll = -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
    l2 = sum(jnp.sum(layer["w"] ** 2) for layer in params)
    return nll + 1e-4 * l2


def adam_update(params, grads, state, lr=2e-3, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step; `state` is (step, first moments, second moments), all pytrees."""
    t, mu, nu = state
    t = t + 1
    mu = tree_map(lambda m, g: b1 * m + (1 - b1) * g, mu, grads)
    nu = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, nu, grads)
    scale = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    params = tree_map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps), params, mu, nu)
    return params, (t, mu, nu)


@yax.jit
def train_epoch(params, opt_state, xb, yb):
    """Scan over minibatches xb[i], yb[i]; returns new params, state and the mean loss."""
    def step(carry, batch):
        params, opt_state = carry
        loss, grads = yax.value_and_grad(loss_fn)(params, *batch)
        params, opt_state = adam_update(params, grads, opt_state)
        return (params, opt_state), loss
    (params, opt_state), losses = lax.scan(step, (params, opt_state), (xb, yb))
    return params, opt_state, jnp.mean(losses)


@yax.jit
def accuracy(params, x, y):
    return jnp.mean((jnp.argmax(predict(params, x), axis=1) == y).astype(jnp.float32))


def main(epochs: int = 30, batch_size: int = 64, seed: int = 0, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    x_train, y_train, x_test, y_test = load_data(seed)
    params = init_params([64, 128, 64, 10], seed)
    opt_state = (jnp.asarray(0.0), tree_map(jnp.zeros_like, params),
                 tree_map(jnp.zeros_like, params))
    rng = np.random.default_rng(seed + 1)
    start = time.perf_counter()
    for epoch in range(epochs):
        xb, yb = shuffled_batches(rng, x_train, y_train, batch_size)
        params, opt_state, loss = train_epoch(params, opt_state, xb, yb)
        if verbose and (epoch % 5 == 4 or epoch == epochs - 1):
            print(f"epoch {epoch + 1:3d}  train loss {float(loss):.4f}  "
                  f"train acc {float(accuracy(params, x_train, y_train)):.4f}")
    acc = float(accuracy(params, x_test, y_test))
    if verbose:
        print(f"trained {epochs} epochs on {len(x_train)} digits in "
              f"{time.perf_counter() - start:.1f} s ({yax.default_backend()})")
        print(f"test accuracy: {acc:.4f} on {len(x_test)} held-out digits")
    return acc


if __name__ == "__main__":
    main(epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 30)
