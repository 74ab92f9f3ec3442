"""yax.lax.stop_gradient."""

from __future__ import annotations

from yax import tree_util
from yax.core import dtypes
from yax.core.trace import bind
from yax.primitives.ad_control import stop_gradient_p
from yax.runtime.values import as_operand

__all__ = ["stop_gradient"]


def stop_gradient(x):
    """The identity, with a zero derivative: no gradient flows through `x` (a pytree).

    Example:
      >>> yax.grad(lambda x: x * lax.stop_gradient(x))(3.0)   # 3.0, not 6.0
    """
    def leaf(v):
        v = as_operand(v)
        if not dtypes.is_inexact(v.aval.dtype if hasattr(v, "aval") else v.dtype):
            return v  # integers carry no derivative anyway
        return bind(stop_gradient_p, v)
    return tree_util.tree_map(leaf, x)
