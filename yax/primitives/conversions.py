"""Dtype conversions: convert_element_type (a value conversion, linear between inexact dtypes) and
bitcast_convert_type (a reinterpretation of the bits, not differentiable)."""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.ir import Literal
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.batching import move_batch_axis
from yax.interpreters.mlir import hlo
from yax.primitives._ad_rules import broadcast_batcher
from yax.primitives._elementwise_family import compare_type, dtype_of, real_dtype
from yax.primitives.checkify_rules import without_nan_check

# --- convert_element_type: linear between inexact dtypes; int/bool on either side: Zero ---------


def _convert_abstract_eval(x, *, new_dtype, weak_type=False):
    if np.dtype(new_dtype) not in dtypes.SUPPORTED:
        raise errors.DTypeError(f"convert_element_type: unsupported dtype {new_dtype}")
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_lower(ctx, x, *, new_dtype, weak_type=False):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if aval_in.dtype == aval_out.dtype:
        return [x]
    if dtypes.is_complex(aval_in.dtype) and not dtypes.is_complex(new_dtype):
        x = hlo.real(x)  # complex -> real keeps the real part (as NumPy, JAX)
        aval_in = ShapedArray(aval_in.shape, real_dtype(aval_in.dtype))
    if np.dtype(new_dtype) == dtypes.bool_:
        zero = mlir.full_like_aval(0, aval_in)
        return [hlo.compare(x, zero, hlo.ComparisonDirectionAttr.get("NE"),
                            compare_type=hlo.ComparisonTypeAttr.get(compare_type(aval_in.dtype)))]
    return [mlir.convert(x, aval_in, aval_out)]


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not (dtypes.is_inexact(dtype_of(x)) and dtypes.is_inexact(new_dtype)):
        return [out], [Zero(out.aval.strip_weak_type())]
    # the tangent takes the result's type, weak type included (as jax's rule)
    return [out], [convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)]


def _convert_transpose(cts, x, *, new_dtype, weak_type=False):
    # back to the operand's type, weak type included (as jax's rule); complex -> real keeps
    # the real part, the transpose of the real -> complex embedding
    return [convert_element_type_p.bind(cts[0], new_dtype=x.aval.dtype,
                                        weak_type=x.aval.weak_type)]


def _convert_fold(atoms, out_avals, *, new_dtype, weak_type=False):
    """While staging, as jax's: a scalar literal is converted at once (the program gets the
    converted literal, so XLA sees the constant), and a conversion that changes neither the
    dtype nor the weak type passes its operand through, with no equation."""
    (x,), (out,) = atoms, out_avals
    if isinstance(x, Literal):
        value = np.asarray(x.val)
        if dtypes.is_complex(value.dtype) and not dtypes.is_complex(new_dtype):
            value = value.real
        return [Literal(value.astype(new_dtype), out)]
    if (x.aval.dtype == out.dtype and x.aval.weak_type == out.weak_type
            and getattr(x.aval, "sharding", None) == getattr(out, "sharding", None)):
        return [x]
    return None


convert_element_type_p = Primitive("convert_element_type", abstract_eval=_convert_abstract_eval,
                                   lower=_convert_lower, jvp=_convert_jvp,
                                   transpose=_convert_transpose, fold=_convert_fold)
broadcast_batcher(convert_element_type_p)


# --- bitcast_convert_type ------------------------------------------------------------------------

def _bitcast_abstract_eval(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    old_size, new_size = dtypes.bit_width(x.dtype), dtypes.bit_width(new_dtype)
    if dtypes.is_bool(x.dtype) or dtypes.is_bool(new_dtype):
        raise errors.DTypeError("bitcast_convert_type does not support bool")
    if max(old_size, new_size) % min(old_size, new_size):
        raise errors.DTypeError(f"bitcast_convert_type from {x.dtype} to {new_dtype}: element "
                                f"sizes of {old_size} and {new_size} bits do not divide")
    if old_size == new_size:
        shape = x.shape
    elif old_size > new_size:
        shape = x.shape + (old_size // new_size,)
    else:
        ratio = new_size // old_size
        if not x.shape or x.shape[-1] != ratio:
            raise errors.ShapeError(
                f"bitcast_convert_type from {x.dtype} to {new_dtype} needs a last axis of size "
                f"{ratio}, got {x.str_short()}")
        shape = x.shape[:-1]
    return ShapedArray(shape, new_dtype)


def _bitcast_lower(ctx, x, *, new_dtype):
    return [hlo.bitcast_convert(mlir.aval_type(ctx.avals_out[0]), x)]


def _bitcast_jvp(primals, tangents, *, new_dtype):
    out = bitcast_convert_type_p.bind(primals[0], new_dtype=new_dtype)
    return [out], [Zero(out.aval.strip_weak_type())]


def _bitcast_batch(args, dims, *, new_dtype):
    # the last axis may appear or vanish, so the batch axis goes first, out of its way
    x = move_batch_axis(args[0], dims[0], 0, args[0].shape[dims[0]])
    return [bitcast_convert_type_p.bind(x, new_dtype=new_dtype)], [0]


bitcast_convert_type_p = Primitive("bitcast_convert_type", abstract_eval=_bitcast_abstract_eval,
                                   lower=_bitcast_lower, jvp=_bitcast_jvp, batch=_bitcast_batch)

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
convert_element_type_p.define(checkify=without_nan_check)
