"""The dot_general primitive: a batched tensor contraction.

`dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`. The result
holds the batch dims, then lhs's free dims, then rhs's free dims (XLA's order). In NumPy terms:
    np.einsum over the named dims, e.g. ((2,), (1,)), ((0,), (0,)) is 'bij,bjk->bik'.
`preferred_element_type` names the result dtype (int8 x int8 -> int32 accumulates in int32).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.config import MATMUL_PRECISIONS, config
from yax.core import dtypes
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.batching import move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._ad_rules import defjvp
from yax.primitives._lax import lax
from yax.runtime.named_sharding import result_sharding

ir = mlir.ir

PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


class _Both:
    def __init__(self, lhs, rhs):
        self.lhs, self.rhs = lhs, rhs

    def __str__(self):
        return f"lhs {self.lhs.str_short()} and rhs {self.rhs.str_short()}"


def _check_dims(lhs, rhs, dimension_numbers) -> None:
    (lc, rc), (lb, rb) = dimension_numbers
    both = _Both(lhs, rhs)  # formatted only if an error is raised
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
    """A `precision_config` ArrayAttr for a (lhs, rhs) pair of precision names, or None.

    `precision=None` takes the precision `yax.default_matmul_precision` sets (resolved here, at
    lowering, so the jit key and the eager cache carry the option instead of the params)."""
    if precision is None:
        default = config.default_matmul_precision
        if default is None:
            return None
        precision = (MATMUL_PRECISIONS[default],) * 2
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


# --- differentiation and batching rules ---------------------------------------------------------

def _free(ndim, *used) -> list:
    taken = set().union(*map(set, used))
    return [d for d in range(ndim) if d not in taken]


def _transpose_operand(ct, other, aval, dims, other_first: bool, precision,
                       preferred_element_type):
    """The cotangent of the operand `aval` of a dot_general with `other`.

    dims = ((contracting, other_contracting), (batch, other_batch)) seen from the operand.
    ct is laid out (batch, lhs free, rhs free); `other_first` says the other operand is lhs.
    Contracting ct with `other` over other's free dims leaves (batch, our free, other's
    contracting dims in increasing order); those pair with our contracting dims, and a final
    transpose restores our layout.
    """
    (xc, oc), (xb, ob) = dims
    other_aval = aval_of_value(other)
    x_free = _free(aval.ndim, xc, xb)
    o_free = _free(other_aval.ndim, oc, ob)
    nb = len(xb)
    first = nb + (len(o_free) if other_first else len(x_free))
    ct_o_free = range(nb, nb + len(o_free)) if other_first else range(first, first + len(o_free))
    out_dt = None
    if not (aval_of_value(ct).dtype == other_aval.dtype == aval.dtype):
        out_dt = aval.dtype
    prec = None if precision is None else (precision[::-1] if other_first else precision)
    order = list(xb) + x_free + [xc[list(oc).index(d)] for d in sorted(oc)]
    # typed as the primal (jax's transpose passes out_sharding so): a data-parallel weight
    # gradient contracts a sharded batch dimension, which alone would be ambiguous
    spec = tuple(aval.sharding.spec) if getattr(aval, "sharding", None) is not None else ()
    spec += (None,) * (aval.ndim - len(spec))
    with result_sharding("dot_general", [spec[d] for d in order]):
        r = lax.dot_general(ct, other, ((tuple(ct_o_free), tuple(o_free)),
                                        (tuple(range(nb)), ob)),
                            precision=prec, preferred_element_type=out_dt)
    return lax.transpose(r, [order.index(d) for d in range(aval.ndim)])


def _dot_general_transpose(cts, lhs, rhs, *, dimension_numbers, precision,
                           preferred_element_type):
    ct, = cts
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("dot_general is linear in one operand at a time; both are undefined")
    if is_undefined(lhs):
        return [_transpose_operand(ct, rhs, lhs.aval, ((lc, rc), (lb, rb)), False, precision,
                                   preferred_element_type), None]
    return [None, _transpose_operand(ct, lhs, rhs.aval, ((rc, lc), (rb, lb)), True, precision,
                                     preferred_element_type)]


def _dot_general_batch(args, dims, *, dimension_numbers, precision, preferred_element_type):
    """Both batched: the batch axes become a new leading pair of batch dims. One batched: its
    batch axis is one more free dim, which lands among that operand's free dims in the output."""
    (lhs, rhs), (lbd, rbd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = dict(precision=precision, preferred_element_type=preferred_element_type)
    if lbd is not None and rbd is not None:
        size = aval_of_value(lhs).shape[lbd]
        lhs, rhs = move_batch_axis(lhs, lbd, 0, size), move_batch_axis(rhs, rbd, 0, size)

        def up(ds):
            return tuple(d + 1 for d in ds)
        dn = ((up(lc), up(rc)), ((0, *up(lb)), (0, *up(rb))))
        return [lax.dot_general(lhs, rhs, dn, **params)], [0]
    bdim = lbd if lbd is not None else rbd

    def skip(ds):
        return tuple(d + (d >= bdim) for d in ds)
    if lbd is not None:
        dn = ((skip(lc), rc), (skip(lb), rb))
        out_dim = len(lb) + _free(aval_of_value(lhs).ndim, dn[0][0], dn[1][0]).index(bdim)
    else:
        dn = ((lc, skip(rc)), (lb, skip(rb)))
        n_lhs_free = aval_of_value(lhs).ndim - len(lc) - len(lb)
        out_dim = (len(lb) + n_lhs_free
                   + _free(aval_of_value(rhs).ndim, dn[0][1], dn[1][1]).index(bdim))
    return [lax.dot_general(lhs, rhs, dn, **params)], [out_dim]


def _dot_tangent(side):
    def rule(t, out, lhs, rhs, **params):
        return lax.dot_general(t, rhs, **params) if side == 0 else lax.dot_general(lhs, t, **params)
    return rule


dot_general_p = Primitive("dot_general", abstract_eval=_dot_general_abstract_eval,
                          lower=_dot_general_lower, transpose=_dot_general_transpose,
                          batch=_dot_general_batch)
defjvp(dot_general_p, _dot_tangent(0), _dot_tangent(1))
