"""Argument canonicalisation shared by the yax.lax wrappers."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.runtime.values import canonical_scalar


def check_no_out_sharding(name: str, out_sharding) -> None:
    """`out_sharding` shards a result over explicit mesh axes (jax's explicit-sharding mode),
    which yax's operations do not do. A value that shards no dimension places nothing and is
    accepted: None, or a sharding / PartitionSpec whose entries are all None (what flax passes:
    `jax.typeof(x).sharding` of an unsharded `x`). A real sharding is refused, not ignored."""
    spec = getattr(out_sharding, "spec", out_sharding)
    if out_sharding is None or (isinstance(spec, tuple) and all(e is None for e in spec)):
        return
    raise NotImplementedError(
        f"{name}: out_sharding={out_sharding!r} shards the result over mesh axes, which yax's "
        f"{name} does not do; pass None, or place the result with yax.device_put / "
        f"jit's out_shardings")


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
