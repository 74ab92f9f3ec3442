"""The dot_general primitive: a batched tensor contraction.

`dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`. The result
holds the batch dims, then lhs's free dims, then rhs's free dims (XLA's order). In NumPy terms:
    np.einsum over the named dims, e.g. ((2,), (1,)), ((0,), (0,)) is 'bij,bjk->bik'.
`preferred_element_type` names the result dtype (int8 x int8 -> int32 accumulates in int32).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo

ir = mlir.ir

PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


def _check_dims(lhs, rhs, dimension_numbers) -> None:
    (lc, rc), (lb, rb) = dimension_numbers
    both = f"lhs {lhs.str_short()} and rhs {rhs.str_short()}"
    for side, aval, dims in (("lhs", lhs, lc + lb), ("rhs", rhs, rc + rb)):
        if any(not 0 <= d < aval.ndim for d in dims) or len(set(dims)) != len(dims):
            raise errors.ShapeError(
                f"dot_general: {side} dims {dims} (contracting + batch) must be distinct axes of "
                f"{side} {aval.str_short()}")
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        if len(ld) != len(rd):
            raise errors.ShapeError(f"dot_general: {kind} dims {ld} and {rd} of {both} differ in "
                                    f"number")
        lsz = tuple(lhs.shape[d] for d in ld)
        rsz = tuple(rhs.shape[d] for d in rd)
        if lsz != rsz:
            raise errors.ShapeError(
                f"dot_general: {kind} dims of {both} must have equal sizes, but lhs dims {ld} have "
                f"sizes {lsz} and rhs dims {rd} have sizes {rsz}")


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type):
    _check_dims(lhs, rhs, dimension_numbers)
    if lhs.dtype != rhs.dtype and preferred_element_type is None:
        raise errors.DTypeError(
            f"dot_general needs operands of one dtype, got lhs {lhs.str_short()} and rhs "
            f"{rhs.str_short()}; convert one, or pass preferred_element_type")
    if precision is not None and (len(precision) != 2
                                  or any(p not in PRECISIONS for p in precision)):
        raise errors.DTypeError(f"dot_general: precision must be None or a pair from "
                                f"{PRECISIONS}, got {precision!r}")
    (lc, rc), (lb, rb) = dimension_numbers
    lfree = [d for i, d in enumerate(lhs.shape) if i not in lc + lb]
    rfree = [d for i, d in enumerate(rhs.shape) if i not in rc + rb]
    shape = tuple(lhs.shape[d] for d in lb) + tuple(lfree) + tuple(rfree)
    dt = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    weak = preferred_element_type is None and lhs.weak_type and rhs.weak_type
    return ShapedArray(shape, dt, weak)


def precision_config(precision):
    """A `precision_config` ArrayAttr for a (lhs, rhs) pair of precision names, or None."""
    if precision is None:
        return None
    return ir.ArrayAttr.get([hlo.PrecisionAttr.get(p) for p in precision])


def _dot_general_lower(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out = ctx.avals_out[0]
    # XLA's CPU dot has no bool form and wants one input dtype: compute in the result dtype (or
    # int32 for bool) and convert back; a bool sum of products is an `or` of `and`s, i.e. != 0
    work_dt = np.dtype(np.int32) if dtypes.is_bool(out.dtype) else out.dtype
    if (lhs_aval.dtype != rhs_aval.dtype or dtypes.is_bool(lhs_aval.dtype)
            or dtypes.is_inexact(lhs_aval.dtype) != dtypes.is_inexact(work_dt)):
        lhs = mlir.convert(lhs, lhs_aval, lhs_aval.update(dtype=work_dt))
        rhs = mlir.convert(rhs, rhs_aval, rhs_aval.update(dtype=work_dt))
    dnums = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    result = hlo.dot_general(mlir.tensor_type(out.shape, work_dt), lhs, rhs, dnums,
                             precision_config=precision_config(precision))
    if work_dt != out.dtype:
        zero = mlir.constant(np.zeros(out.shape, work_dt))
        result = hlo.compare(result, zero, hlo.ComparisonDirectionAttr.get("NE"),
                             compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
    return [result]


dot_general_p = Primitive("dot_general")
dot_general_p.abstract_eval = _dot_general_abstract_eval
dot_general_p.lower = _dot_general_lower
