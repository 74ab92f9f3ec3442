"""yax.extend: the parts of yax's internals that JAX exposes as `jax.extend` (for writing
interpreters and primitives on top of the IR). `yax.extend.core` mirrors `jax.extend.core`."""

from yax.extend import core  # noqa: F401
