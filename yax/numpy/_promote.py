"""NumPy-style argument handling for yax.numpy: dtype promotion (JAX's lattice, weak types) and
shape broadcasting. Every yax.numpy function that takes several arrays goes through here."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar
from yax.core.trace import Tracer, bind
from yax.lax import _util
from yax.lax.elementwise import _convert_keep_weak
from yax.lax.shape import broadcast_in_dim
from yax.primitives.shape import broadcast_in_dim_p
from yax.runtime import values
from yax.runtime.array import Array
from yax.runtime.values import to_array


def is_array_like(x) -> bool:
    return isinstance(x, (Array, Tracer, TypedScalar, np.ndarray, np.generic, bool, int, float,
                          complex))


def check_arraylike(name: str, *args) -> None:
    for i, a in enumerate(args):
        if not is_array_like(a):
            hint = " (use jnp.array(...) to convert a list or tuple)" if isinstance(
                a, (list, tuple)) else ""
            raise TypeError(f"{name}: argument {i} of type {type(a).__name__} is not an array or "
                            f"scalar{hint}")


def to_operand(x):
    """An Array, tracer or canonical NumPy array; Python scalars become weakly typed scalars."""
    if isinstance(x, (Array, Tracer, TypedScalar)):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError("yax.numpy functions take arrays, not lists or tuples; wrap them with "
                        "jnp.array(...) first")
    return values.as_operand(x)


def dtype_and_weak(x) -> tuple[np.dtype, bool]:
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    return dtypes.scalar_type_of(x)


def result_dtype(*args) -> tuple[np.dtype, bool]:
    return dtypes.result_type(*(dtype_and_weak(a) for a in args))


def promote_dtypes(*args) -> list:
    """Convert all arguments to their common dtype (JAX's promotion lattice)."""
    if len(args) == 1:
        return [to_operand(args[0])]
    dt, weak = result_dtype(*args)
    return [_cast(a, dt, weak) for a in args]


def promote_dtypes_inexact(*args) -> list:
    """As `promote_dtypes`, then integers and bools go to the default float type."""
    dt, weak = result_dtype(*args)
    if not dtypes.is_inexact(dt):
        dt = dtypes.canonicalize(dtypes.default_float())
    return [_cast(a, dt, weak) for a in args]


def promote_dtypes_numeric(*args) -> list:
    """As `promote_dtypes`, then bools go to the default int type (e.g. for sum of bools)."""
    dt, weak = result_dtype(*args)
    if dtypes.is_bool(dt):
        dt = dtypes.canonicalize(dtypes.default_int())
    return [_cast(a, dt, weak) for a in args]


def _cast(x, dt, weak):
    if _util.is_python_scalar(x):
        return TypedScalar.of(x, dt, weak)
    x = to_operand(x)
    if hasattr(x, "aval"):
        return _convert_keep_weak(x, dt, weak)
    return x.astype(dt) if x.dtype != dt else x


def broadcast_shapes(*shapes, name: str = "broadcast") -> tuple:
    """NumPy broadcasting of shapes, with an error that names every shape involved."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            # starts as jax's message does (libraries' tests match that text), then says more
            shown = [tuple(int(d) for d in s) for s in shapes]
            raise errors.ShapeError(
                f"Incompatible shapes for broadcasting: shapes={shown} ({name}: axis "
                f"{i - ndim} has sizes {sorted(sizes)}). Reshape one operand or add an axis "
                f"with x[:, None] / jnp.expand_dims so the sizes line up.")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def shape_of(x) -> tuple:
    aval = getattr(x, "aval", None)
    return aval.shape if aval is not None else np.shape(x)


def broadcast_to_shape(x, shape):
    """Broadcast one operand to `shape` (rank-0 operands are left for implicit broadcasting)."""
    xshape = shape_of(x)
    if tuple(xshape) == tuple(shape):
        return x
    offset = len(shape) - len(xshape)
    return broadcast_in_dim(x, tuple(shape), tuple(range(offset, len(shape))))


def promote_shapes(name: str, *args) -> list:
    """Broadcast operands NumPy-style; scalars stay scalars (primitives broadcast them)."""
    shapes = [shape_of(a) for a in args]
    nonscalar = [s for s in shapes if s != ()]
    if all(s == nonscalar[0] for s in nonscalar):  # scalars broadcast inside the primitive
        return list(args)
    shape = broadcast_shapes(*shapes, name=name)
    return [a if shape_of(a) == () else broadcast_to_shape(a, shape) for a in args]


def promote_args(name: str, *args) -> list:
    """Check, promote dtypes and broadcast shapes: the usual preamble of a binary ufunc."""
    if _same_avals(args):  # the common case needs no promotion or broadcasting
        return list(args)
    if len(args) == 2:
        fast = _array_and_scalar(*args)
        if fast is not None:
            return fast
    if _same_dtypes(args):  # e.g. `x @ w + b`: only the shapes need broadcasting
        return promote_shapes(name, *args)
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes(*args))


def _same_dtypes(args) -> bool:
    """Arrays/tracers (no scalars) of one dtype and weak type: dtype promotion is a no-op."""
    first = getattr(args[0], "aval", None) if args else None
    if first is None:
        return False
    for a in args:
        if type(a) is TypedScalar or not isinstance(a, (Array, Tracer)):
            return False
        aval = a.aval
        if aval.dtype != first.dtype or aval.weak_type != first.weak_type:
            return False
    return True


def _array_and_scalar(a, b):
    """`x * 2.0` and `2.0 * x` where the array's dtype wins: only the scalar needs a type."""
    a_scalar, b_scalar = _util.is_python_scalar(a), _util.is_python_scalar(b)
    if a_scalar == b_scalar:
        return None
    arr, scalar = (b, a) if a_scalar else (a, b)
    aval = getattr(arr, "aval", None)
    if aval is None or type(arr) is TypedScalar:
        return None
    dt, weak = dtypes.result_type((aval.dtype, aval.weak_type), dtypes.scalar_type_of(scalar))
    if dt != aval.dtype or weak != aval.weak_type:
        return None
    typed = TypedScalar.of(scalar, dt, weak)
    return [typed, arr] if a_scalar else [arr, typed]


INEXACT_DTYPES = dtypes.INEXACT
_INT_DTYPES = frozenset(d for d in dtypes.SUPPORTED if dtypes.is_int(d))


def is_operand(x) -> bool:
    """An Array or a tracer: a value the primitives take as it is."""
    return type(x) is Array or isinstance(x, Tracer)


def fast_binary_operands(x1, x2, inexact_only: bool):
    """The operands a binary ufunc binds when promotion has nothing to do, or None.

    Covers two Arrays/tracers of one aval (inexact dtypes only under `inexact_only`) and a
    strongly typed Array or tracer meeting a Python float or int that takes its dtype
    (`x * 2.0`); the result is exactly what `promote_args`/`promote_args_inexact` would give.
    """
    if is_operand(x1):
        if is_operand(x2):
            aval = x1.aval
            if inexact_only and aval.dtype not in INEXACT_DTYPES:
                return None
            if aval is x2.aval or aval == x2.aval:
                return x1, x2
            return _broadcast_one_dtype(x1, x2)
        typed = _scalar_taking_dtype(x2, x1.aval, inexact_only)
        return None if typed is None else (x1, typed)
    if is_operand(x2):
        typed = _scalar_taking_dtype(x1, x2.aval, inexact_only)
        return None if typed is None else (typed, x2)
    return None


def _broadcast_one_dtype(x1, x2):
    """`x @ w + b`: two unsharded operands of one dtype and weak type whose shapes broadcast
    (neither rank 0: primitives broadcast those themselves), each broadcast as `promote_shapes`
    would, or None. The plan is looked up per pair of shapes: this runs on every eager-grad op."""
    a1, a2 = x1.aval, x2.aval
    if (type(a1) is not ShapedArray or type(a2) is not ShapedArray or a1.dtype != a2.dtype
            or a1.weak_type != a2.weak_type or a1.sharding is not None
            or a2.sharding is not None):
        return None
    plan = _broadcast_plans.get((a1.shape, a2.shape), False)
    if plan is False:
        plan = _broadcast_plan(a1.shape, a2.shape)
    if plan is None:
        return None
    shape, dims1, dims2 = plan
    if dims1 is not None:
        x1 = bind(broadcast_in_dim_p, x1, shape=shape, broadcast_dimensions=dims1)
    if dims2 is not None:
        x2 = bind(broadcast_in_dim_p, x2, shape=shape, broadcast_dimensions=dims2)
    return x1, x2


_broadcast_plans: dict = {}


def _broadcast_plan(s1: tuple, s2: tuple):
    """(result shape, broadcast dims of each operand or None when it keeps its shape), or None
    where the general path must decide (a rank-0 or symbolic shape, shapes that do not
    broadcast: its error names them)."""
    plan = None
    if s1 and s2 and all(type(d) is int for d in (*s1, *s2)):
        try:
            shape = broadcast_shapes(s1, s2)
        except errors.ShapeError:
            shape = None
        if shape is not None:
            plan = (shape, *[None if s == shape else tuple(range(len(shape) - len(s), len(shape)))
                             for s in (s1, s2)])
    if len(_broadcast_plans) >= 4096:
        _broadcast_plans.clear()
    _broadcast_plans[(s1, s2)] = plan
    return plan


def _scalar_taking_dtype(scalar, aval, inexact_only: bool):
    """A Python float/int meeting a strongly typed array whose dtype wins (JAX's lattice: a
    weak float gives way to any inexact dtype, a weak int to any int or inexact dtype)."""
    kind = type(scalar)
    if aval.weak_type or (kind is not float and kind is not int):
        return None
    dt = aval.dtype
    if dt in INEXACT_DTYPES or (kind is int and not inexact_only and dt in _INT_DTYPES):
        return _strong_scalar(scalar, dt)
    return None


_strong_scalars: dict = {}


def _strong_scalar(value, dt):
    """`TypedScalar.of(value, dt, False)`, shared per (value, dtype). With the dtype fixed, an int
    and an equal float give the same constant; zeros (signed) and NaNs take the general path."""
    if not value or value != value:
        return TypedScalar.of(value, dt, False)
    key = (value, dt)
    hit = _strong_scalars.get(key)
    if hit is None:
        hit = TypedScalar.of(value, dt, False)
        if len(_strong_scalars) > 1024:
            _strong_scalars.clear()
        _strong_scalars[key] = hit
    return hit


def _same_avals(args) -> bool:
    first = getattr(args[0], "aval", None) if args else None
    if first is None or type(args[0]) is TypedScalar:
        return False
    return all(type(a) is not TypedScalar and getattr(a, "aval", None) == first
               for a in args[1:])


def promote_args_inexact(name: str, *args) -> list:
    if _same_avals(args) and dtypes.is_inexact(args[0].aval.dtype):
        return list(args)
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def promote_args_numeric(name: str, *args) -> list:
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_numeric(*args))


def promote_arrays_inexact(name: str, *args) -> list:
    """`promote_args_inexact` for code that then computes with the results using operators:
    typed scalars (inline constants for lax) become 0-d Arrays, which have operators."""
    return [to_array(a) if type(a) is TypedScalar else a
            for a in promote_args_inexact(name, *args)]
