"""A jax-style rule registry (`ad.primitive_jvps[p] = rule`) that writes into yax's rule slots.

jax keeps one dictionary per transformation, keyed by primitive; yax keeps the rules on the
primitive itself (yax/core/primitive.py). A `RuleRegistry` is the dictionary view of one slot:
storing a rule adapts it from jax's calling convention to yax's (single-result rules return
one value in jax, a list in yax) and sets it on the primitive, so the yax interpreters use it.
Reading gives back the rule as it was registered.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

from yax.core.primitive import Primitive, has_rule


class RuleRegistry(MutableMapping):
    """The rules of slot `slot` of every primitive, as a mapping primitive -> jax-style rule."""

    def __init__(self, slot: str, adapt: Callable[[Primitive, Callable], Callable]):
        self._slot, self._adapt = slot, adapt
        self._given: dict[Primitive, Callable] = {}

    def __setitem__(self, primitive: Primitive, rule: Callable) -> None:
        if not isinstance(primitive, Primitive):
            raise TypeError(f"rule registries are keyed by yax Primitives, got {primitive!r}")
        self._given[primitive] = rule
        primitive.define(**{self._slot: self._adapt(primitive, rule)})

    def __getitem__(self, primitive: Primitive) -> Callable:
        if primitive in self._given:
            return self._given[primitive]
        if isinstance(primitive, Primitive) and has_rule(primitive, self._slot):
            return getattr(primitive, self._slot)  # a yax rule, in yax's convention
        raise KeyError(primitive)

    def __delitem__(self, primitive: Primitive) -> None:
        del self._given[primitive]
        primitive._clear(self._slot)

    def __contains__(self, primitive) -> bool:
        return primitive in self._given or (
            isinstance(primitive, Primitive) and has_rule(primitive, self._slot))

    def __iter__(self):
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)


def as_list(primitive: Primitive, value) -> list:
    """A jax rule's result for `primitive` as yax's list of results."""
    return list(value) if primitive.multiple_results else [value]
