"""The digits classifier of mlp_digits.py as a flax.linen model trained by optax, on yax.

flax and optax are used unchanged: `yax.alias_jax()` runs before they are imported, so their
`import jax` resolves to yax (alias mode, docs/ecosystem.md). The same MLP (64-128-64-10, ReLU),
data split, batch size and epochs as mlp_digits.py; optax's Adam with a little weight decay,
one jitted `lax.scan` per epoch. Prints the loss per 5 epochs and the test accuracy (about
0.97-0.98, as mlp_digits.py).

Needs the `ecosystem` extra (`pip install -e '.[ecosystem]'`). Run with
`python examples/flax_digits.py [epochs]` (or `python -m yax examples/flax_digits.py`).
"""

from __future__ import annotations

import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))
sys.path.insert(0, _HERE)

import yax  # noqa: E402

yax.alias_jax()  # from here on `import jax` is yax, for this file and for flax and optax

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from mlp_digits import load_data, shuffled_batches  # noqa: E402


class MLP(nn.Module):
    """A ReLU MLP giving logits."""
    hidden: tuple[int, ...] = (128, 64)
    classes: int = 10

    @nn.compact
    def __call__(self, x):
        for width in self.hidden:
            x = nn.relu(nn.Dense(width)(x))
        return nn.Dense(self.classes)(x)


MODEL = MLP()
OPTIMIZER = optax.adamw(2e-3, weight_decay=1e-4)


def loss_fn(params, x, y):
    logits = MODEL.apply(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def train_epoch(params, opt_state, xb, yb):
    """Scan over minibatches xb[i], yb[i]; returns new params, state and the mean loss."""
    def step(carry, batch):
        params, opt_state = carry
        loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
        updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss
    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), (xb, yb))
    return params, opt_state, jnp.mean(losses)


@jax.jit
def accuracy(params, x, y):
    return jnp.mean((jnp.argmax(MODEL.apply(params, x), axis=1) == y).astype(jnp.float32))


def main(epochs: int = 30, batch_size: int = 64, seed: int = 0, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    x_train, y_train, x_test, y_test = load_data(seed)
    params = MODEL.init(jax.random.PRNGKey(seed), jnp.zeros((1, 64)))
    opt_state = OPTIMIZER.init(params)
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
              f"{time.perf_counter() - start:.1f} s (jax is {jax.__name__} from "
              f"{type(jnp.ones(1)).__module__}, flax {nn.__name__})")
        print(f"test accuracy: {acc:.4f} on {len(x_test)} held-out digits")
    return acc


if __name__ == "__main__":
    main(epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 30)
