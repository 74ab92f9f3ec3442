"""`jax.extend.core.Primitive` (also `jax.core.Primitive`): a yax primitive defined the JAX way.

    p = Primitive("multiply_add")
    p.def_impl(impl); p.def_abstract_eval(abstract_eval)
    mlir.register_lowering(p, rule); ad.primitive_jvps[p] = jvp; ...

It is a yax Primitive (yax/core/primitive.py) in every respect but two, both so that code
written for JAX behaves as it does there:
- a rule that was never given raises a plain `NotImplementedError` worded as JAX's (JAX's own
  tutorial tests for exactly that type), where yax's primitives raise NotImplementedRuleError;
- without `def_impl`, eager evaluation compiles the primitive alone through its abstract
  evaluation and lowering, as jit would; with neither rule it raises JAX's "Evaluation rule"
  error.
`isinstance(x, Primitive)` is true for every yax primitive (`yax.lax.exp_p` included), so
interpreters that test for primitives see all of them.
"""

from __future__ import annotations

from yax.core import primitive as _core
from yax.interpreters.eager import apply_primitive


def _raising(message: str):
    def rule(*args, **params):
        raise NotImplementedError(message)
    rule.missing = True  # has_rule() treats it as absent, as yax's own missing rules
    return rule


_MESSAGES = {
    "abstract_eval": "Abstract evaluation for '{}' not implemented",
    "jvp": "Differentiation rule for '{}' not implemented",
    "transpose": "Transpose rule (for reverse-mode differentiation) for '{}' not implemented",
    "batch": "Batching rule for '{}' not implemented",
}


class _AnyPrimitive(type):
    """isinstance() against the JAX-facing class accepts every yax primitive."""

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, _core.Primitive)

    def __subclasscheck__(cls, subclass) -> bool:
        return issubclass(subclass, _core.Primitive)


class Primitive(_core.Primitive, metaclass=_AnyPrimitive):
    """A primitive defined the JAX way (see the module docstring)."""

    def _clear(self, rule: str) -> None:
        if rule in _MESSAGES:
            setattr(self, rule, _raising(_MESSAGES[rule].format(self.name)))
        elif rule == "lower":
            setattr(self, rule, _missing_lowering(self.name))
        elif rule == "impl":
            self.impl = self._compiled_impl
        else:
            super()._clear(rule)

    def _compiled_impl(self, *arrays, **params):
        if not (_core.has_rule(self, "abstract_eval") and _core.has_rule(self, "lower")):
            raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")
        return apply_primitive(self, list(arrays), params)


def _missing_lowering(name: str):
    def rule(ctx, *operands, **params):
        raise NotImplementedError(f"MLIR translation rule for primitive '{name}' not found "
                                  f"for platform {getattr(ctx, 'platform', 'cpu')}")
    rule.missing = True
    return rule
