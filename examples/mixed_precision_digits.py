"""Mixed-precision training of the digits MLP: float32 master weights, bfloat16 compute,
dynamic loss scaling; compared with the same training in float32.

Each step casts the float32 parameters and inputs to bfloat16 (`Policy.cast_to_compute`),
runs the forward and backward passes in bfloat16, casts the logits back to float32 for the
softmax cross-entropy, multiplies the loss by the loss scale before differentiating and divides
the (float32) gradients by it after. A step whose gradients are not all finite is skipped and
the scale halved; after `period` finite steps the scale doubles. All of it (the scale is a
pytree in the carry) runs in one jitted `lax.scan` per epoch. Prints both test accuracies, which
agree within about 1%.

Run with `python examples/mixed_precision_digits.py [epochs]`.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))
sys.path.insert(0, _HERE)

import numpy as np  # noqa: E402
from mlp_digits import init_params, load_data  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402
from yax import lax, nn  # noqa: E402
from yax.example_libraries import optimizers  # noqa: E402
from yax.mixed_precision import DynamicLossScale, Policy, all_finite, select_tree  # noqa: E402

opt_init, opt_update, get_params = optimizers.adam(2e-3)


def predict(params, x):
    for layer in params[:-1]:
        x = nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def make_train_epoch(policy: Policy):
    """A jitted epoch (scan over minibatches) training under `policy` with loss scaling."""
    def loss_fn(params, x, y, loss_scale):
        logits = predict(policy.cast_to_compute(params), policy.cast_to_compute(x))
        logp = nn.log_softmax(policy.cast_to_output(logits))
        loss = -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
        return loss_scale.scale(loss), loss

    def step(carry, batch):
        i, opt_state, loss_scale = carry
        params = get_params(opt_state)
        grads, loss = yax.grad(loss_fn, has_aux=True)(params, *batch, loss_scale)
        grads = loss_scale.unscale(grads)
        finite = all_finite(grads)
        # On overflow keep the old state (the step is skipped) and let adjust() halve the scale.
        opt_state = select_tree(finite, opt_update(i, grads, opt_state), opt_state)
        return (i + finite.astype(i.dtype), opt_state, loss_scale.adjust(finite)), loss

    @yax.jit
    def train_epoch(i, opt_state, loss_scale, xb, yb):
        (i, opt_state, loss_scale), losses = lax.scan(step, (i, opt_state, loss_scale),
                                                      (xb, yb))
        return i, opt_state, loss_scale, jnp.mean(losses)
    return train_epoch


@yax.jit
def accuracy(params, x, y):
    return jnp.mean((jnp.argmax(predict(params, x), axis=1) == y).astype(jnp.float32))


def train(policy: Policy, epochs: int, batch_size: int, seed: int):
    x_train, y_train, x_test, y_test = load_data(seed)
    opt_state = opt_init(policy.cast_to_param(init_params([64, 128, 64, 10], seed)))
    loss_scale = DynamicLossScale(2.0 ** 15, period=100)
    train_epoch = make_train_epoch(policy)
    rng = np.random.default_rng(seed + 1)
    n_batches = len(x_train) // batch_size
    i = jnp.asarray(0, dtype=jnp.int32)  # not weakly typed, like the count it returns
    for _ in range(epochs):
        order = rng.permutation(len(x_train))[:n_batches * batch_size]
        xb = x_train[order].reshape(n_batches, batch_size, -1)
        yb = y_train[order].reshape(n_batches, batch_size)
        i, opt_state, loss_scale, loss = train_epoch(i, opt_state, loss_scale, xb, yb)
    params = get_params(opt_state)
    acc = float(accuracy(policy.cast_to_compute(params), policy.cast_to_compute(x_test),
                         y_test))
    return acc, float(loss_scale.loss_scale), int(i)


def main(epochs: int = 12, batch_size: int = 64, seed: int = 0, verbose: bool = True) -> dict:
    """Train in float32 and in mixed precision; return both test accuracies."""
    f32_acc, _, _ = train(Policy.from_string("float32"), epochs, batch_size, seed)
    policy = Policy.from_string("params=float32,compute=bfloat16,output=float32")
    mixed_acc, final_scale, steps_taken = train(policy, epochs, batch_size, seed)
    if verbose:
        print(f"float32 test accuracy:  {f32_acc:.4f}")
        print(f"{policy} test accuracy: {mixed_acc:.4f} "
              f"(final loss scale {final_scale:g}, {steps_taken} steps applied)")
    return {"float32_accuracy": f32_acc, "mixed_accuracy": mixed_acc,
            "final_loss_scale": final_scale, "steps_applied": steps_taken}


if __name__ == "__main__":
    main(epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 12)
