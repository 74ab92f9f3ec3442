"""Small training programs, one per library of the JAX ecosystem, written against `jax` only.

    python tests/ecosystem_programs.py optax flax_linen        # under the real jax
    python -m yax tests/ecosystem_programs.py optax flax_linen  # the same, in yax's alias mode

Prints one JSON object: library name -> the list of training losses (or the error it raised).
tests/test_ecosystem.py runs both and compares. Each program fixes its data and initial weights,
so both runs start from the same numbers.
"""

from __future__ import annotations

import json
import sys
import traceback

import numpy as np

STEPS = 25


def _data(n=64, d=5):
    rng = np.random.RandomState(0)
    x = rng.randn(n, d).astype(np.float32)
    return x, np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)


def _train(step, model, state):
    """STEPS calls of `step(model, state) -> (model, state, loss)`: the losses, and the end."""
    losses = []
    for _ in range(STEPS):
        model, state, loss = step(model, state)
        losses.append(float(loss))
    return losses, model


def optax_mlp():
    import jax
    import jax.numpy as jnp
    import optax
    x, y = _data()
    rng = np.random.RandomState(1)
    params = {"w1": jnp.asarray(rng.randn(5, 16).astype(np.float32) * 0.3), "b1": jnp.zeros(16),
              "w2": jnp.asarray(rng.randn(16, 1).astype(np.float32) * 0.3), "b2": jnp.zeros(1)}

    def loss_fn(p):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.adamw(optax.cosine_decay_schedule(1e-2, STEPS), weight_decay=1e-4))
    state = opt.init(params)

    @jax.jit
    def step(p, s):
        loss, g = jax.value_and_grad(loss_fn)(p)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, loss
    losses, params = _train(step, params, state)
    return losses


def chex_dataclass():
    import chex
    import jax
    import jax.numpy as jnp
    import optax
    x, _ = _data(32, 3)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)

    @chex.dataclass
    class Params:
        w: chex.Array
        b: chex.Array
    params = Params(w=jnp.zeros((3, 1)), b=jnp.zeros(1))
    opt = optax.adam(5e-2)
    state = opt.init(params)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def step(p, s):
        chex.assert_shape(p.w, (3, 1))
        loss, g = jax.value_and_grad(lambda p: jnp.mean((x @ p.w + p.b - y) ** 2))(p)
        chex.assert_trees_all_equal_shapes(g, p)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, loss
    losses, params = _train(step, params, state)
    chex.assert_tree_all_finite(params)
    return losses


def equinox_mlp():
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax
    x, y = _data()
    model = eqx.nn.MLP(5, 1, 16, 2, key=jax.random.PRNGKey(0))
    opt = optax.adam(1e-2)
    state = opt.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def step(model, state):
        def loss_fn(m):
            return jnp.mean((jax.vmap(m)(x) - y) ** 2)
        loss, g = eqx.filter_value_and_grad(loss_fn)(model)
        u, state = opt.update(g, state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, u), state, loss
    losses, model = _train(step, model, state)
    return losses


def flax_linen():
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    x, y = _data()

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(1)(nn.relu(nn.Dense(16)(x)))
    model = MLP()
    params = model.init(jax.random.PRNGKey(0), x)
    opt = optax.sgd(0.1, momentum=0.9)
    state = opt.init(params)

    @jax.jit
    def step(params, state):
        loss, g = jax.value_and_grad(lambda p: jnp.mean((model.apply(p, x) - y) ** 2))(params)
        u, state = opt.update(g, state, params)
        return optax.apply_updates(params, u), state, loss
    losses, params = _train(step, params, state)
    return losses


def flax_nnx():
    import jax.numpy as jnp
    import optax
    from flax import nnx
    x, y = _data()

    class MLP(nnx.Module):  # Dropout draws from its Rngs stream inside nnx.jit every step
        def __init__(self, rngs):
            self.l1 = nnx.Linear(5, 16, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)
            self.l2 = nnx.Linear(16, 1, rngs=rngs)

        def __call__(self, x):
            return self.l2(self.drop(nnx.relu(self.l1(x))))
    model = MLP(nnx.Rngs(0, dropout=1))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer):
        loss, g = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        optimizer.update(model, g)
        return loss
    return [float(step(model, optimizer)) for _ in range(STEPS)]


PROGRAMS = {"optax": optax_mlp, "chex": chex_dataclass, "equinox": equinox_mlp,
            "flax_linen": flax_linen, "flax_nnx": flax_nnx}


def main(names):
    results = {}
    for name in names:
        try:
            results[name] = PROGRAMS[name]()
        except Exception as err:  # reported to the test, which shows it
            results[name] = {"error": "".join(traceback.format_exception(err))[-3000:]}
    print("ECOSYSTEM-RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:] or list(PROGRAMS))
