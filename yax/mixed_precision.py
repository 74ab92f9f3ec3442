"""Mixed-precision training: a dtype policy and dynamic loss scaling (jax leaves both to outside
libraries; this follows the usual recipe of Micikevicius et al., "Mixed Precision Training",
ICLR 2018).

* A `Policy` names three dtypes: float32 master parameters (what the optimizer updates), a low
  compute dtype (bfloat16 or float16) the forward and backward passes run in, and the output
  dtype (float32, for the loss). `policy.cast_to_compute(params)` etc. cast the floating leaves
  of a pytree and leave integer leaves alone.
* Dynamic loss scaling keeps small float16 gradients from underflowing: multiply the loss by a
  scale S before differentiating, divide the gradients by S, and if any gradient is inf or NaN
  skip the update and halve S; after `period` finite steps in a row double S.
  `DynamicLossScale` is a pytree (its scale and counter are array leaves, its settings static),
  so it is carried through `jit`, `scan` and `cond`, and all its decisions are `jnp.where`s.

    policy = Policy.from_string("params=float32,compute=bfloat16,output=float32")
    scale = DynamicLossScale(2.0 ** 15)

    def train_step(params, opt_state, scale, x, y):
        def loss_fn(p):
            logits = model(policy.cast_to_compute(p), policy.cast_to_compute(x))
            return scale.scale(loss(policy.cast_to_output(logits), y))
        grads = scale.unscale(yax.grad(loss_fn)(params))
        finite = all_finite(grads)
        new_params, new_opt_state = update(params, grads, opt_state)
        params, opt_state = select_tree(finite, (new_params, new_opt_state), (params, opt_state))
        return params, opt_state, scale.adjust(finite)
"""

from __future__ import annotations

import dataclasses

import numpy as np

import yax.numpy as jnp
from yax import tree_util
from yax.core import dtypes

__all__ = ["Policy", "cast_tree", "all_finite", "select_tree", "DynamicLossScale",
           "StaticLossScale", "NoOpLossScale", "get_policy"]

_DTYPE_ALIASES = {
    "f16": "float16", "half": "float16", "bf16": "bfloat16", "f32": "float32",
    "full": "float32", "single": "float32", "float": "float32", "f64": "float64",
    "double": "float64",
}
_ROLE_ALIASES = {"p": "param", "param": "param", "params": "param", "c": "compute",
                 "compute": "compute", "o": "output", "output": "output"}


def _parse_dtype(name: str):
    name = name.strip().lower()
    return np.dtype(dtypes.dtype(_DTYPE_ALIASES.get(name, name)))


def cast_tree(tree, dtype):
    """`tree` with every floating-point leaf cast to `dtype` (other leaves unchanged)."""
    dtype = np.dtype(dtypes.dtype(dtype))

    def cast(x):
        x_dtype = getattr(x, "dtype", None)
        if x_dtype is not None and dtypes.is_float(np.dtype(x_dtype)):
            return jnp.asarray(x).astype(dtype) if np.dtype(x_dtype) != dtype else x
        return x
    return tree_util.tree_map(cast, tree)


@dataclasses.dataclass(frozen=True)
class Policy:
    """Which dtype parameters are kept in, computations run in, and outputs are returned in.

    Make one with `Policy(param_dtype, compute_dtype, output_dtype)` or from a string such as
    `"params=float32,compute=bfloat16,output=float32"` (short forms `p=f32,c=bf16,o=f32`; a
    role left out defaults to float32). Casting touches floating-point leaves only.
    """

    param_dtype: np.dtype = np.dtype(np.float32)
    compute_dtype: np.dtype = np.dtype(np.float32)
    output_dtype: np.dtype = np.dtype(np.float32)

    def __post_init__(self):
        for field in ("param_dtype", "compute_dtype", "output_dtype"):
            value = np.dtype(dtypes.dtype(getattr(self, field)))
            if not dtypes.is_float(value):
                raise ValueError(f"Policy: {field} must be a floating dtype, got {value}")
            object.__setattr__(self, field, value)

    @classmethod
    def from_string(cls, spec: str) -> Policy:
        """Parse `"params=float32,compute=bfloat16,output=float32"` (or one dtype name, used
        for all three roles)."""
        spec = spec.strip()
        if "=" not in spec:
            dt = _parse_dtype(spec)
            return cls(dt, dt, dt)
        roles = {}
        for part in spec.split(","):
            role, _, name = part.partition("=")
            key = _ROLE_ALIASES.get(role.strip().lower())
            if key is None:
                raise ValueError(f"Policy.from_string: unknown role {role.strip()!r} in "
                                 f"{spec!r}; use params=, compute= and output=.")
            roles[key + "_dtype"] = _parse_dtype(name)
        return cls(**roles)

    def cast_to_param(self, tree):
        return cast_tree(tree, self.param_dtype)

    def cast_to_compute(self, tree):
        return cast_tree(tree, self.compute_dtype)

    def cast_to_output(self, tree):
        return cast_tree(tree, self.output_dtype)

    def with_output_dtype(self, dtype) -> Policy:
        return dataclasses.replace(self, output_dtype=dtype)

    def __str__(self) -> str:
        return (f"params={self.param_dtype.name},compute={self.compute_dtype.name},"
                f"output={self.output_dtype.name}")


def get_policy(spec) -> Policy:
    """A Policy from a Policy or its string form."""
    return spec if isinstance(spec, Policy) else Policy.from_string(spec)


def all_finite(tree):
    """A boolean scalar: are all entries of all (inexact) leaves finite?"""
    leaves = [jnp.all(jnp.isfinite(x)) for x in tree_util.tree_leaves(tree)
              if dtypes.is_inexact(np.dtype(x.dtype))]
    if not leaves:
        return jnp.asarray(True)
    return jnp.all(jnp.stack(leaves))


def select_tree(pred, on_true, on_false):
    """Leafwise `jnp.where(pred, a, b)` of two pytrees of one structure (pred a scalar)."""
    return tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


def _scale_tree(tree, factor):
    return tree_util.tree_map(lambda g: g * factor.astype(g.dtype), tree)


@dataclasses.dataclass(frozen=True)
class NoOpLossScale:
    """No loss scaling (scale 1): for float32 or bfloat16 training that does not need it."""

    @property
    def loss_scale(self):
        return jnp.asarray(1.0, np.float32)

    def scale(self, tree):
        return tree

    def unscale(self, tree):
        return tree

    def adjust(self, grads_finite) -> NoOpLossScale:
        return self


@dataclasses.dataclass(frozen=True)
class StaticLossScale:
    """A fixed loss scale."""

    loss_scale: object

    def scale(self, tree):
        return _scale_tree(tree, jnp.asarray(self.loss_scale, np.float32))

    def unscale(self, tree):
        return _scale_tree(tree, 1.0 / jnp.asarray(self.loss_scale, np.float32))

    def adjust(self, grads_finite) -> StaticLossScale:
        return self


@dataclasses.dataclass(frozen=True)
class DynamicLossScale:
    """A loss scale that halves on overflow and doubles after `period` finite steps.

    Args:
      loss_scale: the initial scale (e.g. 2**15); stored as a float32 array leaf.
      counter: finite steps since the last change (an int32 array leaf).
      period: finite steps in a row before the scale is multiplied by `factor` (static).
      factor: the growth and shrink factor (static, default 2).
      min_loss_scale: the scale never goes below this (static, default 1).

    Use `scale(loss)` before differentiating, `unscale(grads)` after, and
    `adjust(all_finite(grads))` for the next step's scale; skip the update when not finite
    (`select_tree`). It is a pytree, so it goes in and out of `jit` as state.
    """

    loss_scale: object
    counter: object = None
    period: int = 2000
    factor: float = 2.0
    min_loss_scale: float = 1.0

    def __post_init__(self):
        if not hasattr(self.loss_scale, "aval") or self.loss_scale.dtype != np.float32:
            object.__setattr__(self, "loss_scale", jnp.asarray(self.loss_scale, np.float32))
        counter = 0 if self.counter is None else self.counter
        if not hasattr(counter, "aval") or counter.dtype != np.int32:
            object.__setattr__(self, "counter", jnp.asarray(counter, np.int32))

    def scale(self, tree):
        """`tree` (a loss, or any pytree) multiplied by the loss scale."""
        return _scale_tree(tree, self.loss_scale)

    def unscale(self, tree):
        """`tree` (the gradients of a scaled loss) divided by the loss scale."""
        return _scale_tree(tree, 1.0 / self.loss_scale)

    def adjust(self, grads_finite) -> DynamicLossScale:
        """The scale for the next step: on overflow (grads_finite False) divide by `factor`
        (not below `min_loss_scale`) and reset the counter; otherwise count the step and
        multiply by `factor` when the counter reaches `period`."""
        grads_finite = jnp.asarray(grads_finite)
        grow = grads_finite & (self.counter + 1 >= self.period)
        shrunk = jnp.maximum(self.loss_scale / self.factor,
                             jnp.asarray(self.min_loss_scale, np.float32))
        new_scale = jnp.where(grow, self.loss_scale * self.factor,
                              jnp.where(grads_finite, self.loss_scale, shrunk))
        new_counter = jnp.where(grads_finite & ~grow, self.counter + 1, 0).astype(np.int32)
        return _rebuild_dynamic((self.period, self.factor, self.min_loss_scale),
                                (new_scale, new_counter))


def _rebuild_dynamic(aux, children) -> DynamicLossScale:
    # No __post_init__ conversion: unflattening may put tracers or placeholders in the leaves.
    scale = object.__new__(DynamicLossScale)
    values = (*children, *aux)
    for field, value in zip(("loss_scale", "counter", "period", "factor", "min_loss_scale"),
                            values, strict=True):
        object.__setattr__(scale, field, value)
    return scale


tree_util.register_pytree_node(
    DynamicLossScale,
    lambda s: ((s.loss_scale, s.counter), (s.period, s.factor, s.min_loss_scale)),
    _rebuild_dynamic)
tree_util.register_pytree_node(
    StaticLossScale, lambda s: ((s.loss_scale,), None),
    lambda _aux, children: StaticLossScale(children[0]))
tree_util.register_pytree_node(NoOpLossScale, lambda s: ((), None),
                               lambda _aux, _children: NoOpLossScale())
