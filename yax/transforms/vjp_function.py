"""The function `vjp` returns, as a pytree (JAX's is a `Partial` whose leaves are arrays).

Code written for JAX flattens a vjp function, passes its leaves through a transformation and
rebuilds it (the remat tutorial's `print_fwd_bwd`: `tree_flatten(f_vjp)`, then
`make_jaxpr(lambda *res: tree_unflatten(tree, res)(ct))`). yax's leaves are the primal values
the pullback was built at: a rebuilt function with other leaves differentiates again at them
(under a trace, that is the backward computation staged from the leaves).
"""

from __future__ import annotations

from yax import tree_util


class VJPFunction:
    """`f_vjp(cotangent)`; flattens to the primals it linearized at."""

    __slots__ = ("_call", "_remake", "_primals", "__wrapped__")

    def __init__(self, call, remake, primals: list):
        self._call = call          # the pullback itself
        self._remake = remake      # primal leaves -> a new pullback at them
        self._primals = list(primals)
        self.__wrapped__ = call

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __repr__(self):
        return f"<vjp function of {len(self._primals)} primal leaves>"


def _flatten(f):
    return f._primals, f._remake


def _unflatten(remake, leaves):
    leaves = list(leaves)
    return VJPFunction(lambda *args, **kwargs: remake(leaves)(*args, **kwargs), remake, leaves)


tree_util.register_pytree_node(VJPFunction, _flatten, _unflatten)
