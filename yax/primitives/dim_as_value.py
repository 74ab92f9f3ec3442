"""`dim_as_value`: a symbolic dimension of `yax.export` used as a number (jax's
`core.dimension_as_value`).

`jnp.mean` divides by an axis size; under `yax.export` with symbolic shapes that size is a
dimension expression (`b`, `2*b`), not an int. `dimension_as_value(d)` returns `d` itself when it
is an int, and otherwise binds this zero-operand primitive, whose param `dim` is the expression.
Only the symbolic lowering (yax/export/dynamic_lowering.py) can lower it, computing the value
from the argument shapes at run time; eager and jit programs never see it, since their shapes
are ints.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray, is_symbolic_dim
from yax.core.primitive import Primitive
from yax.core.trace import bind


def _abstract_eval(*, dim, dtype):
    return ShapedArray((), dtype)


def _lower(ctx, *, dim, dtype):
    raise errors.ExportError(f"the symbolic dimension {dim} used as a value can only be lowered "
                             f"by yax.export with symbolic shapes")


# no operands: no tangent and no batch axis can reach it (as iota)
dim_as_value_p = Primitive(
    "dim_as_value", abstract_eval=_abstract_eval, lower=_lower,
    batch=lambda args, dims, **params: ([dim_as_value_p.bind(**params)], [None]))


def dimension_as_value(d, dtype=None):
    """`d` if it is an int, else a traced integer scalar holding the symbolic dimension."""
    if not is_symbolic_dim(d):
        return d
    dt = np.dtype(dtype) if dtype is not None else dtypes.canonicalize(dtypes.default_int())
    return bind(dim_as_value_p, dim=d, dtype=dt)
