"""Symbolic dimensions for `yax.export`: `symbolic_shape("b, 4")` -> `(b, 4)`.

A symbolic dimension is a name standing for a size fixed at call time. yax does not lower
programs with dynamic dimensions: an export with symbolic dimensions keeps the function and
lowers it once per distinct binding of its dimensions ("per-call refinement"), so the program
that runs always has static shapes. Supported dimension specs are a non-negative integer or a
bare identifier; expressions (`2*b`, `b + 1`) and serialization of such exports are refused.
"""

from __future__ import annotations

import re

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SymbolicDim:
    """A named dimension; equal to another SymbolicDim of the same name."""

    __slots__ = ("name",)
    _yax_symbolic_dim = True  # duck-typed marker read by ShapeDtypeStruct (a lower floor)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, SymbolicDim) and other.name == self.name

    def __hash__(self):
        return hash(("SymbolicDim", self.name))

    def __int__(self):
        raise errors.ExportError(f"symbolic dimension {self.name!r} has no value until the "
                                 f"exported function is called")

    def __repr__(self):
        return self.name

    __str__ = __repr__


def symbolic_shape(spec: str) -> tuple:
    """Parse `"b, 4"` into a shape `(SymbolicDim("b"), 4)`, usable in `ShapeDtypeStruct`.

    Example:
      >>> symbolic_shape("b, 4")
      (b, 4)
    """
    if not isinstance(spec, str):
        raise TypeError(f"symbolic_shape takes a string such as 'b, 4', got {type(spec).__name__}")
    body = spec.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    parts = [p.strip() for p in body.split(",")]
    if parts and parts[-1] == "":
        parts.pop()
    dims: list = []
    for part in parts:
        if part.isdigit():
            dims.append(int(part))
        elif _NAME.match(part):
            dims.append(SymbolicDim(part))
        else:
            raise errors.ExportError(
                f"symbolic_shape({spec!r}): dimension {part!r} is not supported; yax accepts "
                f"integers and bare names (no dimension expressions such as '2*b')")
    return tuple(dims)


def is_symbolic(shape) -> bool:
    return any(isinstance(d, SymbolicDim) for d in shape)


class SymbolicShapedArray(ShapedArray):
    """The aval of a value with symbolic dimensions: a ShapedArray (it prints as one) whose
    shape holds SymbolicDims, so it has no size until the dimensions are bound."""

    __slots__ = ()

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))


def bind_dimensions(in_avals, shapes, name: str) -> dict:
    """The value of every symbolic dimension, read from the arguments' concrete shapes; a clear
    error where a rank, a constant dimension or two uses of one name disagree."""
    env: dict = {}
    for i, (aval, shape) in enumerate(zip(in_avals, shapes, strict=True)):
        if len(shape) != len(aval.shape):
            raise errors.ExportError(f"exported function {name}: argument {i} has shape "
                                     f"{tuple(shape)} but was exported for {aval.str_short()}")
        for d, n in zip(aval.shape, shape, strict=True):
            if isinstance(d, SymbolicDim):
                if env.setdefault(d.name, n) != n:
                    raise errors.ExportError(
                        f"exported function {name}: dimension {d.name!r} is {env[d.name]} in "
                        f"one argument and {n} in argument {i} {tuple(shape)}")
            elif d != n:
                raise errors.ExportError(f"exported function {name}: argument {i} has shape "
                                         f"{tuple(shape)} but was exported for "
                                         f"{aval.str_short()}")
    return env


def refine(shape, env: dict) -> tuple:
    return tuple(env[d.name] if isinstance(d, SymbolicDim) else d for d in shape)
