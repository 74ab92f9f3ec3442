"""NumPy type names that jax.numpy also exports. A module of its own because `bool` here is
jnp's bool scalar type, which must not shadow Python's `bool` in the modules that use it.
"""

from __future__ import annotations

import numpy as np

from yax.numpy.dtypes_api import bool_

__all__ = ["bool", "character", "flexible", "object_", "ComplexWarning"]

bool = bool_  # noqa: A001  (jnp.bool is the bool scalar type, as in JAX)
character, flexible, object_ = np.character, np.flexible, np.object_
ComplexWarning = np.exceptions.ComplexWarning
