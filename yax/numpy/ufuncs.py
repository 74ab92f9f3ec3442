"""yax.numpy elementwise functions (NumPy's ufuncs) on top of yax.lax.

Every function promotes its arguments with JAX's lattice (`_promote`), broadcasts them
NumPy-style, and applies lax operations. Transcendental functions send integer and bool inputs
to the default float type; integer division and remainder follow NumPy's floor semantics.

They live in three modules by kind (ufunc_arithmetic, ufunc_comparisons, ufunc_floating, built
with _ufunc_builders); this module gathers them as `yax.numpy.ufuncs`.
"""

from __future__ import annotations

from yax.numpy import ufunc_arithmetic, ufunc_comparisons, ufunc_floating
from yax.numpy.ufunc_arithmetic import *  # noqa: F401,F403
from yax.numpy.ufunc_comparisons import *  # noqa: F401,F403
from yax.numpy.ufunc_floating import *  # noqa: F401,F403

__all__ = [*ufunc_arithmetic.__all__, *ufunc_comparisons.__all__, *ufunc_floating.__all__]
