"""`debug.print` and `debug.callback`: look at values inside jit, vmap, grad, scan and cond.

Both stage a side-effecting `callback` (yax/primitives/callbacks.py): it is never removed, runs
each time the program runs (once per batch element under vmap, once per iteration in a loop body,
only in the branch taken), and sees primal values under differentiation.
"""

from __future__ import annotations

import builtins
import string
import sys

import numpy as np

from yax import errors, tree_util
from yax.core.trace import Tracer
from yax.primitives.callbacks import HostCallback, bind_callback
from yax.runtime.array import Array


def _is_dynamic(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


def _split_static(args, kwargs):
    """The array leaves (operands of the callback) and a function rebuilding (args, kwargs)."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    dynamic = [i for i, x in enumerate(leaves) if _is_dynamic(x)]

    def rebuild(arrays):
        full = list(leaves)
        for i, a in zip(dynamic, arrays, strict=True):
            full[i] = a
        return tree_util.tree_unflatten(tree, full)
    return [leaves[i] for i in dynamic], rebuild


def _where() -> str | None:
    loc = errors.user_location()
    return f"{loc[0]}:{loc[1]}" if loc else None


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting any value."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [i for i in range(len(args)) if i not in used_args] + [
            k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(
                f"debug.print: arguments {unused} are not used by the format string (an "
                f"f-string passed as the format? pass a plain string with {{}} placeholders); "
                f"skip_format_check=True appends them instead")


_FORMAT_CHECKER = _FormatChecker()


def debug_print(fmt: str, *args, ordered: bool = False, partitioned: bool = False,
                skip_format_check: bool = False, **kwargs) -> None:
    """Print `fmt.format(*args, **kwargs)` with the run-time values of `args`, from inside any
    transformation (as `jax.debug.print`).

    Args:
      fmt: a `str.format` string; array arguments arrive as NumPy arrays, so format specs such as
        `{x:.3f}` work on scalars. Without placeholders the arguments are appended, separated
        by spaces. NumPy print options in effect at the call apply.
      ordered: keep program order with respect to other ordered prints of the same program body.
      partitioned: accepted for JAX compatibility (one device).
      skip_format_check: do not check the arguments against the format string.

    Under `vmap` it prints once per batch element; under `grad`/`jvp` it prints primal values
    once; in a `scan`/`while_loop` body once per iteration; in `cond` only in the branch taken.

    Example:
      >>> @yax.jit
      ... def f(x):
      ...     yax.debug.print("x = {}", x)
      ...     return x * 2
      >>> f(jnp.arange(3))  # prints: x = [0 1 2]
    """
    if not skip_format_check:
        _FORMAT_CHECKER.format(fmt, *args, **kwargs)  # missing or unused arguments: error now
    operands, rebuild = _split_static(args, kwargs)
    placeholders = any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))
    printoptions = np.get_printoptions()  # as set where the print was written (as JAX)

    def show(*arrays):
        a, kw = rebuild(arrays)
        with np.printoptions(**printoptions):
            text = fmt.format(*a, **kw) if placeholders else " ".join((fmt, *map(str, a)))
        builtins.print(text, file=sys.stdout, flush=True)
        return []

    del partitioned
    cb = HostCallback(show, "debug.print", _where())
    bind_callback(cb, operands, [], effect="debug", ordered=ordered)


def callback(callback, *args, ordered: bool = False, partitioned: bool = False, **kwargs) -> None:
    """Call `callback(*args, **kwargs)` on the host for its side effect (logging, plotting,
    assertions), from inside any transformation, with array arguments as NumPy arrays. Its return
    value is ignored. The same semantics as `debug.print`; `partitioned` is accepted and ignored
    (one device)."""
    del partitioned
    operands, rebuild = _split_static(args, kwargs)
    name = getattr(callback, "__qualname__", None) or repr(callback)

    def call(*arrays):
        a, kw = rebuild(arrays)
        callback(*a, **kw)
        return []

    code = getattr(callback, "__code__", None)
    defined = f"{code.co_filename}:{code.co_firstlineno}" if code else None
    bind_callback(HostCallback(call, name, defined), operands, [], effect="debug",
                  ordered=ordered)
