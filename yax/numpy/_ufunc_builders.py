"""How yax.numpy's ufuncs are built: operand conversion, dtype promotion, and the builders that
turn one lax operation and one promotion rule into a ufunc (with a fast path for operands that
need no conversion).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from yax.core import dtypes
from yax.core.trace import Tracer, bind, current_trace, is_eager
from yax.interpreters.eager import one_operand_op
from yax.interpreters.jvp import JVPTrace
from yax.interpreters.partial_eval import PartialEvalTrace
from yax.interpreters.staging import StagingTrace
from yax.numpy import _promote
from yax.runtime.array import Array
from yax.transforms.jit import jit

__all__ = ["to_operand", "promote_args", "promote_args_inexact", "promote_args_numeric"]


def _strong_numpy_scalars(args):
    """np.float64 and np.complex128 subclass Python's float and complex, but NumPy scalars are
    strongly typed (as in JAX): pass them on as 0-d NumPy arrays so promotion sees that."""
    return [np.asarray(a) if isinstance(a, np.generic) else a for a in args]


def to_operand(x):
    return _promote.to_operand(np.asarray(x) if isinstance(x, np.generic) else x)


def promote_args(name, *args):
    return _promote.promote_args(name, *_strong_numpy_scalars(args))


def promote_args_inexact(name, *args):
    return _promote.promote_args_inexact(name, *_strong_numpy_scalars(args))


def promote_args_numeric(name, *args):
    return _promote.promote_args_numeric(name, *_strong_numpy_scalars(args))


def _dtype(x):
    return x.aval.dtype if hasattr(x, "aval") else np.asarray(x).dtype


def _is_int(x) -> bool:
    return dtypes.is_int(_dtype(x))


def _is_int_or_bool(x) -> bool:
    dt = _dtype(x)
    return dtypes.is_int(dt) or dtypes.is_bool(dt)


_SCALARS = (bool, int, float, complex, np.generic, np.ndarray, Array)


def one_program_when_eager(fun=None, *, static: tuple = ()):
    """`fun` as one compiled program when called eagerly, as JAX's jitted jnp functions run;
    under a transformation it is traced inline, unchanged.

    Eagerly every primitive compiles a program of its own on first use per shape: an integer
    `floor_divide` binds eight primitives, so eight XLA compiles where one will do (most of a
    test suite's time is compiling such tiny programs). `static` names the parameters that are
    options (an axis, a flag), compiled in; a call passing anything but arrays, scalars or None
    for the others, or an unhashable option, runs primitive by primitive as before.
    """
    if fun is None:
        return functools.partial(one_program_when_eager, static=static)
    names = list(inspect.signature(fun).parameters)
    static_at = {names.index(n) for n in static}
    compiled = jit(fun, static_argnames=tuple(static)) if static else jit(fun)

    def operand(a) -> bool:
        return a is None or isinstance(a, _SCALARS)

    def hashable(a) -> bool:
        try:
            hash(a)
        except TypeError:
            return False
        return True

    @functools.wraps(fun)
    def run(*args, **kwargs):
        if is_eager() and all(hashable(a) if i in static_at else operand(a)
                              for i, a in enumerate(args)) and all(
                hashable(v) if k in static else operand(v) for k, v in kwargs.items()):
            return compiled(*args, **kwargs)
        return fun(*args, **kwargs)
    return run


# Fast paths (eager dispatch overhead, issue 11): when the general promotion would hand the
# operands on unchanged, bind the primitive directly. `_PASS_DTYPES[promote]` is the set of dtypes
# an operand may have for that to hold (None: any dtype); a promotion rule missing from the table
# has no fast path.
_PASS_DTYPES = {promote_args: None, promote_args_inexact: _promote.INEXACT_DTYPES}


def _make_unary(name, lax_fn, promote, doc):
    prim = getattr(lax_fn, "primitive", None)
    fast = prim is not None and promote in _PASS_DTYPES
    passing = _PASS_DTYPES.get(promote)

    def direct(x, /):
        if fast and _promote.is_operand(x) and (passing is None or x.aval.dtype in passing):
            return bind(prim, x)
        (x,) = promote(name, x)
        return lax_fn(x)
    direct.__name__ = direct.__qualname__ = name
    # as jax defines its ufuncs, `jit(..., inline=True)`: inlined while staging, but under
    # forward mode of eager values the transformed body (the JVP rule's tangent arithmetic)
    # runs as one compiled program, so XLA fuses and rounds it as jax's does (the cookbook's
    # eager `jacfwd(jacrev(f))` through `tanh` prints jax's digits)
    as_program = jit(direct, inline=True)

    def fn(x, /):
        if type(x) is Array:  # `direct`'s fast path, inlined: two frames less per eager op
            if fast and (passing is None or x.aval.dtype in passing):
                return bind(prim, x)
        elif isinstance(x, Tracer) and _over_eager(current_trace()):
            return as_program(x)
        return direct(x)
    if fast:  # an eager repeat of the op skips even `fn` (the eager interpreter's short cut)
        fn = one_operand_op(prim, fn, None if passing is None else (
            lambda aval: aval.dtype in passing))
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "yax.numpy"  # where users find it (and what names it in cache keys)
    fn.__doc__ = doc
    return fn


def _over_eager(trace) -> bool:
    """Whether `trace` differentiates in forward mode (perhaps under vmap or linearize's partial
    evaluation) values that are eager: no staging below it (jit, make_jaxpr, eager grad's
    tape), where jax's inline jit dissolves into the enclosing program. (Under vmap alone a
    unary ufunc is one primitive either way: it stays one.)"""
    forward = False
    while trace is not None:
        if isinstance(trace, StagingTrace) and not isinstance(trace, PartialEvalTrace):
            return False
        forward = forward or isinstance(trace, JVPTrace)
        trace = trace.parent
    return forward


def _make_binary(name, lax_fn, promote, doc):
    prim = getattr(lax_fn, "primitive", None)
    fast = prim is not None and promote in _PASS_DTYPES
    inexact_only = _PASS_DTYPES.get(promote) is not None
    # lax_fn orders complex operands itself (lexicographically): its primitive must not see them
    orders_complex = getattr(lax_fn, "orders_complex", False)

    def fn(x1, x2, /):
        if fast:
            operands = _promote.fast_binary_operands(x1, x2, inexact_only)
            if operands is not None:
                if orders_complex and dtypes.is_complex(operands[0].aval.dtype):
                    return lax_fn(*operands)
                return bind(prim, *operands)
        x1, x2 = promote(name, x1, x2)
        return lax_fn(x1, x2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# --- simple families: one promotion rule plus one lax operation each ------------------------------

def _inexact(name, lax_fn):
    return _make_unary(name, lax_fn, promote_args_inexact,
                       f"Elementwise `{name}` (ints and bools promote to the default float).")


def _binary(name, lax_fn, promote=promote_args):
    return _make_binary(name, lax_fn, promote,
                        f"Elementwise `{name}` with NumPy broadcasting and JAX dtype promotion.")
