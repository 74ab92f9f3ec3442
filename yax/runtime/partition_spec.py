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

    A spec keeps the length it was given, as JAX's does: `P("x", None)` and `P("x")` place an
    array the same way (`NamedSharding.is_equivalent_to` says so) but are different specs, and
    a one-name tuple is spelled as the name, so `P(("x",)) == P("x")`. It prints as JAX 0.10
    prints it, `P('x', None)`.

    Example:
      >>> P("data", None)      # rows split over mesh axis "data", columns whole
      >>> P(("x", "y"))        # rows split over both axes of a 2-D mesh
    """

    UNCONSTRAINED = UNCONSTRAINED

    # `unreduced={'Y'}`: each device along mesh axis Y holds a summand of the value (the sum
    # over Y is the array); `reduced`: the value is replicated over those axes, and their
    # gradients are unreduced (jax's explicit-sharding mode). Both are frozensets of names.
    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        self = super().__new__(cls, tuple(_normalize_entry(p) for p in partitions))
        self.unreduced = _axis_set(unreduced, "unreduced")
        self.reduced = _axis_set(reduced, "reduced")
        twice = (self.unreduced & self.reduced) | (
            set(self.axis_names()) & (self.unreduced | self.reduced))
        if twice:
            raise ValueError(f"PartitionSpec: mesh axes {sorted(twice)} appear more than once "
                             f"among the dimensions, unreduced and reduced")
        return self

    # Equal only to a PartitionSpec with the same entries (JAX's rule): a plain tuple is not a
    # spec, and ignoring trailing Nones here once let caches hand one spec's sharding to the
    # other, so a program asking for P('model', None) got P('model') back.
    def __eq__(self, other):
        if isinstance(other, PartitionSpec):
            return (tuple.__eq__(self, other) and self.unreduced == other.unreduced
                    and self.reduced == other.reduced)
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("PartitionSpec", tuple(self), self.unreduced, self.reduced))

    def __repr__(self):
        extra = "".join(f", {k}={{{', '.join(repr(n) for n in sorted(v))}}}" for k, v in
                        (("unreduced", self.unreduced), ("reduced", self.reduced)) if v)
        if not extra:
            return "P" + tuple.__repr__(self)
        body = ", ".join(repr(e) for e in self)
        return f"P({body}{extra})" if body else f"P({extra[2:]})"

    __str__ = __repr__

    def __add__(self, other):  # P("x") + (None,) is a spec, as in JAX
        return PartitionSpec(*self, *other, unreduced=self.unreduced, reduced=self.reduced)

    def __radd__(self, other):
        return PartitionSpec(*other, *self, unreduced=self.unreduced, reduced=self.reduced)

    def __reduce__(self):
        if self.unreduced or self.reduced:
            return (_rebuild, (tuple(self), self.unreduced, self.reduced))
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


def _axis_set(names, what: str) -> frozenset:
    if isinstance(names, str):
        names = (names,)
    names = frozenset(names)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"PartitionSpec's {what}= must be a set of mesh axis names, got {names}")
    return names


def _rebuild(entries, unreduced, reduced) -> PartitionSpec:
    return PartitionSpec(*entries, unreduced=unreduced, reduced=reduced)


P = PartitionSpec
