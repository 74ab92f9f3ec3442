"""yax.extend: the parts of yax's internals that JAX exposes as `jax.extend` (for writing
interpreters and primitives on top of the IR). `yax.extend.core` mirrors `jax.extend.core`,
`linear_util` and `source_info_util` their jax namesakes."""

from yax.extend import core, linear_util, source_info_util  # noqa: F401
