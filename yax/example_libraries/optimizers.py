"""First-order optimizers over pytrees (the API of jax.example_libraries.optimizers).

An optimizer is a triple of functions, built from a step size (a number or a schedule
`i -> step size`):

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)                  # an OptimizerState (a pytree)
    state = opt_update(i, grads, state)       # one step at iteration i
    params = get_params(state)

Each optimizer is written for a single array (`init(x0) -> per-leaf state`,
`update(i, g, state) -> state`, `get_params(state) -> x`); the `optimizer` decorator lifts the
three to whole pytrees of parameters. The state keeps, per parameter leaf, the flattened leaves
of that leaf's state and their tree structures, so it passes through `jit` and `scan`.
`unpack_optimizer_state`/`pack_optimizer_state` convert it to and from a plain nested
structure (for saving and restoring).
"""

from __future__ import annotations

import builtins
import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import yax.numpy as jnp
from yax import tree_util
from yax.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = [
    "Array", "InitFn", "JoinPoint", "Optimizer", "OptimizerState", "Params", "ParamsFn",
    "Schedule", "State", "Step", "UpdateFn", "Updates", "adagrad", "adam", "adamax",
    "clip_grads", "constant", "exponential_decay", "inverse_time_decay", "l2_norm",
    "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
    "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
    "unpack_optimizer_state", "unzip2", "safe_map", "safe_zip", "map", "zip", "partial",
]

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]

# packed_state: per parameter leaf, the list of that leaf's state leaves; tree_def: the
# parameters' structure; subtree_defs: per parameter leaf, the structure of its state.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    """The (init_fn, update_fn, params_fn) triple an optimizer constructor returns."""
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def unzip2(pairs):
    """Split an iterable of pairs into a tuple of firsts and a tuple of seconds."""
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def optimizer(opt_maker):
    """Decorator: turn a maker of per-array `(init, update, get_params)` into one whose
    functions act on pytrees of parameters (returning an `Optimizer`)."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = unzip2(tree_flatten(init(x0)) for x0 in x0_flat)
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {grad_tree_def}.")
            states = [tree_unflatten(s, f)
                      for s, f in builtins.zip(subtrees, states_flat, strict=True)]
            new_states = [update(i, g, s)
                          for g, s in builtins.zip(grad_flat, states, strict=True)]
            new_flat, new_subtrees = unzip2(tree_flatten(s) for s in new_states)
            for old, new in builtins.zip(subtrees, new_subtrees, strict=True):
                if new != old:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {old} and output {new}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(s, f)
                      for s, f in builtins.zip(subtrees, states_flat, strict=True)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# --- optimizers (per array) --------------------------------------------------------------


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    return init, update, lambda x: x


@optimizer
def momentum(step_size, mass: float):
    """Heavy-ball momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, lambda state: state[0]


@optimizer
def nesterov(step_size, mass: float):
    """Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, lambda state: state[0]


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al., 2011) with momentum on the normalised gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a running mean of squared gradients divides the step."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the normalised steps."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015) with bias-corrected moments.

    Example:
      >>> opt_init, opt_update, get_params = adam(1e-3)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (the infinity-norm variant of Adam)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, lambda state: state[0]


def _splice(seq, i: int, items) -> list:
    out = list(seq)
    out[i:i + 1] = items
    return out


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., "Memory-Efficient Adaptive Optimization", 2019): one accumulator
    vector per axis instead of a full second-moment array."""
    step_size = make_schedule(step_size)

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i, g, state):
        x, m, vs, shape = state
        vs = [v[tuple(_splice([None] * g.ndim, axis, [slice(None)]))]
              for axis, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [jnp.max(accum, axis=tuple(_splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        x, _, _, shape = state
        return jnp.reshape(x, shape)

    return init, update, get_params


# --- learning-rate schedules --------------------------------------------------------------


def constant(step_size) -> Schedule:
    """The schedule i -> step_size."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """i -> step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """i -> step_size / (1 + decay_rate * i / decay_steps) (floored ratio if `staircase`)."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """Polynomial decay from `step_size` to `final_step_size` over `decay_steps`, then flat."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """values[k] for i in (boundaries[k-1], boundaries[k]]; len(values) = len(boundaries) + 1."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule from a callable (returned as is) or a scalar (a constant schedule)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --- utilities ----------------------------------------------------------------------------


def l2_norm(tree):
    """The L2 norm of all leaves of a pytree, taken together as one vector."""
    leaves = tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale a gradient pytree down so that its `l2_norm` is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a parameter's own state subtree joins the parameter tree (in the structure
    `unpack_optimizer_state` returns)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # so a JoinPoint unpacks like its subtree's container
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """The optimizer state as a nested structure: the parameter tree with a `JoinPoint`
    holding each leaf's state (for pickling; no tree definitions inside)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(d, f)
                for d, f in builtins.zip(subtree_defs, states_flat, strict=True)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state expects the structure that "
                        "unpack_optimizer_state returns (JoinPoint leaves).")
    states_flat, subtree_defs = unzip2(tree_flatten(s.subtree) for s in sentinels)
    return OptimizerState(states_flat, tree_def, subtree_defs)


def safe_map(f, *args):
    """`map` that insists on arguments of one length, returning a list."""
    args = [list(a) for a in args]
    if any(len(a) != len(args[0]) for a in args):
        raise ValueError(f"safe_map: arguments of lengths {[len(a) for a in args]}")
    return list(builtins.map(f, *args))


def safe_zip(*args):
    """`zip` that insists on arguments of one length, returning a list."""
    return list(builtins.zip(*args, strict=True))


# jax's module exports these names too (its map and zip are the safe versions).
map = safe_map  # noqa: A001
zip = safe_zip  # noqa: A001
partial = functools.partial
