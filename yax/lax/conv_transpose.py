"""yax.lax convolutions built on conv_general_dilated: conv_transpose (the gradient-style
"deconvolution"), conv_general_dilated_patches (im2col), conv_with_general_padding and the
output-shape helpers.

conv_transpose dilates the input by the strides (zeros between its elements) and convolves with
padding chosen so that, per spatial dim with input size n, stride s and dilated kernel size k:
  'SAME'  -> output size n * s;       'VALID' -> output size n * s + max(k - s, 0),
which is what a stride-s convolution with that padding maps back from (as jax.lax).
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import aval_of_value
from yax.lax.conv import conv_dimension_numbers, conv_general_dilated, padtype_to_pads
from yax.lax.elementwise import _convert_keep_weak, convert_element_type, mul
from yax.lax.reductions import reduce_sum
from yax.lax.shape import broadcast_in_dim, rev, transpose
from yax.primitives.conv import ConvDimensionNumbers
from yax.runtime.values import as_operand

__all__ = ["conv_transpose", "conv_general_dilated_patches", "conv_with_general_padding",
           "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple",
           "ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_local"]

ConvGeneralDilatedDimensionNumbers = ConvDimensionNumbers


def _tf_layouts(nspatial: int) -> tuple:
    """TensorFlow's default layouts for `nspatial` spatial dims: ('NHWC', 'HWIO', 'NHWC')."""
    letters = "HWDEFGIJKL"[:nspatial] if nspatial <= 3 else "".join(
        chr(ord("a") + i) for i in range(nspatial))
    letters = {1: "H", 2: "HW", 3: "HWD"}.get(nspatial, letters)
    return "N" + letters + "C", letters + "IO", "N" + letters + "C"


def _transpose_padding(k: int, s: int, padding: str) -> tuple:
    """(lo, hi) padding of the stride-dilated input for conv_transpose's output sizes.

    The kernel must first touch the input k - 1 positions early (a full correlation), less the
    low padding of the forward stride-s convolution being transposed: for 'SAME' that forward
    convolution (input n * s) pads max(k - s, 0) in total, the smaller half low."""
    if padding == "SAME":  # output n * s: k + s - 2 in total
        lo = k - 1 - max(k - s, 0) // 2
        return lo, k + s - 2 - lo
    if padding == "VALID":
        return k - 1, s - 1 + max(k - s, 0)
    raise errors.InvalidArgumentError(f"conv_transpose: padding must be 'SAME', 'VALID' or "
                                      f"(lo, hi) pairs, got {padding!r}")


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None, preferred_element_type=None,
                   use_consistent_padding: bool = False):
    """The transposed ("fractionally strided") convolution, as jax.lax.conv_transpose.

    Args:
      lhs: the input, laid out as `dimension_numbers` says (default NH..C, TensorFlow's).
      rhs: the kernel (default layout H..IO).
      strides: the upsampling factor per spatial dim (the lhs dilation).
      padding: 'SAME', 'VALID' or one (lo, hi) pair per spatial dim (applied to the dilated
        input, as in conv_general_dilated).
      rhs_dilation: kernel dilation per spatial dim.
      dimension_numbers: layouts as in conv_general_dilated.
      transpose_kernel: flip the kernel's spatial dims and swap its I and O dims, which makes
        this the gradient of conv_general_dilated with respect to its input.
    Returns:
      the transposed convolution.
    """
    del use_consistent_padding
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    nspatial = la.ndim - 2
    if dimension_numbers is None:
        dimension_numbers = _tf_layouts(nspatial)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    rhs_dilation = tuple(rhs_dilation or (1,) * nspatial)
    strides = tuple(int(s) for s in strides)
    k_sizes = [(ra.shape[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], rhs_dilation,
                                                          strict=True)]
    if isinstance(padding, str):
        pads = [_transpose_padding(k, s, padding) for k, s in zip(k_sizes, strides, strict=True)]
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        dn = ConvDimensionNumbers(dn.lhs_spec, (i, o) + tuple(dn.rhs_spec[2:]), dn.out_spec)
    return conv_general_dilated(lhs, rhs, (1,) * nspatial, pads, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=precision, preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a kernel of `filter_shape` would see (im2col).

    Args: as conv_general_dilated, with `filter_shape` (the spatial kernel size) in place of the
      kernel.
    Returns:
      an array laid out as the output spec says whose feature dim has C * prod(filter_shape)
      entries: for input channel c and kernel position p (row-major over filter_shape), entry
      c * prod(filter_shape) + p, as in JAX.
    """
    lhs = as_operand(lhs)
    la = aval_of_value(lhs)
    nspatial = la.ndim - 2
    filter_shape = tuple(int(f) for f in filter_shape)
    if len(filter_shape) != nspatial:
        raise errors.ShapeError(f"conv_general_dilated_patches: filter_shape {filter_shape} "
                                f"needs one size per spatial dim of {la.str_short()}")
    dn_given = conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
    channels = la.shape[dn_given.lhs_spec[1]]
    size = math.prod(filter_shape)
    # One-hot kernel in OI... layout: output feature c * size + p picks position p of channel c
    # (feature groups keep the channels apart).
    eye = np.eye(size, dtype=la.dtype).reshape((size, 1) + filter_shape)
    kernel = np.tile(eye, (channels,) + (1,) * (nspatial + 1))
    rhs_spec = tuple(range(nspatial + 2))
    dn = ConvDimensionNumbers(dn_given.lhs_spec, rhs_spec, dn_given.out_spec)
    kernel = convert_element_type(as_operand(kernel), la.dtype)
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with NC.../OI... layouts (jax.lax's convenience form)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count: int = 1):
    """The output shape of an NC.../OI... convolution with explicit (lo, hi) pads."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    spatial = tuple(max(0, (n + lo + hi - k) // s + 1) for n, k, s, (lo, hi) in
                    zip(lhs_shape[2:], rhs_shape[2:], strides, pads, strict=True))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def _permuted(shape, spec):
    return tuple(shape[i] for i in spec)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_general_dilated (no dilation) for the given layouts."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple(_permuted(lhs_shape, dn.lhs_spec), _permuted(rhs_shape, dn.rhs_spec),
                           window_strides, padding)
    return tuple(out[dn.out_spec.index(i)] for i in range(len(out)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of conv_transpose for the given layouts."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_p, rhs_p = _permuted(lhs_shape, dn.lhs_spec), _permuted(rhs_shape, dn.rhs_spec)
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in
                   zip(rhs_p[2:], window_strides, strict=True)]
    spatial = tuple((n - 1) * s + 1 + lo + hi - k + 1 for n, k, s, (lo, hi) in
                    zip(lhs_p[2:], rhs_p[2:], window_strides, padding, strict=True))
    out = (lhs_p[0], rhs_p[0]) + spatial
    return tuple(out[dn.out_spec.index(i)] for i in range(len(out)))




def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """A locally connected ("unshared") convolution: every output position has its own kernel.

    Args: as conv_general_dilated, with `filter_shape` the spatial window and `rhs` laid out as
      O, I, *output spatial dims (per `dimension_numbers`), I = in channels * prod(filter_shape)
      in the order of conv_general_dilated_patches.
    Returns: the output, laid out as the output spec says.
    """
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                                           dimension_numbers=dn, precision=precision)
    patches = transpose(patches, dn.out_spec)  # N, I, *spatial
    kernel = transpose(rhs, dn.rhs_spec)  # O, I, *spatial
    dtype, weak = dtypes.result_type(dtypes.scalar_type_of(patches), dtypes.scalar_type_of(kernel))
    n, i, *spatial = aval_of_value(patches).shape
    o = aval_of_value(kernel).shape[0]
    both = (n, o, i, *spatial)
    rest = tuple(range(2, len(both)))
    product = mul(broadcast_in_dim(_convert_keep_weak(patches, dtype, weak), both, (0, *rest)),
                  broadcast_in_dim(_convert_keep_weak(kernel, dtype, weak), both, (1, *rest)))
    out = reduce_sum(convert_element_type(product, _sum_dtype(dtype)), (2,))  # N, O, *spatial
    return transpose(out, tuple(int(i) for i in np.argsort(dn.out_spec)))


def _sum_dtype(dtype):
    """The accumulation dtype of jnp.sum: small integers and bools widen to the default int."""
    if dtypes.is_bool(dtype):
        return dtypes.canonicalize(dtypes.default_int())
    if dtypes.is_int(dtype):
        wide = dtypes.canonicalize(dtypes.default_uint() if dtypes.is_unsigned_int(dtype)
                                   else dtypes.default_int())
        return wide if np.dtype(dtype).itemsize < wide.itemsize else np.dtype(dtype)
    return np.dtype(dtype)
