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
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.batching import move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._ad_rules import defjvp
from yax.primitives._checks import dtype_kind_check
from yax.primitives._lax import lax
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


# --- differentiation and batching rules ---------------------------------------------------------

def _shape(x) -> tuple:
    return tuple(aval_of_value(x).shape)


def _move_factor(x, src: int, dst: int, g: int):
    """Split axis `src` into (g, rest) and merge the g factor into axis `dst` as its major part:
    shapes [.., g*a (src), .., b (dst), ..] -> [.., a, .., g*b, ..]."""
    if g == 1:
        return x
    s = list(_shape(x))
    x = lax.reshape(x, s[:src] + [g, s[src] // g] + s[src + 1:])
    order = []
    for d in range(len(s)):
        if d == dst:
            order.append(src)  # the g factor, just before dst
        order.append(src + 1 if d == src else d + (d > src))
    x = lax.transpose(x, order)
    s[src], s[dst] = s[src] // g, s[dst] * g
    return lax.reshape(x, s)


def _fold(x, bdim: int, axis: int, groups: int, size: int):
    """Merge x's batch axis into `axis` (of the unbatched layout) as the middle factor of
    (groups, batch, rest), so that each of the `groups` groups stays contiguous."""
    x = move_batch_axis(x, bdim, 0, size)
    s = list(_shape(x)[1:])
    x = lax.reshape(x, [size] + s[:axis] + [groups, s[axis] // groups] + s[axis + 1:])
    x = lax.transpose(x, [*range(1, axis + 2), 0, *range(axis + 2, len(s) + 2)])
    return lax.reshape(x, s[:axis] + [s[axis] * size] + s[axis + 1:])


def _unfold(y, axis: int, groups: int, size: int):
    """Inverse of `_fold`: take the batch factor out of `axis`, as a new leading axis."""
    s = list(_shape(y))
    y = lax.reshape(y, s[:axis] + [groups, size, s[axis] // (groups * size)] + s[axis + 1:])
    y = lax.transpose(y, [axis + 1, *range(axis + 1), *range(axis + 2, len(s) + 2)])
    return lax.reshape(y, [size] + s[:axis] + [s[axis] // size] + s[axis + 1:])


def _swap(spec) -> tuple:
    return (spec[1], spec[0], *spec[2:])


def _conv(lhs, rhs, out_dt, **params):
    pet = None if aval_of_value(lhs).dtype == aval_of_value(rhs).dtype == out_dt else out_dt
    return lax.conv_general_dilated(lhs, rhs, **params, preferred_element_type=pet)


def _transpose_lhs(ct, rhs, aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision):
    """d lhs: the output cotangent convolved with the spatially reversed kernel, its in/out
    features swapped. Strides become lhs dilation (holes where no window started) and vice
    versa; the padding puts each input element under the outputs it fed."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    # kernel [G*O', I] -> [O', G*I]: each group's slice now maps back to its input features
    kernel = _move_factor(rhs, rhs_spec[0], rhs_spec[1], groups)
    pads = []
    for k, (lhs_ax, rhs_ax, out_ax) in enumerate(zip(*(s[2:] for s in dimension_numbers))):
        k_span = _dilated(_shape(rhs)[rhs_ax], rhs_dilation[k])
        lo = k_span - 1 - padding[k][0]
        hi = (_dilated(aval.shape[lhs_ax], lhs_dilation[k]) + padding[k][0]
              - _dilated(_shape(ct)[out_ax], window_strides[k]))
        pads.append((lo, hi))
    out = _conv(ct, lax.rev(kernel, rhs_spec[2:]), aval.dtype, window_strides=lhs_dilation,
                padding=pads, lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
                dimension_numbers=ConvDimensionNumbers(out_spec, _swap(rhs_spec), lhs_spec),
                feature_group_count=groups, batch_group_count=1, precision=precision)
    # batch groups came out as feature groups: move them back into the batch
    return _move_factor(out, lhs_spec[1], lhs_spec[0], batch_group_count)


def _transpose_rhs(ct, lhs, aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision):
    """d rhs: correlate lhs with the output cotangent, batch dims contracted (batch and feature
    roles swapped); strides become kernel dilation. Feature groups turn into batch groups and
    back, since the contracted axis is now the batch."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = []
    for k, (lhs_ax, rhs_ax, out_ax) in enumerate(zip(*(s[2:] for s in dimension_numbers))):
        lo = padding[k][0]
        hi = (_dilated(aval.shape[rhs_ax], rhs_dilation[k]) - 1 - lo
              + _dilated(_shape(ct)[out_ax], window_strides[k])
              - _dilated(_shape(lhs)[lhs_ax], lhs_dilation[k]))
        pads.append((lo, hi))
    return _conv(lhs, ct, aval.dtype, window_strides=rhs_dilation, padding=pads,
                 lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
                 dimension_numbers=ConvDimensionNumbers(_swap(lhs_spec), _swap(out_spec),
                                                        _swap(rhs_spec)),
                 feature_group_count=batch_group_count, batch_group_count=feature_group_count,
                 precision=precision)


def _conv_transpose(cts, lhs, rhs, *, preferred_element_type, **params):
    ct, = cts
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("conv_general_dilated is linear in one operand at a time; both are "
                         "undefined")
    if is_undefined(lhs):
        return [_transpose_lhs(ct, rhs, lhs.aval, **params), None]
    swapped = dict(params, precision=None if params["precision"] is None
                   else params["precision"][::-1])
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **swapped)]


def _conv_batch(args, dims, **params):
    """Loop-free: a batched lhs joins the conv's batch dim (inside each batch group); a batched
    rhs joins the output features (inside each feature group); both batched become extra
    feature groups (or batch groups, when the conv already uses those)."""
    (lhs, rhs), (lbd, rbd) = args, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = _shape(lhs)[lbd] if lbd is not None else _shape(rhs)[rbd]
    if lbd is not None and rbd is None:
        out = lax.conv_general_dilated(_fold(lhs, lbd, lhs_spec[0], bgc, size), rhs, **params)
        return [_unfold(out, out_spec[0], 1, size)], [0]
    if lbd is None:
        kernel = _fold(rhs, rbd, rhs_spec[0], fgc * bgc, size)
        out = lax.conv_general_dilated(lhs, kernel, **params)
        return [_unfold(out, out_spec[1], fgc * bgc, size)], [0]
    if bgc > 1:
        lhs = _fold(lhs, lbd, lhs_spec[0], 1, size)
        params = dict(params, batch_group_count=bgc * size)
    else:
        lhs = _fold(lhs, lbd, lhs_spec[1], 1, size)
        params = dict(params, feature_group_count=fgc * size)
    out = lax.conv_general_dilated(lhs, _fold(rhs, rbd, rhs_spec[0], 1, size), **params)
    return [_unfold(out, out_spec[1], 1, size)], [0]


def _conv_tangent(side):
    def rule(t, out, lhs, rhs, **params):
        operands = (t, rhs) if side == 0 else (lhs, t)
        return lax.conv_general_dilated(*operands, **params)
    return rule


conv_general_dilated_p = Primitive("conv_general_dilated", abstract_eval=_conv_abstract_eval,
                                   lower=_conv_lower, transpose=_conv_transpose, batch=_conv_batch)
defjvp(conv_general_dilated_p, _conv_tangent(0), _conv_tangent(1))
