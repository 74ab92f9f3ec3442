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
from yax.core.trace import bind
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._checks import check_axes, dtype_kind_check
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import without_nan_check

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


# --- differentiation and batching rules ---------------------------------------------------------

def _positions(aval, dimension):
    return lax.broadcasted_iota(np.int32, aval.shape, dimension)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """Every output is a permutation of its operand, so each tangent is permuted like it. The
    positions (an iota) become the last key: ties then keep their input order (stable), and the
    tangent sort below (same keys) reproduces the primal permutation exactly."""
    keys = [*primals[:num_keys], _positions(primals[0].aval, dimension)]
    params = dict(dimension=dimension, is_stable=True, num_keys=num_keys + 1)
    outs = bind(sort_p, *keys, *primals[num_keys:], **params)
    outs = outs[:num_keys] + outs[num_keys + 1:]
    moving = [t for t in tangents if type(t) is not Zero]
    if not moving:
        return outs, [Zero(o.aval.strip_weak_type()) for o in outs]
    # linear in the tangents: the keys are primal values (residuals under linearize)
    sorted_t = iter(bind(sort_p, *keys, *moving, **params)[num_keys + 1:])
    return outs, [t if type(t) is Zero else next(sorted_t) for t in tangents]


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    """The non-key operands enter linearly (permuted by the keys' order); the adjoint of a
    permutation is its inverse, which sorting by the permutation itself applies."""
    keys = operands[:num_keys]
    if any(is_undefined(k) for k in keys):
        raise ValueError("sort is linear only in its non-key operands; a key is undefined")
    aval = operands[0].aval if is_undefined(operands[0]) else keys[0].aval
    order = bind(sort_p, *keys, _positions(aval, dimension), dimension=dimension,
                 is_stable=True, num_keys=num_keys + 1)[-1]
    linear = [i for i in range(num_keys, len(operands)) if is_undefined(operands[i])]
    back = bind(sort_p, order, *(cts[i] for i in linear), dimension=dimension, is_stable=True,
                num_keys=1)[1:]
    result = [None] * len(operands)
    for i, ct in zip(linear, back, strict=True):
        result[i] = ct
    return result


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    size = axis_size_of(args, dims)
    # all operands share one shape, so unbatched ones are broadcast along the new axis 0
    moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims, strict=True)]
    outs = bind(sort_p, *moved, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return list(outs), [0] * len(outs)


sort_p = Primitive("sort", multiple_results=True, abstract_eval=_sort_abstract_eval,
                   lower=_sort_lower, jvp=_sort_jvp, transpose=_sort_transpose, batch=_sort_batch)

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
sort_p.define(checkify=without_nan_check)
