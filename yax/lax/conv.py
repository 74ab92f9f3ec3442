"""yax.lax convolutions: `conv_general_dilated`, the simple `conv`, and layout helpers.

Layouts may be given as strings, one letter per axis: lhs and output use 'N' (batch) and 'C'
(feature), the kernel 'O' (out feature) and 'I' (in feature); any other letters are spatial and
match across the three strings by letter (('NHWC', 'HWIO', 'NHWC') is TensorFlow's layout).
"""

from __future__ import annotations

from yax import errors
from yax.core.avals import aval_of_value
from yax.core.trace import bind
from yax.lax._util import out_sharding_param
from yax.lax.dot import _preferred, canonicalize_precision
from yax.primitives.conv import ConvDimensionNumbers, conv_general_dilated_p
from yax.runtime.values import as_operand

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_permutations", "conv_with_general_padding", "padtype_to_pads"]


def _spec_from_string(spec: str, pair: str, order: str) -> tuple:
    """Index tuple (pair[0] axis, pair[1] axis, spatial axes in the letter order `order`)."""
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spec.index(c) for c in order)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Canonicalise `dimension_numbers` (None, a ConvDimensionNumbers or three layout strings)
    for operands of the given shapes. None means ('NC...', 'OI...', 'NC...')."""
    ndim = len(lhs_shape)
    if len(rhs_shape) != ndim:
        raise errors.ShapeError(f"conv: lhs shape {tuple(lhs_shape)} and rhs shape "
                                f"{tuple(rhs_shape)} must have the same rank")
    if dimension_numbers is None:
        default = tuple(range(ndim))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    lhs, rhs, out = dimension_numbers
    if not all(isinstance(s, str) for s in (lhs, rhs, out)):
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    spatial = [c for c in rhs if c not in "OI"]
    ok = (len(lhs) == len(rhs) == len(out) == ndim and sorted(lhs) == sorted(out)
          and set(lhs) - set("NC") == set(spatial) and set("OI") <= set(rhs)
          and set("NC") <= set(lhs) and len(set(rhs)) == ndim and len(set(lhs)) == ndim)
    if not ok:
        raise errors.ShapeError(f"conv: layouts {dimension_numbers} do not describe operands of "
                                f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    return ConvDimensionNumbers(_spec_from_string(lhs, "NC", spatial),
                                _spec_from_string(rhs, "OI", spatial),
                                _spec_from_string(out, "NC", spatial))


def padtype_to_pads(in_shape, window_shape, window_strides, padding: str) -> list:
    """(lo, hi) pairs for 'VALID', 'SAME' (extra padding high) or 'SAME_LOWER' (extra low)."""
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise errors.ShapeError(f"conv: unknown padding {padding!r}; use 'SAME', 'SAME_LOWER', "
                                f"'VALID' or a sequence of (lo, hi) pairs")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-n // s)  # ceil: SAME keeps ceil(n / stride) outputs
        total = max((out - 1) * s + k - n, 0)
        small = total // 2
        pads.append((small, total - small) if kind == "SAME" else (total - small, small))
    return pads


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


@out_sharding_param("conv_general_dilated")
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General N-d convolution (XLA's ConvGeneralDilated).

    Args:
      lhs, rhs: input and kernel, laid out as `dimension_numbers` says.
      window_strides: one stride per spatial dim.
      padding: 'SAME', 'SAME_LOWER', 'VALID', or one (lo, hi) pair per spatial dim.
      lhs_dilation, rhs_dilation: input ("transposed conv") and kernel ("atrous") dilation.
      dimension_numbers: None, a ConvDimensionNumbers, or layout strings like
        ('NHWC', 'HWIO', 'NHWC').
    Returns:
      The convolution, laid out as the output spec says.

    `out_sharding`: the result's sharding (see `_util.out_sharding_of`).

    Example: `conv_general_dilated(x, w, (1, 1), 'SAME')` with x NCHW and w OIHW.
    """
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nspatial = max(la.ndim - 2, 0)
    lhs_dilation = tuple(int(d) for d in (lhs_dilation or (1,) * nspatial))
    rhs_dilation = tuple(int(d) for d in (rhs_dilation or (1,) * nspatial))
    window_strides = tuple(int(s) for s in window_strides)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):  # as jax.lax: the intended output size is ambiguous
            raise errors.ShapeError(
                f"conv_general_dilated: padding {padding!r} with lhs_dilation={lhs_dilation} "
                f"(a transposed convolution) for lhs {la.str_short()} and rhs {ra.str_short()} "
                f"is ambiguous; give explicit (lo, hi) padding pairs")
        in_sizes = [_dilated(la.shape[d], ld) for d, ld in zip(dn.lhs_spec[2:], lhs_dilation)]
        k_sizes = [_dilated(ra.shape[d], rd) for d, rd in zip(dn.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(in_sizes, k_sizes, window_strides, padding)
    padding = _explicit_pads(padding)
    return bind(conv_general_dilated_p, lhs, rhs, window_strides=window_strides, padding=padding,
                lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dn,
                feature_group_count=int(feature_group_count),
                batch_group_count=int(batch_group_count),
                precision=canonicalize_precision(precision),
                preferred_element_type=_preferred(preferred_element_type))


def _explicit_pads(padding) -> tuple:
    """((lo, hi), ...) from a sequence of integer pairs (lists, tuples or an (n, 2) array)."""
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as err:
        raise errors.ShapeError(
            f"conv_general_dilated: padding should be 'SAME', 'SAME_LOWER', 'VALID' or a "
            f"sequence of (low, high) integer pairs, one per spatial dim, got {padding!r}; "
            f"e.g. [(1, 1), (2, 2)] for 2-d") from err
    return pads


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """Convolution with NC... / OI... / NC... layouts, explicit padding and dilations.

    As `jax.lax.conv_with_general_padding`: `conv_general_dilated` without dimension numbers
    or feature groups. `padding` is 'SAME', 'SAME_LOWER', 'VALID' or (lo, hi) pairs.
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution with NC... input, OI... kernel and NC... output layouts, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_permutations(dimension_numbers):
    """(lhs_perm, rhs_perm, out_perm) of layout strings, e.g. ('NHWC', 'HWIO', 'NHWC')."""
    lhs, rhs, _ = dimension_numbers
    dn = conv_dimension_numbers((1,) * len(lhs), (1,) * len(rhs), dimension_numbers)
    return tuple(dn.lhs_spec), tuple(dn.rhs_spec), tuple(dn.out_spec)
