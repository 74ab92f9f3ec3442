"""What tracing sees and records, for user code: `typeof` (the abstract value a transformation
sees), `ensure_compile_time_eval` (run on concrete values while tracing) and `named_scope` (the
name stack, which lives in the staging trace)."""

from __future__ import annotations

import contextlib

from yax.core.avals import ShapedArray, aval_of_value
from yax.core.trace import eager_trace, use_trace
from yax.interpreters.staging import name_scope
from yax.runtime.array import is_concrete
from yax.runtime.mesh import AxisType, Mesh, current_mesh
from yax.runtime.named_sharding import NamedSharding
from yax.runtime.partition_spec import PartitionSpec

__all__ = ["typeof", "ensure_compile_time_eval", "named_scope"]


class TypeOf(ShapedArray):
    """`typeof`'s answer: the abstract value, and `.sharding`, the NamedSharding a
    transformation sees (as jax's: a mesh and a spec naming only Explicit mesh axes, so None
    for each dimension on an automatic mesh). Equal to, and hashed as, the plain abstract
    value."""

    __slots__ = ("sharding",)

    def __init__(self, aval: ShapedArray, sharding: NamedSharding):
        super().__init__(aval.shape, aval.dtype, aval.weak_type)
        self.sharding = sharding


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array, tracer or scalar: what a
    transformation sees of it, with its `.sharding`. Example: `yax.typeof(jnp.ones(3))` is
    `ShapedArray(float32[3])`; its `.sharding.spec` is `P(None)`."""
    own = getattr(type(x), "typeof", None)
    if own is not None:  # an array kind with its own abstract value (typed PRNG keys)
        return own(x)
    aval = getattr(x, "aval", None)
    aval = aval if aval is not None else aval_of_value(x)
    if type(aval) is not ShapedArray:  # typed keys and other avals keep their own type
        return aval
    return TypeOf(aval, _abstract_sharding(x, aval.ndim))


def _abstract_sharding(x, ndim: int) -> NamedSharding:
    """The sharding of `x` as its abstract value sees it: the array's mesh (a tracer's: the
    current mesh; none: the empty mesh) and, per dimension, the Explicit axes sharding it."""
    placed = x.sharding if is_concrete(x) else None
    if isinstance(placed, NamedSharding):
        mesh = placed.mesh
        explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types)
                    if t is AxisType.Explicit}
        entries = tuple(placed.spec) + (None,) * (ndim - len(placed.spec))
        spec = tuple(_keep(entry, explicit) for entry in entries[:ndim])
        return NamedSharding(mesh, PartitionSpec(*spec))
    mesh = current_mesh() or Mesh((), ())
    return NamedSharding(mesh, PartitionSpec(*(None,) * ndim))


def _keep(entry, explicit: set):
    names = entry if isinstance(entry, tuple) else (entry,)
    kept = tuple(n for n in names if n in explicit)
    return None if not kept else kept[0] if len(kept) == 1 else kept


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside this context, operations on concrete values run eagerly even while a function is
    being traced by `jit` (so `jnp.sin(3.0)` is a concrete Array usable in Python control flow).
    Operations on traced values inside it are an error (move them out of the context)."""
    with use_trace(eager_trace()):
        yield


def named_scope(name: str):
    """A context manager naming the operations staged inside it (as `jax.named_scope`): the
    name joins each equation's source info (`eqn.source.scope`) and appears in the locations of
    the lowered StableHLO (`jit(f).lower(x).as_text()`). Scopes nest as `outer/inner`."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope needs a str name, got {name!r}")
    return name_scope(name)
