"""`jax.interpreters`: the rule registries of jax's interpreters (ad, batching, mlir,
partial_eval), wired to the rule slots of yax's primitives."""

from yax._jax_names.interpreters import ad, batching, mlir, partial_eval  # noqa: F401
