"""`jax.experimental.hijax`: the declarations flax.nnx makes at import time, without jax's
"high-level types" machinery behind them.

flax.nnx defines its optional hijax variables (used only with `flax_hijax_variable=True`, off by
default) by subclassing these classes and registering them. yax has no hijax: the classes can
be defined and registered, and binding a `HiPrimitive` raises an error saying so.
"""

from __future__ import annotations

from yax import errors
from yax._jax_names.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal  # noqa: F401
from yax.core.avals import ShapedArray  # noqa: F401  (jax re-exports jax.core.ShapedArray here)
from yax.core.avals import ShapedArray as AbstractValue  # noqa: F401

__all__ = ["AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive", "HiType",
           "MutableHiType", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]

_MESSAGE = ("jax.experimental.hijax (high-level types, e.g. flax.nnx with "
            "flax_hijax_variable=True) is not supported by yax; see docs/ecosystem.md")


class HiType:
    """Base of a high-level abstract type."""


class MutableHiType(HiType):
    """Base of a mutable high-level abstract type."""


class AvalQDD:
    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD(AvalQDD):
    pass


class HiPrimitive:
    """Base of a high-level primitive: can be declared, not applied."""

    multiple_results = False

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args, **params):
        raise errors.NotImplementedRuleError(f"{_MESSAGE} (primitive `{self.name}`)")


class aval_method:
    """Marks a method of a value type as also available on its abstract type."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, obj, objtype=None):
        return self.fun if obj is None else self.fun.__get__(obj, objtype)


class aval_property(property):
    """Marks a property of a value type as also available on its abstract type."""


class _EffectTypes(set):
    def add_type(self, effect_type: type) -> None:
        self.add(effect_type)


control_flow_allowed_effects = _EffectTypes()
_hitypes: dict = {}


def register_hitype(value_type: type, to_abstract) -> None:
    """Record a high-level value type (yax does not trace with it)."""
    _hitypes[value_type] = to_abstract
