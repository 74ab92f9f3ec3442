"""`SymbolicZero`: what a custom JVP rule defined with `defjvp(rule, symbolic_zeros=True)`
receives as the tangent of an input that is not being differentiated (and may return for an
output whose tangent is zero), as `jax.custom_derivatives.SymbolicZero`; and what a custom VJP's
`bwd` defined with `defvjp(fwd, bwd, symbolic_zeros=True)` receives as a zero cotangent (and may
return for an input's). Its `fwd` then receives each argument leaf as a `CustomVJPPrimal`.

It carries only the tangent's abstract value (`aval`, `shape`, `dtype`; float0 for integer
inputs) and supports no arithmetic: a rule tests for it with `isinstance` and skips the term.
"""

from __future__ import annotations

import numpy as np

from yax.core import dtypes
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.trace import Tracer
from yax.interpreters.ad_util import Zero, float0, instantiate

__all__ = ["CustomVJPPrimal", "SymbolicZero"]


class SymbolicZero:
    """A zero tangent known before any value is computed: `aval`, `shape`, `dtype`."""

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    @classmethod
    def from_primal_value(cls, value) -> SymbolicZero:
        """The symbolic zero tangent of a primal `value` (float0 for an integer value)."""
        aval = value.aval if isinstance(value, Tracer) else aval_of_value(value)
        return cls(_tangent_type(aval))

    def __repr__(self):
        return "SymbolicZero"


class CustomVJPPrimal:
    """An argument leaf as `fwd` of a symbolic-zeros custom_vjp sees it: its `value`, and
    whether it is `perturbed` (being differentiated; when not, its cotangent is not needed)."""

    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed: bool):
        self.value, self.perturbed = value, bool(perturbed)

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _tangent_type(aval: ShapedArray) -> ShapedArray:
    if not dtypes.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, float0)
    return aval


def to_user(t, primal_aval: ShapedArray):
    """A tangent handed to a symbolic-zeros rule: a Zero becomes a SymbolicZero."""
    if type(t) is Zero:
        return SymbolicZero(_tangent_type(primal_aval))
    return t


def from_user(t, out_aval: ShapedArray):
    """A tangent a symbolic-zeros rule returned: a SymbolicZero becomes zeros of the output's
    tangent type (None leaves stay for the output checks to report)."""
    if not isinstance(t, SymbolicZero):
        return t
    if not dtypes.is_inexact(out_aval.dtype):
        return np.zeros(out_aval.shape, float0)
    return instantiate(Zero(ShapedArray(out_aval.shape, out_aval.dtype)))
