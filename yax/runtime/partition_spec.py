"""`PartitionSpec` (`yax.P`): how each dimension of an array maps onto mesh axes."""

from __future__ import annotations


class _Unconstrained:
    """`P.UNCONSTRAINED`: the compiler may choose this dimension's sharding."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_Unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _normalize_entry(entry):
    """None, a mesh-axis name, a tuple of names (major first) or UNCONSTRAINED."""
    if entry is None or entry is UNCONSTRAINED or isinstance(entry, str):
        return entry
    if isinstance(entry, (tuple, list)):
        names = tuple(entry)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"a PartitionSpec entry must be None, an axis name or a tuple of "
                            f"axis names; got {entry!r}")
        if not names:
            return None
        return names[0] if len(names) == 1 else names
    raise TypeError(f"a PartitionSpec entry must be None, an axis name or a tuple of axis "
                    f"names; got {entry!r} of type {type(entry).__name__}")


class PartitionSpec(tuple):
    """One entry per array dimension: None (not sharded), a mesh-axis name, or a tuple of names
    (sharded over their product, the first name major). Missing trailing entries mean None.

    Equality ignores trailing Nones and spells one-name tuples as the name, so
    `P("x", None) == P("x") == P(("x",))`.

    Example:
      >>> P("data", None)      # rows split over mesh axis "data", columns whole
      >>> P(("x", "y"))        # rows split over both axes of a 2-D mesh
    """

    UNCONSTRAINED = UNCONSTRAINED

    def __new__(cls, *partitions):
        return super().__new__(cls, tuple(_normalize_entry(p) for p in partitions))

    def _key(self) -> tuple:
        parts = list(self)
        while parts and parts[-1] is None:
            parts.pop()
        return tuple(parts)

    def __eq__(self, other):
        if isinstance(other, PartitionSpec):
            return self._key() == other._key()
        if isinstance(other, tuple):
            return self._key() == PartitionSpec(*other)._key()
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(("PartitionSpec", self._key()))

    def __repr__(self):
        return "PartitionSpec(" + ", ".join(repr(p) for p in self) + ")"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))

    def axis_names(self) -> tuple:
        """Every mesh-axis name the spec uses, in order."""
        out = []
        for p in self:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, tuple):
                out.extend(p)
        return tuple(out)


P = PartitionSpec
