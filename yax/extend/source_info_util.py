"""`jax.extend.source_info_util`: which stack frames count as the user's source line.

yax names the user's line in errors and in printed jaxprs, skipping frames inside yax. A
library built on yax registers its own directory so that its frames are skipped too.
"""

from __future__ import annotations

import contextlib
import os
from typing import NamedTuple

from yax import errors
from yax.core import ir as _ir
from yax.interpreters import staging as _staging

__all__ = ["NameStack", "SourceInfo", "current", "current_name_stack", "extend_name_stack",
           "new_name_stack", "new_source_info", "register_exclusion", "reset_name_stack",
           "set_name_stack", "summarize", "transform_name_stack", "user_context"]


def register_exclusion(path: str) -> None:
    """Frames of files under `path` are no longer reported as the user's source."""
    path = os.path.abspath(path)
    if path not in errors.excluded_dirs:
        errors.excluded_dirs.append(path)
        errors._internal_files.clear()  # answers cached before the exclusion may change


# --- source information and name stacks, as jax.extend.source_info_util gives them ----------

SourceInfo = _ir.SourceInfo


class NameStack(NamedTuple):
    """The named scopes (`yax.named_scope`) an equation is staged under, outermost first."""

    stack: tuple = ()

    def extend(self, name) -> NameStack:
        names = tuple(name) if isinstance(name, (list, tuple)) else (name,)
        return NameStack(self.stack + names)

    def wrap_name(self, name: str) -> str:
        return "/".join((*self.stack, name)) if self.stack else name

    def __str__(self):
        return "/".join(self.stack)


def new_name_stack(name: str = "") -> NameStack:
    return NameStack((name,) if name else ())


def current_name_stack() -> NameStack:
    """The scopes the equations staged now are recorded under."""
    return NameStack(_staging._name_stack.get())


@contextlib.contextmanager
def extend_name_stack(name: str):
    """Stage the body's equations one scope deeper, under `name` (as yax.named_scope)."""
    with _staging.name_scope(name):
        yield current_name_stack()


@contextlib.contextmanager
def set_name_stack(name_stack: NameStack):
    token = _staging._name_stack.set(tuple(name_stack.stack))
    try:
        yield
    finally:
        _staging._name_stack.reset(token)


@contextlib.contextmanager
def reset_name_stack():
    with set_name_stack(NameStack()):
        yield


@contextlib.contextmanager
def transform_name_stack(name: str):
    """Inside a transformation: yax does not record transformation names in scopes, so the
    stack is unchanged (the name is not part of any equation's scope)."""
    del name
    yield current_name_stack()


def current() -> SourceInfo | None:
    """The user's source line being traced now (None outside user code)."""
    loc = errors.user_location()
    return None if loc is None else SourceInfo(*loc)


def new_source_info() -> SourceInfo | None:
    return current()


def summarize(source_info: SourceInfo | None, num_frames: int = 1) -> str:
    """`file:line (function)` of a source info, as yax prints it in errors."""
    del num_frames  # yax keeps the one user frame
    return "unknown" if source_info is None else str(source_info)


@contextlib.contextmanager
def user_context(c, *, name_stack: NameStack | None = None):
    """Attribute the body to the traceback or source `c` (kept by jax for error messages; yax
    names the user's line itself) and, if given, to the scopes of `name_stack`."""
    del c
    if name_stack is None:
        yield
    else:
        with set_name_stack(name_stack):
            yield
