"""`yax.typing` (as `jax.typing`): type annotations for array-like values and dtypes.

    def f(x: ArrayLike, dtype: DTypeLike | None = None) -> yax.Array: ...

They are for static checkers and documentation; nothing checks them at run time.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from yax.core.trace import Tracer
from yax.runtime.array import Array

__all__ = ["ArrayLike", "DTypeLike", "DType"]

DType = np.dtype
# what yax.numpy functions accept as an array: yax arrays and tracers, NumPy arrays and
# scalars, and Python scalars
ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]
# what names a dtype: a NumPy dtype, a scalar type (jnp.float32, float), or its name
DTypeLike = Union[str, type[Any], np.dtype]
