"""jax modules whose yax counterparts cannot live under the same name.

`jax.core`, `jax.custom_derivatives` and `jax.interpreters.{ad,batching,mlir,partial_eval}`
are public jax modules; yax's own `yax.core` and `yax.interpreters.*` are its internal IR and
interpreters, with other contents. The facades for those jax names live here; alias mode
(yax/_alias_table.py) maps the jax names to them, and yax users can import them directly
(`from yax._jax_names.interpreters import ad`) to extend yax the way jax is extended.
"""
