"""`yax.stages` (as `jax.stages`): the stages of a jitted function.

    traced = yax.jit(f).trace(x)       # a Traced: `.jaxpr`, `.out_info`, `.args_info`, `.lower()`
    lowered = yax.jit(f).lower(x)      # a Lowered: `.as_text()`, `.jaxpr`, `.compile()`
    compiled = lowered.compile()       # a Compiled: call it with arguments of those types
"""

from __future__ import annotations

from typing import Any

from yax.transforms.jit import Compiled, JitFunction, Lowered
from yax.transforms.traced import ArgInfo, Traced

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

Wrapped = JitFunction  # what `jit` returns
CompilerOptions = dict[str, Any]  # XLA options by name (`jit(..., compiler_options=...)`)
