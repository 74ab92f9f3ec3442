"""`debug.print` and `debug.callback`: look at values inside jit, vmap, grad, scan and cond.

Both stage a side-effecting `callback` (yax/primitives/callbacks.py): it is never removed, runs
each time the program runs (once per batch element under vmap, once per iteration in a loop body,
only in the branch taken), and sees primal values under differentiation.
"""

from __future__ import annotations

import builtins
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


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Print `fmt.format(*args, **kwargs)` with the run-time values of `args`, from inside any
    transformation (as `jax.debug.print`).

    Args:
      fmt: a `str.format` string; array arguments arrive as NumPy arrays, so format specs such as
        `{x:.3f}` work on scalars.
      ordered: keep program order with respect to other ordered prints of the same program body.

    Under `vmap` it prints once per batch element; under `grad`/`jvp` it prints primal values
    once; in a `scan`/`while_loop` body once per iteration; in `cond` only in the branch taken.

    Example:
      >>> @yax.jit
      ... def f(x):
      ...     yax.debug.print("x = {}", x)
      ...     return x * 2
      >>> f(jnp.arange(3))  # prints: x = [0 1 2]
    """
    operands, rebuild = _split_static(args, kwargs)

    def show(*arrays):
        a, kw = rebuild(arrays)
        builtins.print(fmt.format(*a, **kw), file=sys.stdout, flush=True)
        return []

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
