"""`jax.experimental.pjit`: `pjit`, which is `jit` (in_shardings/out_shardings included),
as it has been in jax since their merge."""

from yax.transforms.jit import jit as pjit

__all__ = ["pjit"]
