"""The list helpers of `jax._src.util` that tutorials and libraries import (alias mode serves
them there; see yax/_alias_src.py). Written for yax; semantics follow jax's documented ones."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence

__all__ = ["canonicalize_axis", "ceil_of_ratio", "concatenate", "curry", "flatten",
           "merge_lists", "partition_list", "prod", "safe_map", "safe_zip", "split_list",
           "subvals", "tuple_delete", "tuple_insert", "unflatten", "unzip2", "unzip3", "wraps"]


def safe_map(f: Callable, *args: Iterable) -> list:
    """`list(map(f, *args))`, raising when the arguments differ in length (a silent truncation
    would hide an interpreter bug: fewer values than variables)."""
    lists = [list(a) for a in args]
    n = len(lists[0])
    for other in lists[1:]:
        if len(other) != n:
            raise ValueError(f"safe_map: length mismatch: {[len(a) for a in lists]}")
    return list(map(f, *lists))


def safe_zip(*args: Iterable) -> list:
    """`list(zip(*args))`, raising when the arguments differ in length."""
    return list(zip(*args, strict=True))


def unzip2(pairs: Iterable) -> tuple[tuple, tuple]:
    xs, ys = [], []
    for x, y in pairs:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def unzip3(triples: Iterable) -> tuple[tuple, tuple, tuple]:
    xs, ys, zs = [], [], []
    for x, y, z in triples:
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return tuple(xs), tuple(ys), tuple(zs)


def split_list(xs: Sequence, ns: Sequence[int]) -> list[list]:
    """`xs` cut into pieces of lengths `ns`, plus the rest as the last piece."""
    xs, out = list(xs), []
    for n in ns:
        out.append(xs[:n])
        xs = xs[n:]
    out.append(xs)
    return out


def partition_list(which: Sequence[bool], xs: Sequence) -> tuple[list, list]:
    """(the xs where `which` is False, those where it is True)."""
    falses, trues = [], []
    for w, x in zip(which, xs, strict=True):
        (trues if w else falses).append(x)
    return falses, trues


def merge_lists(which: Sequence[bool], falses: Sequence, trues: Sequence) -> list:
    """The inverse of partition_list."""
    f, t = iter(falses), iter(trues)
    return [next(t) if w else next(f) for w in which]


def concatenate(xss: Iterable[Iterable]) -> list:
    return [x for xs in xss for x in xs]


def flatten(xss: Iterable[Iterable]) -> list:
    return concatenate(xss)


def unflatten(xs: Sequence, ns: Sequence[int]) -> list[list]:
    """`xs` cut into consecutive pieces of lengths `ns` (which must use all of it)."""
    out, i = [], 0
    for n in ns:
        out.append(list(xs[i:i + n]))
        i += n
    if i != len(xs):
        raise ValueError(f"unflatten: {len(xs)} items for lengths {list(ns)}")
    return out


def curry(f: Callable) -> Callable:
    """`curry(f)(x)(y) == f(x, y)`."""
    return functools.partial(functools.partial, f)


def wraps(wrapped: Callable, namestr: str | None = None, docstr: str | None = None, **kwargs):
    """functools.wraps that tolerates callables without a `__name__` (partials)."""
    def decorator(fun: Callable) -> Callable:
        try:
            name = getattr(wrapped, "__name__", repr(wrapped))
            fun.__name__ = namestr.format(fun=name, **kwargs) if namestr else name
            fun.__qualname__ = getattr(wrapped, "__qualname__", fun.__name__)
            fun.__doc__ = (docstr.format(fun=name, doc=wrapped.__doc__, **kwargs) if docstr
                           else wrapped.__doc__)
            fun.__module__ = getattr(wrapped, "__module__", None)
            fun.__wrapped__ = wrapped
        except (AttributeError, TypeError):
            pass
        return fun
    return decorator


def prod(xs: Iterable[int]) -> int:
    return math.prod(xs)


def canonicalize_axis(axis: int, ndim: int) -> int:
    """`axis` as a non-negative axis of an `ndim`-dimensional array."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def ceil_of_ratio(x: int, y: int) -> int:
    return -(-x // y)


def subvals(xs: Sequence, replace: Iterable[tuple[int, object]]) -> tuple:
    xs = list(xs)
    for i, v in replace:
        xs[i] = v
    return tuple(xs)


def tuple_insert(t: tuple, idx: int, val) -> tuple:
    return t[:idx] + (val,) + t[idx:]


def tuple_delete(t: tuple, idx: int) -> tuple:
    return t[:idx] + t[idx + 1:]
