"""Whole programs, written once against a JAX-like API and run with real jax and with yax.

Each program is a function `program(m, data)` where `m` bundles the modules a JAX user imports
(`m.jax`, `m.jnp`, `m.lax`, `m.nn`, `m.scipy`, `m.random`, `m.tree_util`) and `data` is a dict of
NumPy inputs. The same source runs twice, once with `import jax` and once with `import yax as
jax`, and the outputs (any pytree) must agree: allclose for floats, equal for ints and for random
bits, with the same shapes and dtypes. This file holds the harness and the training-style
programs; test_programs_*.py hold the rest.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib
from typing import Any

import numpy as np
import pytest

import yax


@dataclasses.dataclass(frozen=True)
class Api:
    """The modules a JAX program imports, from one implementation (jax or yax)."""

    name: str
    jax: Any
    jnp: Any
    lax: Any
    nn: Any
    scipy: Any
    tree_util: Any
    random: Any  # None while the implementation has no random module


def _optional(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def jax_api() -> Api:
    import jax
    import jax.numpy
    import jax.random
    import jax.scipy.linalg
    import jax.scipy.special
    import jax.scipy.stats
    import jax.tree_util
    return Api("jax", jax, jax.numpy, jax.lax, jax.nn, jax.scipy, jax.tree_util, jax.random)


def yax_api() -> Api:
    for sub in ("yax.scipy.special", "yax.scipy.stats", "yax.scipy.linalg", "yax.numpy.linalg",
                "yax.ops", "yax.tree"):
        _optional(sub)
    return Api("yax", yax, yax.numpy, yax.lax, yax.nn, yax.scipy, yax.tree_util,
               _optional("yax.random"))


def has(path: str) -> bool:
    """Whether yax has the attribute path, e.g. has("lax.reduce_window") or has("random")."""
    # Import only the known subpackages (in yax_api): importing "yax.lax.<name>" would load a
    # second copy of a module through the yax.lax alias and shadow the function of that name.
    yax_api()
    obj: Any = yax
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


def needs(path: str):
    """Skip marker for a program that uses a yax feature that has not landed."""
    return pytest.mark.skipif(not has(path), reason=f"yax.{path} is not implemented yet")


def _leaves(tree) -> tuple[list, Any]:
    import jax
    leaves, treedef = jax.tree_util.tree_flatten(
        tree, is_leaf=lambda x: isinstance(x, yax.Array))
    return [np.asarray(leaf) for leaf in leaves], treedef


def assert_trees_agree(got, want, *, rtol: float, atol: float, exact: bool = False) -> None:
    """Same structure, shapes and dtypes; values equal (ints/bools, or `exact`) or allclose."""
    got_leaves, got_def = _leaves(got)
    want_leaves, want_def = _leaves(want)
    assert got_def == want_def, f"tree structure {got_def} != {want_def}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        assert g.shape == w.shape, f"leaf {i}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"leaf {i}: dtype {g.dtype} != {w.dtype}"
        if exact or g.dtype.kind in "biuUSO":  # ints, bools, strings, objects: equal
            np.testing.assert_array_equal(g, w, err_msg=f"leaf {i}")
        else:  # via float64/complex128: NumPy cannot subtract bfloat16 arrays
            wide = np.complex128 if g.dtype.kind == "c" else np.float64
            np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=rtol, atol=atol,
                                       err_msg=f"leaf {i}")


def run_program(program, data: dict, *, rtol: float = 1e-5, atol: float = 1e-6,
                exact: bool = False):
    """Run `program` with jax and with yax on the same data; check they agree; return yax's."""
    want = program(jax_api(), data)
    got = program(yax_api(), data)
    assert_trees_agree(got, want, rtol=rtol, atol=atol, exact=exact)
    return got


def rng_data(seed: int, **shapes) -> dict:
    """Normal float32 data of the given shapes (float64 when x64 is on, cast by the program)."""
    rng = np.random.default_rng(seed)
    return {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}


# ---------------------------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")

def mlp_init(m: Api, sizes, seed: int = 0):
    """A list of {"w", "b"} layers with scaled normal weights (from NumPy, same for both)."""
    rng = np.random.default_rng(seed)
    return [{"w": m.jnp.asarray(rng.normal(size=(a, b)).astype(np.float32) / np.sqrt(a)),
             "b": m.jnp.zeros((b,), m.jnp.float32)} for a, b in zip(sizes[:-1], sizes[1:])]


def mlp_apply(m: Api, params, x):
    for layer in params[:-1]:
        x = m.jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def program_mlp_adam(m: Api, data):
    """An MLP regressor trained by a jitted Adam step over a pytree of params and moments."""
    jnp, tu = m.jnp, m.tree_util
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])
    params = mlp_init(m, [3, 16, 16, 1])

    def loss(p, x, y):
        return jnp.mean((mlp_apply(m, p, x)[:, 0] - y) ** 2)

    @m.jax.jit
    def step(state, x, y):
        p, mu, nu, t = state
        val, g = m.jax.value_and_grad(loss)(p, x, y)
        t = t + 1
        mu = tu.tree_map(lambda a, b: 0.9 * a + 0.1 * b, mu, g)
        nu = tu.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, nu, g)
        lr = 1e-2 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        p = tu.tree_map(lambda w, a, b: w - lr * a / (jnp.sqrt(b) + 1e-8), p, mu, nu)
        return (p, mu, nu, t), val

    zeros = tu.tree_map(jnp.zeros_like, params)
    state = (params, zeros, zeros, jnp.asarray(0.0))
    losses = []
    for _ in range(8):
        state, val = step(state, x, y)
        losses.append(val)
    return state[0], jnp.stack(losses)


def program_mlp_sgd_momentum(m: Api, data):
    """SGD with momentum; params as a tuple of tuples; the whole epoch is one jitted scan."""
    jnp, tu = m.jnp, m.tree_util
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])
    params = tuple((d["w"], d["b"]) for d in mlp_init(m, [3, 8, 1], seed=1))

    def loss(p, xb, yb):
        h = m.nn.relu(xb @ p[0][0] + p[0][1])
        return jnp.mean(((h @ p[1][0] + p[1][1])[:, 0] - yb) ** 2)

    @m.jax.jit
    def epoch(p, vel):
        xb, yb = x.reshape(4, -1, 3), y.reshape(4, -1)

        def body(carry, batch):
            p, vel = carry
            val, g = m.jax.value_and_grad(loss)(p, *batch)
            vel = tu.tree_map(lambda v, gi: 0.9 * v + gi, vel, g)
            p = tu.tree_map(lambda w, v: w - 0.05 * v, p, vel)
            return (p, vel), val
        return m.lax.scan(body, (p, vel), (xb, yb))

    carry = (params, tu.tree_map(jnp.zeros_like, params))
    all_losses = []
    for _ in range(3):
        carry, losses = epoch(*carry)
        all_losses.append(losses)
    return carry[0], jnp.concatenate(all_losses)


def program_per_example_clipping(m: Api, data):
    """DP-SGD style: per-example gradients by vmap(grad), clipped to norm 1, averaged, noised."""
    jnp, tu = m.jnp, m.tree_util
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])
    params = {"w": jnp.asarray(data["w"]), "b": jnp.asarray(0.5)}

    def loss(p, xi, yi):
        return (jnp.dot(xi, p["w"]) + p["b"] - yi) ** 2

    @m.jax.jit
    def private_grad(p, x, y, noise):
        per_ex = m.jax.vmap(m.jax.grad(loss), in_axes=(None, 0, 0))(p, x, y)
        sq = sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in tu.tree_leaves(per_ex))
        scale = jnp.minimum(1.0, 1.0 / jnp.sqrt(sq))
        clipped = tu.tree_map(lambda g: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), per_ex)
        mean = tu.tree_map(lambda g: jnp.mean(g, axis=0), clipped)
        return mean, {"w": mean["w"] + 0.1 * noise, "b": mean["b"]}, jnp.sqrt(sq)

    return private_grad(params, x, y, jnp.asarray(data["noise"]))


def program_logistic_regression(m: Api, data):
    """Softmax regression with log_softmax cross-entropy, one_hot labels, L2, gradient descent."""
    jnp = m.jnp
    x = jnp.asarray(data["x"])
    labels = jnp.argmax(x @ jnp.asarray(data["w_true"]), axis=1)
    w, b = jnp.zeros((5, 3)), jnp.zeros((3,))

    def loss(w, b):
        logp = m.nn.log_softmax(x @ w + b, axis=-1)
        return -jnp.mean(jnp.sum(m.nn.one_hot(labels, 3) * logp, axis=-1)) + 1e-3 * jnp.sum(w * w)

    step = m.jax.jit(lambda w, b: m.jax.value_and_grad(loss, argnums=(0, 1))(w, b))
    losses = []
    for _ in range(10):
        val, (gw, gb) = step(w, b)
        w, b = w - 0.5 * gw, b - 0.5 * gb
        losses.append(val)
    acc = jnp.mean((jnp.argmax(x @ w + b, axis=1) == labels).astype(jnp.float32))
    return w, b, jnp.stack(losses), acc, labels


def program_lr_schedule(m: Api, data):
    """A warmup + cosine learning-rate schedule built with jnp.where, inside a jitted step."""
    jnp = m.jnp
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])

    def schedule(t):
        warm = 0.1 * (t + 1) / 5
        frac = jnp.clip((t - 5) / 15, 0.0, 1.0)
        cosine = 0.05 + 0.05 * (1 + jnp.cos(jnp.pi * frac))
        return jnp.where(t < 5, warm, cosine)

    @m.jax.jit
    def step(w, t):
        g = m.jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
        lr = schedule(t)
        return w - lr * g, lr

    w = jnp.zeros((3,))
    lrs = []
    for t in range(20):
        w, lr = step(w, jnp.asarray(t, jnp.int32))
        lrs.append(lr)
    sched_grad = m.jax.vmap(m.jax.grad(schedule))(jnp.arange(20.0))
    return w, jnp.stack(lrs), sched_grad


def program_pytree_params(m: Api, data):
    """Nested dict/tuple/list params: tree_map updates, global norm, flatten/unflatten, decay."""
    jnp, tu = m.jnp, m.tree_util
    x = jnp.asarray(data["x"])
    params = {"enc": ({"w": jnp.asarray(data["w1"]), "b": jnp.zeros(4)}, [jnp.asarray(1.5)]),
              "dec": {"w": jnp.asarray(data["w2"])}}

    def loss(p):
        h = jnp.tanh(x @ p["enc"][0]["w"] + p["enc"][0]["b"]) * p["enc"][1][0]
        return jnp.sum((h @ p["dec"]["w"] - x) ** 2) / x.shape[0]

    @m.jax.jit
    def update(p):
        g = m.jax.grad(loss)(p)
        norm = jnp.sqrt(sum(jnp.sum(l * l) for l in tu.tree_leaves(g)))
        g = tu.tree_map(lambda l: l / jnp.maximum(norm, 1.0), g)
        return tu.tree_map(lambda w, gi: 0.99 * w - 0.1 * gi, p, g), norm

    norms = []
    for _ in range(4):
        params, norm = update(params)
        norms.append(norm)
    leaves, treedef = tu.tree_flatten(params)
    rebuilt = tu.tree_unflatten(treedef, [2.0 * l for l in leaves])
    sizes = tu.tree_map(lambda l: l.size, params)
    return params, jnp.stack(norms), rebuilt, sizes, loss(params)


def program_custom_pytree_state(m: Api, data):
    """Training state made of user pytree nodes: a registered class (with static metadata), a
    registered dataclass, a namedtuple with a None field, and an integer step counter updated
    by a jitted step that differentiates with allow_int=True."""
    jnp, tu = m.jnp, m.tree_util

    class Dense:
        def __init__(self, w, b, name):
            self.w, self.b, self.name = w, b, name

    tu.register_pytree_node(Dense, lambda l: ((l.w, l.b), l.name),
                            lambda name, children: Dense(*children, name))

    @dataclasses.dataclass
    class State:
        params: dict
        step: Any

    tu.register_dataclass(State, data_fields=["params", "step"], meta_fields=[])
    x = jnp.asarray(data["x"])
    state = State({"dense": Dense(jnp.asarray(data["w"]), jnp.zeros(5), "dense"),
                   "pt": Point(jnp.asarray(1.0), None)}, jnp.asarray(0))

    def loss(st):
        layer = st.params["dense"]
        return jnp.sum(jnp.tanh(x @ layer.w + layer.b)) * st.params["pt"].x

    @m.jax.jit
    def update(st):
        g = m.jax.grad(loss, allow_int=True)(st)
        return tu.tree_map(lambda p, gi: p - 0.1 * gi if jnp.issubdtype(p.dtype, jnp.floating)
                           else p + 1, st, g)

    for _ in range(2):
        state = update(state)
    layer = state.params["dense"]
    return (layer.w, layer.b, layer.name, state.params["pt"], state.step,
            tu.tree_structure(state).num_leaves)


def program_jit_calling_conventions(m: Api, data):
    """jit with defaults and keyword-only arguments, nested jit, closed-over arrays, outputs
    with empty tuples and None, and eval_shape."""
    jnp = m.jnp
    x, c = jnp.asarray(data["x"]), jnp.asarray(data["w"])
    f = m.jax.jit(lambda a, b=2.0, *, scale: (a @ c) * b * scale)
    g = m.jax.jit(lambda a: m.jax.jit(lambda z: z * 2)(a) + 1)
    h = m.jax.jit(lambda a: {"empty": (), "none": None, "v": a.sum()})
    shape = m.jax.eval_shape(lambda a: a @ c, x)
    return f(x, scale=3.0), f(x, 1.0, scale=2.0), g(x), h(x), shape.shape, str(shape.dtype)


@pytest.mark.parametrize("program,shapes,tol", [
    (program_mlp_adam, {"x": (32, 3), "y": (32,)}, 2e-5),
    (program_mlp_sgd_momentum, {"x": (32, 3), "y": (32,)}, 2e-5),
    (program_per_example_clipping, {"x": (16, 4), "y": (16,), "w": (4,), "noise": (4,)}, 1e-5),
    (program_logistic_regression, {"x": (40, 5), "w_true": (5, 3)}, 1e-5),
    (program_lr_schedule, {"x": (20, 3), "y": (20,)}, 1e-5),
    (program_pytree_params, {"x": (10, 3), "w1": (3, 4), "w2": (4, 3)}, 1e-5),
    (program_custom_pytree_state, {"x": (4, 3), "w": (3, 5)}, 1e-5),
    (program_jit_calling_conventions, {"x": (4, 3), "w": (3, 5)}, 1e-5),
], ids=lambda v: v.__name__.replace("program_", "") if callable(v) else "")
def test_training_programs(program, shapes, tol):
    run_program(program, rng_data(0, **shapes), rtol=tol, atol=tol)


def test_mlp_adam_learns():
    """The harness can fail: the training program really lowers the loss."""
    losses = program_mlp_adam(yax_api(), rng_data(0, x=(32, 3), y=(32,)))[1]
    assert float(losses[-1]) < float(losses[0])


def test_harness_detects_mismatch():
    with pytest.raises(AssertionError):
        assert_trees_agree({"a": np.ones(2, np.float32)}, {"a": np.zeros(2, np.float32)},
                           rtol=1e-5, atol=1e-5)
    with pytest.raises(AssertionError):
        assert_trees_agree(np.ones(2, np.float32), np.ones(2, np.float64), rtol=1, atol=1)
    with pytest.raises(AssertionError):
        assert_trees_agree((np.ones(2),), [np.ones(2)], rtol=1, atol=1)
