"""Argument canonicalisation shared by the yax.lax wrappers."""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.primitives.sharding_constraint import sharding_constraint_p
from yax.runtime.mesh import AbstractMesh, Mesh, current_mesh, get_abstract_mesh
from yax.runtime.named_sharding import (
    NamedSharding,
    resolve_spec,
    result_sharding,
    type_sharding,
)
from yax.runtime.partition_spec import PartitionSpec
from yax.runtime.values import canonical_scalar


def out_sharding_of(name: str, out_sharding):
    """The NamedSharding `out_sharding=` asks for (a PartitionSpec names axes of the current
    abstract mesh, `yax.set_mesh` / `use_abstract_mesh`), or None when it places nothing: None,
    or a spec sharding no dimension with no mesh set (what flax passes: the `typeof(x).sharding`
    of an unsharded `x`)."""
    if out_sharding is None:
        return None
    spec = getattr(out_sharding, "spec", out_sharding)
    if getattr(spec, "unreduced", None) or getattr(spec, "reduced", None):
        raise NotImplementedError(
            f"{name}: out_sharding={out_sharding!r} asks for an unreduced (or reduced) result, "
            f"which yax computes only with device_put; leave unreduced= out to get the sum")
    nothing = isinstance(spec, tuple) and all(e is None for e in spec) and not getattr(
        spec, "unreduced", None)
    if isinstance(out_sharding, NamedSharding):
        if nothing and out_sharding.mesh.empty:
            return None
        return _concrete(out_sharding)
    if nothing and get_abstract_mesh().empty:
        return None
    return _concrete(resolve_spec(out_sharding, name))


def _concrete(sharding: NamedSharding) -> NamedSharding:
    """Over the current concrete mesh when it is the abstract mesh's (so jit places the program
    on its devices), with the abstract mesh's axis types (auto_axes may have changed them)."""
    mesh = sharding.mesh
    if isinstance(mesh, AbstractMesh):
        return NamedSharding(concrete_mesh(mesh), sharding.spec)
    return sharding


_meshes: dict = {}


def concrete_mesh(mesh: AbstractMesh):
    """The current concrete mesh with `mesh`'s axis types, or `mesh` itself when the current
    mesh is not one of its shape."""
    current = current_mesh()
    if current is None or (current.axis_names, current.axis_sizes) != (
            mesh.axis_names, mesh.axis_sizes):
        return mesh
    if current.axis_types == mesh.axis_types:
        return current
    key = (current, mesh.axis_types)
    hit = _meshes.get(key)
    if hit is None:
        if len(_meshes) > 64:
            _meshes.clear()
        hit = _meshes[key] = Mesh(current.devices, current.axis_names,
                                  axis_types=mesh.axis_types)
    return hit


@contextlib.contextmanager
def typed_result(primitive: str, sharding, ndim: int | None = None):
    """Inside, the `primitive` bound on sharded operands has its result typed `sharding`
    (`out_sharding=` of an operation whose own rule may be ambiguous, such as a dot over
    sharded contracting dimensions); nothing when `sharding` is None. Without `ndim` the
    spec's entries apply to results of at least that rank (missing entries: None)."""
    if sharding is None:
        yield
        return
    ndim = len(sharding.spec) if ndim is None else ndim
    typed = type_sharding(sharding, ndim, _types_of(sharding.mesh))
    dims = (None,) * ndim if typed is None else tuple(typed.spec)
    unreduced = frozenset() if typed is None else typed.spec.unreduced
    with result_sharding(primitive, dims, unreduced):
        yield


def _types_of(mesh):
    current = get_abstract_mesh()
    if (current.axis_names, current.axis_sizes) == (mesh.axis_names, mesh.axis_sizes):
        return current
    return mesh.abstract_mesh


def with_out_sharding(x, sharding):
    """`x` placed as `sharding` (from out_sharding_of; None: unchanged) with a sharding
    constraint: XLA's partitioner moves the data, and the result's type names the sharding."""
    if sharding is None:
        return x
    spec, ndim = sharding.spec, len(getattr(x, "shape", ()))
    if len(spec) < ndim:  # as jax: the result's spec has an entry per dimension
        sharding = NamedSharding(sharding.mesh, PartitionSpec(
            *spec, *(None,) * (ndim - len(spec)), unreduced=spec.unreduced,
            reduced=spec.reduced))
    return sharding_constraint_p.bind(x, sharding=sharding, mesh=sharding.mesh)


def out_sharding_param(name: str, primitive: str | None = None):
    """Give the decorated function an `out_sharding=` keyword realised by `with_out_sharding`
    on each result (and, with `primitive`, typing that primitive's result inside as
    `typed_result` does: reshape's rule may be ambiguous where out_sharding decides)."""
    def wrap(fn):
        @functools.wraps(fn)
        def wrapped(*args, out_sharding=None, **kwargs):
            sharding = out_sharding_of(name, out_sharding)
            if sharding is None:
                return fn(*args, **kwargs)
            with typed_result(primitive, sharding) if primitive else contextlib.nullcontext():
                out = fn(*args, **kwargs)
            return tree_util.tree_map(lambda x: with_out_sharding(x, sharding), out)
        return wrapped
    return wrap


def is_python_scalar(x) -> bool:
    return dtypes.is_python_scalar(x)


def python_scalar_as(x, dtype, name: str) -> TypedScalar:
    """Give a Python scalar the dtype of the array it meets (weakly typed, as JAX does)."""
    dtype = np.dtype(dtype)
    if isinstance(x, complex) and not dtypes.is_complex(dtype):
        raise errors.DTypeError(f"{name}: a complex Python scalar {x} cannot meet a {dtype} array")
    if isinstance(x, float) and not dtypes.is_inexact(dtype):
        raise errors.DTypeError(
            f"{name}: a float Python scalar {x} cannot meet an integer/bool {dtype} array in lax "
            f"(lax does not promote); convert the array first or use the yax.numpy function")
    if isinstance(x, int) and not isinstance(x, bool) and dtypes.is_int(dtype):
        info = dtypes.iinfo(dtype)  # knows the sub-byte ints (int4, uint2, ...) too
        if not info.min <= x <= info.max:
            raise errors.DTypeError(f"{name}: Python int {x} does not fit in {dtype}")
    return TypedScalar.of(x, dtype, weak_type=True)


def scalars_to_arrays(name: str, args) -> list:
    """Python scalars among `args` take the dtype of the first array operand."""
    ref = next((a for a in args if not is_python_scalar(a)), None)
    if ref is None:
        return [canonical_scalar(a) for a in args]
    ref_dtype = _dtype_of(ref)
    return [python_scalar_as(a, ref_dtype, name) if is_python_scalar(a) else a for a in args]


def _dtype_of(x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype
    return dtypes.canonicalize(np.result_type(x))


def describe_function(fun) -> str:
    """`name (file:line)` of a user function, for errors about its outputs."""
    name = getattr(fun, "__qualname__", None) or repr(fun)
    code = getattr(fun, "__code__", None)
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code else name
