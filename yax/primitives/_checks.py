"""Shared trace-time checks for primitive abstract-eval rules (clear errors, both shapes named)."""

from __future__ import annotations

from yax import errors
from yax.core import dtypes


def dtype_kind_check(name: str, aval, allowed: str) -> None:
    """Check `aval.dtype` against a kind: 'inexact', 'float', 'numeric', 'int', 'int_or_bool',
    'signed_or_inexact', 'any'."""
    dt = aval.dtype
    ok = {
        "any": lambda: True,
        "inexact": lambda: dtypes.is_inexact(dt),
        "float": lambda: dtypes.is_float(dt),
        "numeric": lambda: not dtypes.is_bool(dt),
        "int": lambda: dtypes.is_int(dt),
        "int_or_bool": lambda: dtypes.is_int(dt) or dtypes.is_bool(dt),
        "signed_or_inexact": lambda: dtypes.is_signed_int(dt) or dtypes.is_inexact(dt),
        "real": lambda: not dtypes.is_complex(dt) and not dtypes.is_bool(dt),
        "real_or_bool": lambda: not dtypes.is_complex(dt),
    }[allowed]()
    if not ok:
        wanted = {"inexact": "a floating or complex", "float": "a real floating",
                  "numeric": "a numeric (non-bool)", "int": "an integer",
                  "int_or_bool": "an integer or bool",
                  "signed_or_inexact": "a signed integer, floating or complex",
                  "real": "a real numeric (not bool or complex)",
                  "real_or_bool": "a non-complex"}[allowed]
        hint = ""
        if allowed in ("inexact", "float") and (dtypes.is_int(dt) or dtypes.is_bool(dt)):
            hint = " Convert it first, e.g. `x.astype(jnp.float32)`."
        raise errors.DTypeError(f"{name} needs {wanted} dtype, got {aval.str_short()}.{hint}")


def same_dtypes(name: str, avals) -> None:
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        shown = ", ".join(a.str_short() for a in avals)
        raise errors.DTypeError(
            f"{name} needs operands of one dtype, got {shown}. Convert with "
            f"`lax.convert_element_type` or `x.astype(...)` (yax.numpy functions promote for you).")


def broadcast_elementwise_shapes(name: str, avals) -> tuple:
    """Operands must share one shape; rank-0 operands broadcast implicitly."""
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        shown = " and ".join(a.str_short() for a in avals)
        raise errors.ShapeError(
            f"{name} got incompatible shapes {shown}. lax operations need equal shapes (or "
            f"scalars); broadcast explicitly with `lax.broadcast_in_dim`, or use the yax.numpy "
            f"function, which broadcasts NumPy-style.")
    return shapes.pop() if shapes else ()


def check_axes(name: str, axes, ndim: int) -> None:
    for ax in axes:
        if not isinstance(ax, int) or not 0 <= ax < ndim:
            raise errors.ShapeError(f"{name}: axis {ax} is out of range for rank {ndim}")
    if len(set(axes)) != len(axes):
        raise errors.ShapeError(f"{name}: repeated axis in {tuple(axes)}")
