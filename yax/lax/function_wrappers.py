"""yax.lax functions that wrap user functions: platform_dependent (one per platform, chosen at
trace time) and composite (a named decomposition).
"""

from __future__ import annotations

from yax import errors
from yax.runtime import backend

__all__ = ["platform_dependent", "composite"]


def platform_dependent(*args, default=None, **per_platform):
    """Call the function for the platform yax runs on (per_platform["cpu"], ...) or `default`.
    Differs from JAX: chosen at trace time from the default backend, not by the compiler."""
    fun = per_platform.get(backend.platform(), default)
    if fun is None:
        raise errors.InvalidArgumentError(
            f"platform_dependent: no function for platform {backend.platform()!r} and no default")
    return fun(*args)


def composite(decomposition, name: str, version: int = 0):
    """Mark `decomposition` as a named composite. yax calls the decomposition (XLA would inline
    it anyway); the name and version are kept on the wrapper."""
    import functools

    @functools.wraps(decomposition)
    def wrapper(*args, **kwargs):
        return decomposition(*args, **kwargs)
    wrapper.composite_name, wrapper.composite_version = name, version
    return wrapper
