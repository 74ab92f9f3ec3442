"""`jax.extend.linear_util`: jax's wrapper of functions under transformation (`WrappedFun`).

yax's transformations take plain Python callables, so a wrapped function is that callable with
the debug information jax's callers attach; `call_wrapped` calls it. jax's transformation
stores (`transformation`, `store`, ...) are not provided (docs/ecosystem.md).
"""

from __future__ import annotations

__all__ = ["WrappedFun", "wrap_init"]


class WrappedFun:
    """A function with the debug information jax attaches to it (kept, not used by yax)."""

    def __init__(self, f, params=(), debug_info=None):
        self.f, self.params, self.debug_info = f, tuple(params), debug_info
        self.__name__ = getattr(f, "__name__", "fun")

    def call_wrapped(self, *args, **kwargs):
        return self.f(*args, **dict(self.params), **kwargs)

    def __call__(self, *args, **kwargs):
        return self.call_wrapped(*args, **kwargs)

    def __repr__(self):
        return f"WrappedFun({self.f!r})"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    return WrappedFun(f, tuple((params or {}).items()), debug_info)
