"""`auto_axes` / `explicit_axes`: run a function with some mesh axes switched to another type.

Under `auto_axes` the named axes (default: all) are Auto, so shardings over them leave the
values' types and the compiler chooses them; the caller gives the result's sharding with
`out_sharding=`. `explicit_axes` is the dual: the axes become Explicit inside and the arguments'
shardings (`in_sharding=`) are their types there; the results leave with those axes untyped.

    @auto_axes
    def add(x, y):           # x: i32[4@X,4], y: i32[4,4@X] would be an error under Explicit X
        return x + y
    add(x, y, out_sharding=P("X", None))      # i32[4@X,4]

The switch is a cast of each value's type: a sharding constraint that keeps the value where it is
(over the mesh with the new axis types) on the way in, and one placing it as asked on the way out.
"""

from __future__ import annotations

import functools

from yax import tree_util
from yax.lax._util import concrete_mesh, out_sharding_of, with_out_sharding
from yax.runtime.array import Array, is_concrete
from yax.runtime.mesh import AbstractMesh, AxisType, use_abstract_mesh
from yax.runtime.mesh import get_abstract_mesh as _abstract_mesh
from yax.runtime.named_sharding import NamedSharding, type_sharding
from yax.runtime.partition_spec import PartitionSpec

__all__ = ["auto_axes", "explicit_axes"]


def auto_axes(fun=None, *, axes=None, out_sharding=None):
    """`fun` run with mesh axes `axes` (default: every axis) switched to Auto.

    Args:
      fun: the function (or use `@auto_axes(axes=..., out_sharding=...)`).
      axes: a mesh axis name or names to switch; None: all of them.
      out_sharding: the results' sharding (PartitionSpecs over the current mesh, or
        NamedShardings, a pytree prefix of the results); the call may give it instead, as
        `f(*args, out_sharding=...)`.

    Returns:
      the function, whose results are placed (and typed) as `out_sharding` says.
    """
    if fun is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(fun)
    def wrapped(*args, out_sharding=out_sharding, **kwargs):
        outer = _checked_mesh("auto_axes")
        if out_sharding is None:
            raise TypeError("auto_axes: the results' sharding is not given; pass "
                            "out_sharding= to the decorator or to the call")
        inner = outer.update_axis_types({a: AxisType.Auto for a in _names(axes, outer)})
        args, kwargs = tree_util.tree_map(lambda x: _cast(x, inner, None), (args, kwargs))
        with use_abstract_mesh(inner):
            out = fun(*args, **kwargs)
        return _place(out, out_sharding, "auto_axes")
    return wrapped


def explicit_axes(fun=None, *, axes=None, in_sharding=None):
    """`fun` run with mesh axes `axes` (default: every axis) switched to Explicit; the
    arguments enter typed as `in_sharding` says (a pytree prefix of the positional arguments;
    the call may give it, as `f(*args, in_sharding=...)`), the results leave with those axes
    untyped again."""
    if fun is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(fun)
    def wrapped(*args, in_sharding=in_sharding, **kwargs):
        outer = _checked_mesh("explicit_axes")
        if in_sharding is None:
            raise TypeError("explicit_axes: the arguments' sharding is not given; pass "
                            "in_sharding= to the decorator or to the call")
        inner = outer.update_axis_types({a: AxisType.Explicit for a in _names(axes, outer)})
        with use_abstract_mesh(inner):
            args = _place(args, _prefix(in_sharding, args), "explicit_axes")
            out = fun(*args, **kwargs)
        return tree_util.tree_map(lambda x: _cast(x, outer, None), out)
    return wrapped


def _checked_mesh(what: str) -> AbstractMesh:
    mesh = _abstract_mesh()
    if mesh.empty:
        raise ValueError(f"{what} needs a current mesh; set one with yax.set_mesh(mesh)")
    if AxisType.Manual in mesh.axis_types:
        raise ValueError(f"{what} cannot switch Manual mesh axes (inside shard_map): {mesh}")
    return mesh


def _names(axes, mesh) -> tuple:
    if axes is None:
        return mesh.axis_names
    return (axes,) if isinstance(axes, str) else tuple(axes)


def _prefix(sharding, args):
    """`in_sharding` for the tuple of positional arguments (one spec: for the only one)."""
    if isinstance(sharding, (PartitionSpec, NamedSharding)):
        return (sharding,) * len(args)
    return tuple(sharding) if isinstance(sharding, list) else sharding


def _place(tree, shardings, what: str):
    """Each leaf placed as its (prefix-broadcast) sharding says, typed over the current mesh."""
    is_leaf = lambda s: isinstance(s, (PartitionSpec, NamedSharding)) or s is None  # noqa: E731
    if is_leaf(shardings):
        s = out_sharding_of(what, shardings)
        return tree_util.tree_map(lambda x: with_out_sharding(x, s), tree)
    return tree_util.tree_map(lambda s, sub: _place(sub, s, what), shardings, tree,
                              is_leaf=is_leaf)


def _cast(x, mesh: AbstractMesh, _):
    """`x` with the type it has over `mesh` (the same placement, other axis types)."""
    aval = getattr(x, "aval", None)
    typed = getattr(aval, "sharding", None)
    if typed is None:  # no Explicit-axis sharding in its type: nothing to change
        return x
    if is_concrete(x):  # a concrete Array keeps its buffer; only its type changes
        return Array(x._buf, aval.update(sharding=type_sharding(
            NamedSharding(mesh, typed.spec), aval.ndim)))
    return with_out_sharding(x, NamedSharding(concrete_mesh(mesh), typed.spec))
