"""What tracing sees and records, for user code: `typeof` (the abstract value a transformation
sees), `ensure_compile_time_eval` (run on concrete values while tracing) and `named_scope` (the
name stack, which lives in the staging trace)."""

from __future__ import annotations

import contextlib

from yax.core.avals import ShapedArray, aval_of_value
from yax.core.trace import eager_trace, use_trace
from yax.interpreters.staging import name_scope
from yax.runtime.array import is_concrete
from yax.runtime.mesh import get_abstract_mesh
from yax.runtime.named_sharding import NamedSharding, type_sharding
from yax.runtime.partition_spec import PartitionSpec

__all__ = ["typeof", "ensure_compile_time_eval", "named_scope"]


class TypeOf(ShapedArray):
    """`typeof`'s answer for a value whose type names no Explicit-axis sharding: the abstract
    value, and `.sharding`, the NamedSharding a transformation sees (as jax's: the abstract
    mesh and None for each dimension). Equal to, and hashed as, the plain abstract value."""

    __slots__ = ()

    def __init__(self, aval: ShapedArray, sharding: NamedSharding):
        super().__init__(aval.shape, aval.dtype, aval.weak_type)
        self.sharding = sharding

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and other.sharding in (None, self.sharding))

    __hash__ = ShapedArray.__hash__


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array, tracer or scalar: what a
    transformation sees of it, with its `.sharding` (over the abstract mesh; the spec names
    the Explicit mesh axes each dimension is sharded over, so `print(typeof(x))` shows
    `float32[8@X,4]`). Example: `yax.typeof(jnp.ones(3))` is `ShapedArray(float32[3])`; its
    `.sharding.spec` is `P(None,)`."""
    own = getattr(type(x), "typeof", None)
    if own is not None:  # an array kind with its own abstract value (typed PRNG keys)
        return own(x)
    aval = getattr(x, "aval", None)
    aval = aval if aval is not None else aval_of_value(x)
    if type(aval) is not ShapedArray:  # typed keys and other avals keep their own type
        return aval
    if aval.sharding is not None:
        return aval
    placed = x.sharding if is_concrete(x) else None
    if isinstance(placed, NamedSharding):  # an Array placed by a path that did not type it
        sharding = type_sharding(placed, aval.ndim, _current_view(placed.mesh))
        if sharding is not None:
            return aval.update(sharding=sharding)
        mesh = _current_view(placed.mesh)
    else:
        mesh = get_abstract_mesh()
    return TypeOf(aval, NamedSharding(mesh, PartitionSpec(*(None,) * aval.ndim)))


def _current_view(mesh):
    """A concrete mesh as the current abstract mesh sees it (auto_axes may have changed the
    types of its axes); the mesh's own abstract mesh otherwise."""
    current = get_abstract_mesh()
    if (current.axis_names, current.axis_sizes) == (mesh.axis_names, mesh.axis_sizes):
        return current
    return mesh.abstract_mesh


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
