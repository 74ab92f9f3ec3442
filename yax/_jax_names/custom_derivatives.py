"""`jax.custom_derivatives`: custom differentiation rules (yax/transforms/custom_derivatives.py)
under jax's module name."""

from __future__ import annotations

import numpy as np

from yax import tree_util
from yax._missing import module_getattr
from yax.dtypes import float0
from yax.interpreters.ad_util import zeros_like_aval
from yax.primitives.custom_derivatives import custom_jvp_call_p  # noqa: F401
from yax.transforms import custom_derivatives as _custom
from yax.transforms.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from yax.transforms.custom_gradient import closure_convert, custom_gradient  # noqa: F401
from yax.transforms.symbolic_zeros import SymbolicZero

_missing = module_getattr(__name__, "jax.custom_derivatives")


def zero_from_primal(val, symbolic_zeros: bool = False):
    """The zero tangent of each leaf of `val` (float0 zeros for integer leaves): a
    `SymbolicZero` with `symbolic_zeros`, else an array of zeros."""
    def zero(x):
        z = SymbolicZero.from_primal_value(x)
        if symbolic_zeros:
            return z
        if z.dtype == float0:  # no device array of float0: a NumPy one, as jax gives
            return np.zeros(z.shape, float0)
        return zeros_like_aval(z.aval)
    return tree_util.tree_map(zero, val)


def __getattr__(name: str):
    value = getattr(_custom, name, None)  # the rest of yax's custom-derivative names
    if value is None or name.startswith("_"):
        return _missing(name)
    return value
