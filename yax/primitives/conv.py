"""The conv_general_dilated primitive: an N-d convolution (cross-correlation, as in XLA).

Layouts are index tuples: `ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)` where
lhs_spec = (batch dim, feature dim, *spatial dims), rhs_spec = (out-feature dim, in-feature dim,
*spatial dims), out_spec = (batch dim, feature dim, *spatial dims); the k-th spatial entries of
the three specs name the same spatial axis.

Per spatial axis: the input is dilated by `lhs_dilation` (holes between elements), padded by
(lo, hi), the kernel dilated by `rhs_dilation`, and windows taken every `window_strides` elements:
    out = (in_dilated + lo + hi - k_dilated) // stride + 1    (0 if the kernel does not fit)
`feature_group_count` splits input features into groups convolved with disjoint kernel slices;
`batch_group_count` does the same with the batch (used for weight gradients).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.primitives._checks import dtype_kind_check
from yax.primitives.dot import precision_config

ir = mlir.ir


class ConvDimensionNumbers(NamedTuple):
    """Index tuples describing the lhs, rhs (kernel) and output layouts (see module doc)."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def conv_output_spatial(in_sizes, k_sizes, window_strides, padding, lhs_dilation,
                        rhs_dilation) -> tuple:
    """The output's spatial sizes (in the order of the specs' spatial entries)."""
    out = []
    for n, k, s, (lo, hi), ld, rd in zip(in_sizes, k_sizes, window_strides, padding,
                                         lhs_dilation, rhs_dilation, strict=True):
        span = _dilated(n, ld) + lo + hi - _dilated(k, rd)
        out.append(span // s + 1 if span >= 0 else 0)
    return tuple(out)


def _check_params(lhs, rhs, dn, nspatial, params) -> None:
    both = f"lhs {lhs.str_short()} and rhs {rhs.str_short()}"
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise errors.ShapeError(f"conv_general_dilated needs lhs and rhs of one rank >= 2, got "
                                f"{both}")
    for spec in dn:
        if sorted(spec) != list(range(lhs.ndim)):
            raise errors.ShapeError(f"conv_general_dilated: dimension_numbers {tuple(dn)} must "
                                    f"be permutations of the {lhs.ndim} axes of {both}")
    for name in ("window_strides", "padding", "lhs_dilation", "rhs_dilation"):
        if len(params[name]) != nspatial:
            raise errors.ShapeError(f"conv_general_dilated: {name}={params[name]} needs one entry "
                                    f"per spatial dim ({nspatial}) of {both}")
    for name in ("window_strides", "lhs_dilation", "rhs_dilation"):
        if any(v < 1 for v in params[name]):
            raise errors.ShapeError(f"conv_general_dilated: {name} must be positive, got "
                                    f"{params[name]}")


def _check_groups(lhs, rhs, dn, fgc, bgc) -> None:
    both = f"lhs {lhs.str_short()} and rhs {rhs.str_short()}"
    in_feat, out_feat = lhs.shape[dn.lhs_spec[1]], rhs.shape[dn.rhs_spec[0]]
    k_in = rhs.shape[dn.rhs_spec[1]]
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise errors.ShapeError(f"conv_general_dilated: feature_group_count={fgc} and "
                                f"batch_group_count={bgc} must be >= 1 and not both > 1")
    if in_feat != k_in * fgc:
        raise errors.ShapeError(
            f"conv_general_dilated: lhs feature dim ({in_feat}) must equal the rhs in-feature dim "
            f"({k_in}) times feature_group_count ({fgc}), for {both}")
    if out_feat % fgc or out_feat % bgc:
        raise errors.ShapeError(
            f"conv_general_dilated: rhs out-feature dim ({out_feat}) must be divisible by "
            f"feature_group_count ({fgc}) and batch_group_count ({bgc}), for {both}")
    if lhs.shape[dn.lhs_spec[0]] % bgc:
        raise errors.ShapeError(f"conv_general_dilated: lhs batch dim must be divisible by "
                                f"batch_group_count ({bgc}), for {both}")


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type):
    dn = ConvDimensionNumbers(*dimension_numbers)
    nspatial = len(dn.lhs_spec) - 2
    params = dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                  rhs_dilation=rhs_dilation)
    _check_params(lhs, rhs, dn, nspatial, params)
    _check_groups(lhs, rhs, dn, feature_group_count, batch_group_count)
    dtype_kind_check("conv_general_dilated", lhs, "numeric")
    if lhs.dtype != rhs.dtype and preferred_element_type is None:
        raise errors.DTypeError(
            f"conv_general_dilated needs operands of one dtype, got lhs {lhs.str_short()} and rhs "
            f"{rhs.str_short()}; convert one, or pass preferred_element_type")
    spatial = conv_output_spatial([lhs.shape[d] for d in dn.lhs_spec[2:]],
                                  [rhs.shape[d] for d in dn.rhs_spec[2:]], **params)
    sizes = [lhs.shape[dn.lhs_spec[0]] // batch_group_count, rhs.shape[dn.rhs_spec[0]], *spatial]
    shape = [0] * lhs.ndim
    for axis, size in zip(dn.out_spec, sizes, strict=True):
        shape[axis] = size
    dt = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    return ShapedArray(shape, dt, preferred_element_type is None and lhs.weak_type
                       and rhs.weak_type)


def _conv_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count, precision,
                preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out = ctx.avals_out[0]
    if lhs_aval.dtype != out.dtype and (lhs_aval.dtype != rhs_aval.dtype
                                        or dtypes.is_inexact(lhs_aval.dtype)
                                        != dtypes.is_inexact(out.dtype)):
        # mixed inputs or a change of kind: compute in the result dtype
        lhs = mlir.convert(lhs, lhs_aval, lhs_aval.update(dtype=out.dtype))
        rhs = mlir.convert(rhs, rhs_aval, rhs_aval.update(dtype=out.dtype))
    dnums = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_input_feature_dimension=rhs_spec[1], kernel_output_feature_dimension=rhs_spec[0],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))
    pads = ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(-1, 2))
    result = hlo.convolution(
        mlir.aval_type(out), lhs, rhs, dnums, feature_group_count, batch_group_count,
        window_strides=mlir.dense_i64(window_strides), padding=pads,
        lhs_dilation=mlir.dense_i64(lhs_dilation), rhs_dilation=mlir.dense_i64(rhs_dilation),
        precision_config=precision_config(precision))
    return [result]


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.abstract_eval = _conv_abstract_eval
conv_general_dilated_p.lower = _conv_lower
