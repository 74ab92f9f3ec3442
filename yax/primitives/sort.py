"""The sort primitive: sorts several same-shape operands along one dimension, ordered
lexicographically by the first `num_keys` of them; the other operands follow the permutation.

Equivalent loop for one 1-D slice (stable):
    order = sorted(range(n), key=lambda i: tuple(key[i] for key in operands[:num_keys]))
    results = [operand[order] for operand in operands]

Floats compare in a total order in which -0.0 equals 0.0 and every NaN sorts after +inf (as
NumPy), so the comparator is a strict weak order even with NaNs present.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.primitives._checks import check_axes, dtype_kind_check

ir = mlir.ir


def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise errors.ShapeError("sort needs at least one operand")
    shapes = {a.shape for a in operands}
    if len(shapes) > 1:
        shown = ", ".join(a.str_short() for a in operands)
        raise errors.ShapeError(f"sort operands must share one shape, got {shown}")
    first = operands[0]
    if first.ndim == 0:
        raise errors.ShapeError(f"sort needs arrays of rank >= 1, got {first.str_short()}")
    check_axes("sort", (dimension,), first.ndim)
    if not 1 <= num_keys <= len(operands):
        raise errors.ShapeError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                                f"operands ({len(operands)})")
    for key in operands[:num_keys]:
        dtype_kind_check("sort key", key, "real_or_bool")
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in operands]


def _compare(a, b, direction: str, dt):
    if dtypes.is_inexact(dt):
        ctype = "TOTALORDER"
    else:
        ctype = "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(ctype))


def _canonical_float(x, dt):
    """-0.0 -> 0.0 and any NaN -> +NaN, so TOTALORDER ties zeros and puts NaNs last."""
    zero = mlir.constant(np.zeros((), dt))
    nan = mlir.constant(np.full((), np.nan, dt))
    is_zero = hlo.compare(x, zero, hlo.ComparisonDirectionAttr.get("EQ"),
                          compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))
    is_nan = hlo.compare(x, x, hlo.ComparisonDirectionAttr.get("NE"),
                         compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))
    return hlo.select(is_nan, nan, hlo.select(is_zero, zero, x))


def _lexicographic_less(pairs, key_dtypes):
    """lhs < rhs over key pairs: lt_0 or (eq_0 and (lt_1 or (eq_1 and ...)))."""
    result = None
    for (a, b), dt in reversed(list(zip(pairs, key_dtypes, strict=True))):
        if dtypes.is_inexact(dt):
            a, b = _canonical_float(a, dt), _canonical_float(b, dt)
        lt = _compare(a, b, "LT", dt)
        result = lt if result is None else hlo.or_(lt, hlo.and_(_compare(a, b, "EQ", dt), result))
    return result


def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
    op = hlo.SortOp([mlir.aval_type(a) for a in ctx.avals_out], list(operands),
                    dimension=dimension, is_stable=is_stable)
    all_dtypes = [a.dtype for a in ctx.avals_in]
    # the comparator takes (lhs_0, rhs_0, lhs_1, rhs_1, ...) as rank-0 tensors
    arg_types = [mlir.tensor_type((), dt) for dt in all_dtypes for _ in range(2)]
    block = op.comparator.blocks.append(*arg_types)
    args = list(block.arguments)
    pairs = [(args[2 * k], args[2 * k + 1]) for k in range(num_keys)]
    with ir.InsertionPoint(block):
        hlo.return_([_lexicographic_less(pairs, all_dtypes[:num_keys])])
    return list(op.results)


sort_p = Primitive("sort", multiple_results=True)
sort_p.abstract_eval = _sort_abstract_eval
sort_p.lower = _sort_lower
