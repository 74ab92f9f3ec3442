"""`Partial`: a functools.partial that is a pytree (its bound arguments are the children, the
function is static), so it can be passed through transformations.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Self

from yax._pytree.registry import (
    register_pytree_node,
)


class _HashableCallableShim:
    """Wraps a plain functools.partial passed to Partial, so that functools does not
    merge its bound arguments into the Partial's (they must stay static aux data)."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable):
        self.fun = fun

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            other = other.fun
        return self.fun == other

    def __repr__(self) -> str:
        return repr(self.fun)


class Partial(functools.partial):
    """A functools.partial that is a pytree: bound args/kwargs are children, the
    wrapped function is static aux data. Lets closures cross jit boundaries."""

    def __new__(cls, func: Callable, *args: Any, **kwargs: Any) -> Self:
        if isinstance(func, functools.partial) and not isinstance(func, Partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
