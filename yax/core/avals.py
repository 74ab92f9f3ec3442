"""Abstract values: what a transformation knows about a value without its data."""

from __future__ import annotations

import math

import numpy as np

from yax.core import dtypes

_SHORT_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bfloat16": "bf16",
    "float16": "f16", "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
    "int4": "i4", "uint4": "u4", "int2": "i2", "uint2": "u2", "float4_e2m1fn": "f4_e2m1fn",
    "float6_e2m3fn": "f6_e2m3fn", "float6_e3m2fn": "f6_e3m2fn",
    **{f"float8_{kind}": f"f8_{kind}" for kind in (
        "e3m4", "e4m3", "e4m3b11fnuz", "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0fnu")},
}


def short_dtype_name(dt) -> str:
    return _SHORT_NAMES.get(np.dtype(dt).name, np.dtype(dt).name)


class ShapedArray:
    """An array's shape, dtype and weak type (weak: born from a Python scalar), and, for an
    array sharded over Explicit mesh axes, its `sharding` (a NamedSharding over an
    AbstractMesh whose spec names only Explicit axes; None for every other array, so that plain
    avals cost nothing more)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "_hash")
    vma: frozenset = frozenset()
    """The mesh axes a value inside a shard_map body varies along (jax's varying manual axes);
    empty everywhere else. A subclass (primitives.mesh_axes.VaryingAval) carries them."""

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None):
        try:
            self.shape = tuple(int(d) for d in shape)
        except Exception:  # noqa: BLE001  symbolic dims (yax.export) refuse int(); keep them
            self.shape = dims_of(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding
        self._hash = (hash((self.shape, self.dtype, self.weak_type)) if sharding is None else
                      hash((self.shape, self.dtype, self.weak_type, sharding)))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __eq__(self, other):
        if self is other:  # eager results of one cached executable share their aval objects
            return True
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self):
        return self._hash

    def strip_weak_type(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, False, self.sharding) if self.weak_type \
            else self

    def update(self, shape=None, dtype=None, weak_type=None, sharding=False) -> ShapedArray:
        """A copy with the given fields replaced; a new shape drops the sharding (it named the
        old dimensions) unless one is given (None: unsharded)."""
        if sharding is False:
            sharding = self.sharding if shape is None else None
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, sharding)

    def _dims(self) -> str:
        """`8@X,4@(X,Y)` plus `{U:Y}`: a sharded dimension names its Explicit mesh axes."""
        if self.sharding is None:
            return ",".join(str(d) for d in self.shape) + "]"
        spec = self.sharding.spec
        out = []
        for i, d in enumerate(self.shape):
            e = spec[i] if i < len(spec) else None
            out.append(str(d) if e is None else f"{d}@{e}" if isinstance(e, str) else
                       f"{d}@({','.join(e)})")
        extra = "".join(f"{{{k}:{','.join(sorted(v))}}}" for k, v in
                        (("U", getattr(spec, "unreduced", ())), ("R", getattr(spec, "reduced", ())))
                        if v)
        return ",".join(out) + "]" + extra

    def str_short(self) -> str:
        return f"{short_dtype_name(self.dtype)}[{self._dims()}"

    def str_long(self) -> str:
        """As jax names a tracer's type: the full dtype name, `~` marking a weak type."""
        name = getattr(self.dtype, "name", str(self.dtype))
        return f"{'~' if self.weak_type else ''}{name}[{self._dims()}"

    def __repr__(self):
        # as jax: full dtype names here (jaxprs print the short ones), the weak type spelled out
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({np.dtype(self.dtype).name}[{self._dims()}{weak})"

    def __str__(self):
        return self.str_long()  # `print(jax.typeof(x))` shows `~float32[]`

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


def is_symbolic_dim(d) -> bool:
    """A symbolic dimension of `yax.export` (a polynomial over dimension variables). The
    marker is read from the class, and must be True: an object answering every attribute (a
    mock) is not a dimension."""
    return getattr(type(d), "_yax_symbolic_dim", False) is True


def dims_of(values) -> tuple:
    """`values` as ints, keeping symbolic dimensions as they are (shape parameters)."""
    return tuple(d if is_symbolic_dim(d) else int(d) for d in values)


def aval_of_value(x) -> ShapedArray:
    """The aval of a concrete value: Array, numpy array/scalar, or Python scalar."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if dtypes.is_python_scalar(x):
        dt, weak = dtypes.scalar_type_of(x)
        return ShapedArray((), dtypes.canonicalize(dt), weak)
    arr = np.asarray(x)
    return ShapedArray(arr.shape, dtypes.canonicalize(arr.dtype))


_shared_scalars: dict = {}


class TypedScalar:
    """A Python scalar already given a dtype (and weak type) by a lax wrapper.

    Staging writes it inline as a literal; eager evaluation turns it into a 0-d Array.
    """

    __slots__ = ("value", "aval", "array")

    def __init__(self, value, dtype, weak_type: bool = True):
        self.value = np.asarray(value, dtype=dtype)
        self.aval = ShapedArray((), dtype, weak_type)
        self.array = None  # the device copy, made once by eager evaluation

    @classmethod
    def of(cls, value, dtype, weak_type: bool = True) -> TypedScalar:
        """A shared instance for a Python scalar: loops reusing constants skip the conversion
        and the host-to-device copy. Floats key on their sign too, so -0.0 stays -0.0."""
        kind = type(value)
        # only a float zero needs its sign in the key (0.0 == -0.0); skip copysign otherwise
        sign = math.copysign(1.0, value) if kind is float and not value else 0
        key = (kind, value, sign, dtype, weak_type)
        try:
            hit = _shared_scalars.get(key)
        except TypeError:
            return cls(value, dtype, weak_type)
        if hit is None:
            if len(_shared_scalars) > 1024:  # NaN keys never match: keep the table bounded
                _shared_scalars.clear()
            hit = _shared_scalars[key] = cls(value, dtype, weak_type)
        return hit

    def __repr__(self):
        return f"TypedScalar({self.value!r}, weak_type={self.aval.weak_type})"
