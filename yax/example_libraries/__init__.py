"""yax.example_libraries: small model-building libraries in the style of
jax.example_libraries: `optimizers` (first-order optimizers as (init, update, get_params)
triples over pytrees) and `stax` (layers as (init_fun, apply_fun) pairs and combinators).
"""

from yax.example_libraries import optimizers, stax  # noqa: F401
