"""Argument handling shared by yax.numpy.linalg and yax.scipy.linalg."""

from __future__ import annotations

import functools

import numpy as np

from yax import errors, tree_util
from yax.compile.when_eager import CompiledVariants
from yax.config import config
from yax.core import dtypes
from yax.core.trace import is_eager
from yax.lax.linalg import broadcast_batch_dims
from yax.numpy._promote import check_arraylike, promote_dtypes_inexact, to_operand
from yax.primitives.linalg import _common as C
from yax.runtime.array import Array
from yax.runtime.values import aval_of
from yax.transforms.jit import jit

__all__ = ["as_matrix", "as_matrix_pair", "broadcast_batch_dims", "C", "compiled_when_eager"]


def _check_dtype(name: str, x) -> None:
    aval = aval_of(x)
    if not dtypes.is_inexact(aval.dtype):
        raise errors.DTypeError(
            f"{name} needs floating or complex input, got {aval.str_short()}; convert it "
            f"first, e.g. `x.astype(jnp.float32)`.")


def as_matrix(name: str, x, *, square: bool = False):
    """One (batch of) matrices: an operand with the dtype and shape checked."""
    check_arraylike(name, x)
    x = to_operand(x)
    _check_dtype(name, x)
    C.check_matrix(name, aval_of(x), square=square)
    return x


def as_matrix_pair(name: str, a, b):
    """a (..., n, n) and b with one common inexact dtype (no shape checks on b here)."""
    check_arraylike(name, a, b)
    a, b = to_operand(a), to_operand(b)
    for x in (a, b):
        _check_dtype(name, x)
    a, b = promote_dtypes_inexact(a, b)
    C.check_matrix(name, aval_of(a), square=True)
    return a, b


def eps(dtype) -> float:
    return float(np.finfo(C.real_dtype(dtype)).eps)


# --- eager linear algebra as one executable --------------------------------------------------

_STATIC_LEAF_TYPES = (bool, int, float, complex, str)


def compiled_when_eager(fun):
    """Run `fun` as one compiled program when it is called eagerly on concrete Arrays.

    A linear-algebra routine is several primitives (an LU, a permutation, two triangular
    solves...); applied eagerly, each would compile and run on its own. When every pytree leaf
    of the arguments is an `Array` or a Python scalar/string (static: part of the key), and no
    transformation is active, the call goes through a `yax.jit` of `fun` cached per argument
    structure and static values, so a shape compiles once and runs as one executable. Anything
    else (tracers, NumPy arrays, lists, debugging flags) calls `fun` directly, so
    transformations see the same primitives as before.
    """
    variants = CompiledVariants(getattr(fun, "__name__", "linalg"), jit)

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        if (not is_eager() or config.disable_jit or config.debug_nans
                or config.debug_infs):
            return fun(*args, **kwargs)
        if not kwargs and all(type(a) is Array for a in args):  # the common call: no flatten
            jitted = variants.get(len(args))
            if jitted is not None:
                return jitted(*args)
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        dynamic, statics = [], []
        for i, leaf in enumerate(leaves):
            if type(leaf) is Array:
                dynamic.append(i)
            elif type(leaf) in _STATIC_LEAF_TYPES:
                statics.append((i, type(leaf), leaf))
            else:
                return fun(*args, **kwargs)
        if not dynamic:
            return fun(*args, **kwargs)
        key = (tree, tuple(statics))
        try:
            jitted = variants.get(key)
        except TypeError:  # an unhashable static value (should not happen for these types)
            return fun(*args, **kwargs)
        if jitted is None:
            jitted = variants.get_or_make(
                key, lambda: _flat(fun, tree, len(leaves), dynamic, statics))
            if not kwargs and not statics and len(dynamic) == len(args):
                variants.put(len(args), jitted)  # positional Arrays only: keyed by their count
        return jitted(*[leaves[i] for i in dynamic])
    wrapper.eager_variants = variants  # for tests: which variants were compiled
    return wrapper


def _flat(fun, tree, n_leaves: int, dynamic: list, statics: list):
    """`fun` taking only the Array leaves, positionally (so its `jit` takes the fast path)."""

    template = [None] * n_leaves
    for i, _, value in statics:
        template[i] = value

    def flat(*arrays):
        full = list(template)
        for i, x in zip(dynamic, arrays, strict=True):
            full[i] = x
        args, kwargs = tree_util.tree_unflatten(tree, full)
        return fun(*args, **kwargs)
    flat.__name__ = flat.__qualname__ = getattr(fun, "__name__", "linalg")
    return flat
