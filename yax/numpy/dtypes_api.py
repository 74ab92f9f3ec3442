"""yax.numpy dtype API: scalar type objects (`jnp.float32`), `result_type`, `promote_types`,
`can_cast`, `issubdtype`, `finfo`/`iinfo` and the NumPy constants.

`jnp.float32` is a class, as in JAX: `np.dtype(jnp.float32)` is float32 (through its `dtype`
attribute) and calling it, `jnp.float32(3)`, makes a 0-d Array of that dtype.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from yax.core import dtypes
from yax.numpy.creation import asarray

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "float_", "int_", "uint", "complex_", "double", "single", "cdouble", "csingle",
    "generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger",
    "complexfloating", "dtype", "result_type", "promote_types", "can_cast", "issubdtype",
    "isdtype", "finfo", "iinfo", "inf", "nan", "pi", "e", "euler_gamma", "newaxis",
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "int4", "uint4", "int2", "uint2", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
]


class _ScalarMeta(type):
    """Metaclass of the scalar type objects: calling one makes a 0-d (or N-d) Array."""

    def __call__(cls, x=0):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __eq__(cls, other):
        # as jax's: equal to itself, its NumPy scalar type and its np.dtype, not to a string
        return (cls is other or cls.dtype.type is other
                or (isinstance(other, np.dtype) and other == cls.dtype))

    def __ne__(cls, other):
        # `cls.__eq__` would find the *instances'* `object.__eq__` on the class itself
        return not _ScalarMeta.__eq__(cls, other)

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __repr__(cls):
        return f"<class 'yax.numpy.{cls.dtype.name}'>"


def _scalar_type(np_dtype) -> type:
    np_dtype = np.dtype(np_dtype)
    doc = (f"The {np_dtype.name} scalar type: `jnp.{np_dtype.name}(x)` makes an Array of dtype "
           f"{np_dtype.name} (0-d for a scalar), and `np.dtype(jnp.{np_dtype.name})` is its "
           f"NumPy dtype.")
    return _ScalarMeta(np_dtype.name, (object,), {"dtype": np_dtype, "__doc__": doc})


bool_ = _scalar_type(dtypes.bool_)
int8, int16, int32, int64 = (_scalar_type(d) for d in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_scalar_type(d)
                                 for d in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, bfloat16 = _scalar_type(np.float16), _scalar_type(dtypes.bfloat16)
float32, float64 = _scalar_type(np.float32), _scalar_type(np.float64)
complex64, complex128 = _scalar_type(np.complex64), _scalar_type(np.complex128)
# the 8-bit floats of ml_dtypes (storage and low-precision matmul formats, as jax's)
float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn = (
    _scalar_type(getattr(ml_dtypes, n))
    for n in ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn"))
float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu = (
    _scalar_type(getattr(ml_dtypes, n))
    for n in ("float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))
# the narrow storage types (XLA's s4/u4/s2/u2/f4E2M1FN/f6*): they promote only with bool and
# Python scalars, as in JAX
int4, uint4, int2, uint2 = (_scalar_type(d) for d in dtypes.NARROW_INTS)
float4_e2m1fn, float6_e2m3fn, float6_e3m2fn = (_scalar_type(d) for d in dtypes.SUB_BYTE_FLOATS)
# NumPy's default-width names map to the 64-bit types (canonicalised to 32 bits without x64).
float_, int_, uint, complex_ = float64, int64, uint64, complex128
double, single, cdouble, csingle = float64, float32, complex128, complex64

generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
complexfloating = np.complexfloating

dtype = np.dtype  # as in JAX: `jnp.dtype` is NumPy's dtype class

inf, nan, pi, e, euler_gamma = np.inf, np.nan, np.pi, np.e, np.euler_gamma
newaxis = None

_PY_TYPES = (bool, int, float, complex)


def _dtype_and_weak(x) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a value or dtype-like; Python scalars and their types are weak."""
    if x is None:
        raise TypeError("result_type: None is not a dtype or array")
    if (isinstance(x, _PY_TYPES) and not isinstance(x, np.generic)) or (
            isinstance(x, type) and x in _PY_TYPES):
        kind = x if isinstance(x, type) else type(x)
        return dtypes.dtype(kind), kind is not bool
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype, False
    return np.dtype(x), False


def result_type(*args) -> np.dtype:
    """The dtype yax.numpy gives an operation on `args` (arrays, scalars or dtypes).

    Follows JAX's promotion lattice: Python scalars are weakly typed and give way to the dtype
    of array operands, e.g. `result_type(jnp.float16, 2.0)` is float16. The result is canonical
    (64-bit types narrow to 32 bits unless x64 is enabled).

    Example:
      >>> jnp.result_type(jnp.int8, jnp.uint8)
      dtype('int16')
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    return dtypes.result_type(*(_dtype_and_weak(a) for a in args))[0]


def promote_types(a, b) -> np.dtype:
    """The smallest dtype both `a` and `b` promote to (JAX's lattice; not canonicalised).

    Example:
      >>> jnp.promote_types(jnp.int8, jnp.uint8)
      dtype('int16')
    """
    a, b = np.dtype(a), np.dtype(b)
    return dtypes._join((a, b))


def can_cast(from_, to, casting: str = "safe") -> bool:
    """NumPy's `can_cast` on dtypes (arrays are not accepted, as in NumPy 2)."""
    if hasattr(from_, "aval"):
        raise TypeError("can_cast: pass a dtype (x.dtype), not an array")
    return bool(np.can_cast(np.dtype(from_), np.dtype(to), casting=casting))


def _is_abstract(x) -> bool:
    return isinstance(x, type) and issubclass(x, np.generic) and x in (
        np.generic, np.number, np.inexact, np.floating, np.integer, np.signedinteger,
        np.unsignedinteger, np.complexfloating, np.bool_)


_ML_STAND_INS = {
    dtypes.bfloat16: np.float16, **{d: np.float16 for d in dtypes.NARROW_FLOATS},
    dtypes.int4: np.int8, dtypes.int2: np.int8, dtypes.uint4: np.uint8, dtypes.uint2: np.uint8,
}


def issubdtype(arg1, arg2) -> bool:
    """NumPy's `issubdtype`, also placing bfloat16 under `floating`.

    Example:
      >>> jnp.issubdtype(jnp.bfloat16, jnp.floating)
      True
    """
    if getattr(arg1, "extended", False) is True:  # a typed key's dtype (yax.random.key)
        return arg1 == arg2 or (isinstance(arg2, type) and issubclass(arg1.type, arg2))
    a = np.dtype(arg1)
    if _is_abstract(arg2) and arg2 is not np.bool_:
        stand_in = _ML_STAND_INS.get(a)
        if stand_in is not None:  # ml_dtypes' types sit where a NumPy type of their kind does
            return issubclass(stand_in, arg2)
        return np.issubdtype(a, arg2)
    try:
        return a == np.dtype(arg2)
    except TypeError:  # a category NumPy has no dtype for (yax.dtypes.prng_key): not a subdtype
        return False


_ISDTYPE_KINDS = {
    "bool": dtypes.is_bool, "signed integer": dtypes.is_signed_int,
    "unsigned integer": dtypes.is_unsigned_int, "integral": dtypes.is_int,
    "real floating": dtypes.is_float, "complex floating": dtypes.is_complex,
    "numeric": lambda d: not dtypes.is_bool(d),
}


def isdtype(dtype, kind) -> bool:
    """The array API's `isdtype`: is `dtype` of `kind` (a dtype, a kind name, or a tuple)."""
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _ISDTYPE_KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}; known: {', '.join(_ISDTYPE_KINDS)}")
        return _ISDTYPE_KINDS[kind](np.dtype(dtype))
    return np.dtype(dtype) == np.dtype(kind)


def finfo(dt):
    """Machine limits of a floating dtype (bfloat16 included); accepts arrays too."""
    dt = getattr(dt, "dtype", dt)
    return dtypes.finfo(dtypes.dtype(dt))


def iinfo(dt):
    """Machine limits of an integer dtype; accepts arrays too."""
    dt = getattr(dt, "dtype", dt)
    return dtypes.iinfo(dtypes.dtype(dt))
