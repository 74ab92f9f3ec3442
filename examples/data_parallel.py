"""Data-parallel and data+model-parallel training of the digits MLP on 8 CPU devices.

The same jitted SGD step runs three ways:
  1. on one device;
  2. data parallel: parameters replicated, each minibatch split over the 8 devices of a
     mesh axis "data" (XLA inserts the gradient all-reduce);
  3. data + model parallel on a 4x2 mesh ("data", "model"): the batch split 4 ways and the hidden
     layer's weights split 2 ways over "model" (column-split first layer, row-split second).
All three give the same parameters to float32 rounding; the script checks it and prints the
test accuracy and where a weight matrix lives.

Run with `python examples/data_parallel.py [steps]`. It asks XLA for 8 CPU devices itself
(`XLA_FLAGS=--xla_force_host_platform_device_count=8`), which must happen before yax starts.
"""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8").strip()
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402
from yax import nn  # noqa: E402
from yax.sharding import AxisType, NamedSharding, P  # noqa: E402
from yax.tree_util import tree_map  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_digits import init_params, load_data  # noqa: E402


def predict(params, x):
    w1, b1, w2, b2 = params["w1"], params["b1"], params["w2"], params["b2"]
    return nn.relu(x @ w1 + b1) @ w2 + b2


def loss_fn(params, x, y):
    logp = nn.log_softmax(predict(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def make_step(param_shardings=None, batch_sharding=None):
    """One SGD step, jitted with the given placements (None: one device)."""
    kwargs = {}
    if param_shardings is not None:
        kwargs = dict(in_shardings=(param_shardings, batch_sharding, batch_sharding),
                      out_shardings=(param_shardings, None))

    @yax.jit(**kwargs)
    def step(params, x, y):
        loss, grads = yax.value_and_grad(loss_fn)(params, x, y)
        return tree_map(lambda p, g: p - 0.5 * g, params, grads), loss
    return step


def train(step, params, batches, put=lambda p, x, y: (p, x, y)):
    params, *_ = put(params, *batches[0])
    losses = []
    for x, y in batches:
        _, x, y = put(None, x, y)
        params, loss = step(params, x, y)
        losses.append(float(loss))
    return params, losses


def main(steps: int = 60, batch_size: int = 128, verbose: bool = True) -> float:
    """Train three ways; returns the largest parameter difference from the 1-device run."""
    x_train, y_train, x_test, y_test = load_data(0)
    layers = init_params([64, 32, 10], 0)
    params = {"w1": layers[0]["w"], "b1": layers[0]["b"], "w2": layers[1]["w"],
              "b2": layers[1]["b"]}
    rng = np.random.default_rng(1)
    batches = []
    for _ in range(steps):
        idx = rng.choice(len(x_train), batch_size, replace=False)
        batches.append((x_train[idx], y_train[idx]))

    single, losses = train(make_step(), params, batches)

    data_mesh = yax.make_mesh((8,), ("data",))
    replicated = NamedSharding(data_mesh, P())
    dp_params = tree_map(lambda _: replicated, params)
    dp_batch = NamedSharding(data_mesh, P("data"))

    def put_dp(p, x, y):
        p = yax.device_put(p, dp_params) if p is not None else None
        return p, yax.device_put(x, dp_batch), yax.device_put(y, dp_batch)
    dp, dp_losses = train(make_step(dp_params, dp_batch), params, batches, put_dp)

    # Auto axes: the compiler chooses how the row-split layer's partial sums are reduced (on
    # Explicit axes, make_mesh's default, that contraction would need an out_sharding)
    mesh2 = yax.make_mesh((4, 2), ("data", "model"), (AxisType.Auto,) * 2)
    mp_params = {"w1": NamedSharding(mesh2, P(None, "model")),
                 "b1": NamedSharding(mesh2, P("model")),
                 "w2": NamedSharding(mesh2, P("model", None)),
                 "b2": NamedSharding(mesh2, P())}
    mp_batch = NamedSharding(mesh2, P("data"))

    def put_mp(p, x, y):
        p = yax.device_put(p, mp_params) if p is not None else None
        return p, yax.device_put(x, mp_batch), yax.device_put(y, mp_batch)
    mp, mp_losses = train(make_step(mp_params, mp_batch), params, batches, put_mp)

    diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
               for other in (dp, mp) for a, b in zip(yax.tree_util.tree_leaves(single),
                                                     yax.tree_util.tree_leaves(other)))
    if verbose:
        acc = float(jnp.mean(jnp.argmax(predict(single, x_test), 1) == y_test))
        print(f"{len(yax.devices())} devices; {steps} SGD steps of {batch_size} digits")
        print(f"loss  1 device {losses[-1]:.4f} | data parallel {dp_losses[-1]:.4f} | "
              f"data+model parallel {mp_losses[-1]:.4f}")
        print(f"largest parameter difference from the 1-device run: {diff:.2e}")
        print(f"test accuracy {acc:.4f}")
        print("w1 of the data+model run (64x32) lives on:")
        yax.debug.visualize_array_sharding(mp["w1"])
    return diff


if __name__ == "__main__":
    d = main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
    assert d < 1e-4, d
