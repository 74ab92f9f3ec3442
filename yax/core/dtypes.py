"""Dtypes: the supported set, canonicalisation under the x64 flag, and JAX's promotion lattice.

Weak types: a value born from a Python scalar is "weakly typed" and gives way to the dtype of the
other operand (`x_f16 * 2.0` stays float16). The lattice nodes `i*`, `f*`, `c*` stand for the
weak integer, float and complex types.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from yax import errors
from yax.config import config

bfloat16 = np.dtype(ml_dtypes.bfloat16)
bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
# the narrow storage formats of ml_dtypes (XLA's s4/u4/s2/u2, f4E2M1FN, f6E*, f8E*): they
# promote only with bool and weak Python scalars (see the lattice below), as in JAX
int4, uint4, int2, uint2 = (np.dtype(getattr(ml_dtypes, n))
                            for n in ("int4", "uint4", "int2", "uint2"))
float4_e2m1fn, float6_e2m3fn, float6_e3m2fn = (
    np.dtype(getattr(ml_dtypes, n)) for n in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"))
FLOAT8S = tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))
NARROW_INTS = (int4, uint4, int2, uint2)
SUB_BYTE_FLOATS = (float4_e2m1fn, float6_e2m3fn, float6_e3m2fn)
FLOAT6S = (float6_e2m3fn, float6_e3m2fn)  # XLA in this jaxlib cannot compile or hold them
NARROW_FLOATS = SUB_BYTE_FLOATS + FLOAT8S

SUPPORTED = frozenset([bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                       bfloat16, float16, float32, float64, complex64, complex128,
                       *NARROW_INTS, *NARROW_FLOATS])

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def is_python_scalar(x) -> bool:
    """A Python bool/int/float/complex (weakly typed), not a NumPy scalar (np.float64 subclasses
    float, but NumPy scalars are strongly typed, as in JAX)."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def dtype(x) -> np.dtype:
    """The numpy dtype of a dtype-like or of a value (Python scalars give the default types)."""
    if isinstance(x, np.generic):
        return x.dtype
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return default_int()
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    if isinstance(x, type) and x in (float, int, complex, bool):
        return {float: default_float, int: default_int, complex: default_complex,
                bool: lambda: bool_}[x]()
    if hasattr(x, "dtype") and not isinstance(x, type):
        return np.dtype(x.dtype)
    return np.dtype(x)


def default_int() -> np.dtype:
    return int64 if config.enable_x64 else int32


def default_uint() -> np.dtype:
    return uint64 if config.enable_x64 else uint32


def default_float() -> np.dtype:
    return float64 if config.enable_x64 else float32


def default_complex() -> np.dtype:
    return complex128 if config.enable_x64 else complex64


_warned_truncation: set = set()


def canonicalize(dt, *, warn: bool = False) -> np.dtype:
    """Map 64-bit dtypes to 32-bit ones when x64 is off (warning once per dtype if asked)."""
    dt = np.dtype(dt)
    if dt not in SUPPORTED:
        raise TypeError(f"yax does not support dtype {dt}; supported: "
                        f"{', '.join(sorted(str(d) for d in SUPPORTED))}")
    if config.enable_x64 or dt not in _TO_32:
        return dt
    narrow = _TO_32[dt]
    if warn and dt not in _warned_truncation:
        _warned_truncation.add(dt)
        errors.warn_at_user_line(
            f"a {dt} input was truncated to {narrow} because 64-bit mode is off; call "
            f"yax.config.update('enable_x64', True) (or set YAX_ENABLE_X64=1) to keep {dt}.")
    return narrow


# Set membership is much cheaper than np.issubdtype, and these run on every operation.
_FLOATS = frozenset([float16, bfloat16, float32, float64, *NARROW_FLOATS])
_COMPLEX = frozenset([complex64, complex128])
_SIGNED = frozenset([int8, int16, int32, int64, int4, int2])
_UNSIGNED = frozenset([uint8, uint16, uint32, uint64, uint4, uint2])
_ML_DTYPES = frozenset([bfloat16, *NARROW_INTS, *NARROW_FLOATS])  # not NumPy's own
# for hot paths that test membership without a call: `dt in INEXACT` is `is_inexact(dt)` for a
# np.dtype, `dt in REAL_FLOATS` is `is_float(dt)`
REAL_FLOATS = _FLOATS
INEXACT = _FLOATS | _COMPLEX


def _as_dtype(dt) -> np.dtype:
    return dt if type(dt) is not type and isinstance(dt, np.dtype) else np.dtype(dt)


def is_float(dt) -> bool:
    return _as_dtype(dt) in _FLOATS


def is_complex(dt) -> bool:
    return _as_dtype(dt) in _COMPLEX


def is_inexact(dt) -> bool:
    dt = _as_dtype(dt)
    return dt in _FLOATS or dt in _COMPLEX


def is_int(dt) -> bool:
    dt = _as_dtype(dt)
    return dt in _SIGNED or dt in _UNSIGNED


def is_signed_int(dt) -> bool:
    return _as_dtype(dt) in _SIGNED


def is_unsigned_int(dt) -> bool:
    return _as_dtype(dt) in _UNSIGNED


def is_bool(dt) -> bool:
    return _as_dtype(dt) == bool_


_BIT_WIDTHS = {int4: 4, uint4: 4, int2: 2, uint2: 2, float4_e2m1fn: 4, float6_e2m3fn: 6,
               float6_e3m2fn: 6}


def bit_width(dt) -> int:
    """Bits of one element of `dt` as XLA stores it (int4: 4; bool: 8, as JAX counts it)."""
    dt = np.dtype(dt)
    return _BIT_WIDTHS.get(dt, dt.itemsize * 8)


def finfo(dt):
    return ml_dtypes.finfo(dt) if np.dtype(dt) in _ML_DTYPES else np.finfo(dt)


def iinfo(dt):
    return ml_dtypes.iinfo(dt) if np.dtype(dt) in _ML_DTYPES else np.iinfo(dt)


# --- the promotion lattice ---
# Edges point from a type to the types it promotes to directly (JAX's type promotion lattice).
_WEAK_I, _WEAK_F, _WEAK_C = "i*", "f*", "c*"
_LATTICE = {
    bool_: [_WEAK_I],
    _WEAK_I: [uint8, int8, *NARROW_INTS],
    uint8: [uint16, int16], uint16: [uint32, int32], uint32: [uint64, int64], uint64: [_WEAK_F],
    int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_F],
    _WEAK_F: [float16, bfloat16, _WEAK_C, *NARROW_FLOATS],
    float16: [float32], bfloat16: [float32], float32: [float64, complex64], float64: [complex128],
    _WEAK_C: [complex64], complex64: [complex128], complex128: [],
    # the narrow types are dead ends: `int4 + int8` has no implicit promotion (JAX's rule)
    **{narrow: [] for narrow in (*NARROW_INTS, *NARROW_FLOATS)},
}


@functools.lru_cache(maxsize=None)
def _upper_bounds(node) -> frozenset:
    result = {node}
    for nxt in _LATTICE[node]:
        result |= _upper_bounds(nxt)
    return frozenset(result)


def _node(dt, weak: bool):
    if not weak:
        return dt
    if is_bool(dt):
        return bool_
    if is_int(dt):
        return _WEAK_I
    if is_float(dt):
        return _WEAK_F
    return _WEAK_C


@functools.lru_cache(maxsize=4096)
def _join(nodes: tuple):
    common = functools.reduce(lambda a, b: a & b, (_upper_bounds(n) for n in nodes))
    # The least upper bound is the common bound below every other one.
    for cand in common:
        if all(other in _upper_bounds(cand) for other in common):
            return cand
    weak_names = {_WEAK_I: "int (Python scalar)", _WEAK_F: "float (Python scalar)",
                  _WEAK_C: "complex (Python scalar)"}
    names = ", ".join(weak_names.get(n, str(n)) for n in nodes)
    raise errors.TypePromotionError(
        f"the dtypes ({names}) have no implicit promotion: the narrow types (int4, uint4, int2, "
        f"uint2 and the float8/float6/float4 formats) promote only with bool and Python scalars "
        f"of their kind; convert one operand explicitly, e.g. x.astype(jnp.float32)")


def result_type(*dtypes_and_weak: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote (dtype, weak_type) pairs; returns the canonical result dtype and its weakness."""
    if not dtypes_and_weak:
        raise TypeError("result_type needs at least one input")
    try:
        return _result_type_cached(dtypes_and_weak, config.enable_x64)
    except TypeError:  # unhashable dtype-likes: normalise first
        pairs = tuple((np.dtype(d), bool(w)) for d, w in dtypes_and_weak)
        return _result_type_cached(pairs, config.enable_x64)


@functools.lru_cache(maxsize=4096)
def _result_type_cached(dtypes_and_weak, x64: bool) -> tuple[np.dtype, bool]:
    del x64  # part of the cache key: canonicalisation depends on it
    joined = _join(tuple(_node(np.dtype(d), w) for d, w in dtypes_and_weak))
    if joined == _WEAK_I:
        return canonicalize(default_int()), True
    if joined == _WEAK_F:
        return canonicalize(default_float()), True
    if joined == _WEAK_C:
        return canonicalize(default_complex()), True
    return canonicalize(joined), False


def promote_types(a, b) -> np.dtype:
    """NumPy-style `promote_types` on JAX's lattice (both types strong)."""
    return result_type((dtype(a), False), (dtype(b), False))[0]


def scalar_type_of(x) -> tuple[np.dtype, bool]:
    """The (dtype, weak) of a Python scalar, numpy value, Array or tracer."""
    if isinstance(x, np.generic):
        return canonicalize(x.dtype), False
    if isinstance(x, bool):
        return bool_, False
    if isinstance(x, (int, float, complex)):
        return dtype(type(x)), True
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    return canonicalize(np.result_type(x)), False


# the float formats with no infinity (float8_e4m3fn, float4_e2m1fn, ...): their extremes are
# the largest finite values
_NO_INF = frozenset(d for d in NARROW_FLOATS if not np.isinf(np.array(np.inf).astype(d)))


def lowest(dt):
    """The identity of max over `dt`: -inf (the most negative finite value of a format without
    infinities), the smallest integer, or False."""
    if is_bool(dt):
        return False
    if np.dtype(dt) in _NO_INF:
        return finfo(dt).min
    return -np.inf if is_inexact(dt) else iinfo(dt).min


def highest(dt):
    """The identity of min over `dt`: +inf (or the largest finite value), the largest integer,
    or True."""
    if is_bool(dt):
        return True
    if np.dtype(dt) in _NO_INF:
        return finfo(dt).max
    return np.inf if is_inexact(dt) else iinfo(dt).max
