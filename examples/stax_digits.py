"""Train a stax model with an example_libraries optimizer on scikit-learn's 8x8 digits.

The model is `stax.serial(Dense, Relu, Dense, Relu, Dense, LogSoftmax)` initialised from a
typed key (the same parameters jax's stax would draw for that key); the optimizer is
`optimizers.adam` with an exponentially decaying step size, whose state (an `OptimizerState`
pytree) is carried through a jitted `lax.scan` over the epoch's minibatches. Prints the test
accuracy (about 97%).

Run with `python examples/stax_digits.py [epochs]`.
"""

from __future__ import annotations

import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))
sys.path.insert(0, _HERE)

import numpy as np  # noqa: E402
from mlp_digits import load_data, shuffled_batches  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402
from yax import lax  # noqa: E402
from yax.example_libraries import optimizers, stax  # noqa: E402

init_fun, predict = stax.serial(
    stax.Dense(128), stax.Relu, stax.Dense(64), stax.Relu, stax.Dense(10), stax.LogSoftmax)
opt_init, opt_update, get_params = optimizers.adam(
    optimizers.exponential_decay(3e-3, decay_steps=200, decay_rate=0.7))


def loss_fn(params, x, y):
    """Mean negative log-likelihood of the labels."""
    logp = predict(params, x)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@yax.jit
def train_epoch(step, opt_state, xb, yb):
    """One pass over the minibatches xb[i], yb[i]; returns the new step, state and mean loss."""
    def body(carry, batch):
        i, state = carry
        loss, grads = yax.value_and_grad(loss_fn)(get_params(state), *batch)
        return (i + 1, opt_update(i, grads, state)), loss
    (step, opt_state), losses = lax.scan(body, (step, opt_state), (xb, yb))
    return step, opt_state, jnp.mean(losses)


@yax.jit
def accuracy(params, x, y):
    return jnp.mean((jnp.argmax(predict(params, x), axis=1) == y).astype(jnp.float32))


def main(epochs: int = 20, batch_size: int = 64, seed: int = 0, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    x_train, y_train, x_test, y_test = load_data(seed)
    _, params = init_fun(yax.random.key(seed), (-1, x_train.shape[1]))
    opt_state = opt_init(params)
    step = jnp.asarray(0, dtype=jnp.int32)  # not weakly typed, like the step it returns
    rng = np.random.default_rng(seed + 1)
    start = time.perf_counter()
    for epoch in range(epochs):
        xb, yb = shuffled_batches(rng, x_train, y_train, batch_size)
        step, opt_state, loss = train_epoch(step, opt_state, xb, yb)
        if verbose and (epoch % 5 == 4 or epoch == epochs - 1):
            print(f"epoch {epoch + 1:3d}  train loss {float(loss):.4f}")
    acc = float(accuracy(get_params(opt_state), x_test, y_test))
    if verbose:
        print(f"trained {epochs} epochs in {time.perf_counter() - start:.1f} s")
        print(f"test accuracy: {acc:.4f} on {len(x_test)} held-out digits")
    return acc


if __name__ == "__main__":
    main(epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 20)
