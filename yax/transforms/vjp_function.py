"""The function `vjp` returns, as a pytree (JAX's is a `Partial` whose leaves are arrays).

Code written for JAX flattens a vjp function, passes its leaves through a transformation and
rebuilds it (the remat tutorial's `print_fwd_bwd`: `tree_flatten(f_vjp)`, then
`make_jaxpr(lambda *res: tree_unflatten(tree, res)(ct))`). The leaves are the residuals of the
linear map, as JAX's: flattening linearizes the function once (at its primals), and a rebuilt
function runs the backward pass on the leaves it is given.
"""

from __future__ import annotations

from yax import tree_util


class VJPFunction:
    """`f_vjp(cotangent)`; flattens to the residuals of its linear map."""

    __slots__ = ("_call", "_residuals", "__wrapped__")

    def __init__(self, call, residuals):
        self._call = call              # the pullback itself
        self._residuals = residuals    # () -> (residual leaves, leaves -> a pullback)
        self.__wrapped__ = call

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __repr__(self):
        return "<vjp function>"


def _flatten(f):
    if callable(f._residuals):  # linearize once, at the first flatten
        f._residuals = f._residuals()
    leaves, rebuild = f._residuals
    return leaves, rebuild


def _unflatten(rebuild, leaves):
    leaves = list(leaves)
    return VJPFunction(rebuild(leaves), (leaves, rebuild))


tree_util.register_pytree_node(VJPFunction, _flatten, _unflatten)
