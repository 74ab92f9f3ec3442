"""Helpers for building StableHLO with jaxlib's MLIR bindings: contexts, types, constants.

Every jaxlib.mlir detail that lowering rules share lives here, so a jaxlib upgrade touches one
place. Rules import `hlo` and the helpers below.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, func, sdy  # noqa: F401  (re-exported; sdy: Shardy)
from jaxlib.mlir.dialects import stablehlo as hlo  # noqa: F401

from yax import errors
from yax.core import dtypes

# The dialects jaxlib's extension registers, built once (appending it to a context is cheap).
_REGISTRY = ir.DialectRegistry()
_jax_mlir_ext.register_dialects(_REGISTRY)


def make_context(all_dialects: bool = True) -> ir.Context:
    """A fresh MLIR context with StableHLO, CHLO, Shardy and func loaded.

    `all_dialects=False` loads only those, the ones yax's own lowering rules emit: loading every
    dialect jaxlib registers costs about 4 ms a context, as much as compiling a small program
    (yax lowers one module per compile). Such a context loads the rest on demand with
    `ctx.load_all_available_dialects()`, as lowering does for rules written against jax's API
    (`yax._jax_names.interpreters.mlir`), which may emit ops of any dialect.
    """
    ctx = ir.Context()
    ctx.append_dialect_registry(_REGISTRY)
    if all_dialects:
        ctx.load_all_available_dialects()
    else:
        ctx.dialects["func"]  # loads it (by lookup)
    hlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)  # not loaded by load_all_available_dialects; needed by meshes
    return ctx


_ELEMENT_TYPES = {
    dtypes.bool_: lambda: ir.IntegerType.get_signless(1),
    dtypes.int8: lambda: ir.IntegerType.get_signless(8),
    dtypes.int16: lambda: ir.IntegerType.get_signless(16),
    dtypes.int32: lambda: ir.IntegerType.get_signless(32),
    dtypes.int64: lambda: ir.IntegerType.get_signless(64),
    dtypes.uint8: lambda: ir.IntegerType.get_unsigned(8),
    dtypes.uint16: lambda: ir.IntegerType.get_unsigned(16),
    dtypes.uint32: lambda: ir.IntegerType.get_unsigned(32),
    dtypes.uint64: lambda: ir.IntegerType.get_unsigned(64),
    dtypes.bfloat16: lambda: ir.BF16Type.get(),
    dtypes.float16: lambda: ir.F16Type.get(),
    dtypes.float32: lambda: ir.F32Type.get(),
    dtypes.float64: lambda: ir.F64Type.get(),
    dtypes.complex64: lambda: ir.ComplexType.get(ir.F32Type.get()),
    dtypes.complex128: lambda: ir.ComplexType.get(ir.F64Type.get()),
    dtypes.int4: lambda: ir.IntegerType.get_signless(4),
    dtypes.int2: lambda: ir.IntegerType.get_signless(2),
    dtypes.uint4: lambda: ir.IntegerType.get_unsigned(4),
    dtypes.uint2: lambda: ir.IntegerType.get_unsigned(2),
    dtypes.float4_e2m1fn: lambda: ir.Float4E2M1FNType.get(),
    # float8_e4m3fn -> ir.Float8E4M3FNType, and so on for the eight of them
    **{dt: getattr(ir, f"Float8{dt.name[len('float8_'):].upper()}Type").get
       for dt in dtypes.FLOAT8S},
}


def element_type(dtype) -> ir.Type:
    try:
        return _ELEMENT_TYPES[np.dtype(dtype)]()
    except KeyError:
        if np.dtype(dtype) in dtypes.FLOAT6S:
            # StableHLO has f6E2M3FN/f6E3M2FN, but this jaxlib's XLA aborts the process compiling
            # them (and jax cannot make such arrays either): refuse before reaching it
            raise errors.DTypeError(
                f"{np.dtype(dtype)} arrays cannot be computed with: XLA in this jaxlib does not "
                f"compile programs of that type; use it as a dtype (promotion, finfo) only, "
                f"or compute in float4_e2m1fn/bfloat16") from None
        raise


# XLA's CPU backend (jaxlib 0.10) aborts the process compiling a concatenate or pad of 2-bit
# arrays (jax too); those ops run on the 8-bit type of the same signedness instead, which holds
# every 2-bit value exactly
_WIDER_STORAGE = {dtypes.int2: dtypes.int8, dtypes.uint2: dtypes.uint8}


def on_wider_storage(build, values, avals_in, aval_out) -> ir.Value:
    """`build(values)` (one result of `aval_out`'s type), computed on 8-bit values for the
    2-bit types (see above) and converted back."""
    wide = _WIDER_STORAGE.get(np.dtype(aval_out.dtype))
    if wide is None:
        return build(list(values))
    widened = [hlo.convert(tensor_type(a.shape, wide), v)
               for v, a in zip(values, avals_in, strict=True)]
    return hlo.convert(aval_type(aval_out), build(widened))


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    try:
        return ir.RankedTensorType.get(list(shape), element_type(dtype))
    except Exception:  # noqa: BLE001  symbolic dimensions (yax.export) are dynamic: `?`
        if not any(getattr(d, "_yax_symbolic_dim", False) for d in shape):
            raise
        dyn = ir.ShapedType.get_dynamic_size()
        return ir.RankedTensorType.get(
            [dyn if getattr(d, "_yax_symbolic_dim", False) else int(d) for d in shape],
            element_type(dtype))


def aval_type(aval) -> ir.RankedTensorType:
    return tensor_type(aval.shape, aval.dtype)


def constant(value, dtype=None) -> ir.Value:
    """A StableHLO constant holding `value` (a NumPy array or scalar), as `dtype`."""
    value = np.asarray(value, dtype=dtype)
    etype = element_type(value.dtype)
    ttype = ir.RankedTensorType.get(list(value.shape), etype)
    if value.size > 1 and value.dtype.kind != "c" and np.all(value == value.flat[0]):
        # splat: one element, so large constant fills stay small in the module
        attr = ir.DenseElementsAttr.get_splat(
            ttype, ir.DenseElementsAttr.get(np.ascontiguousarray(value.reshape(-1)[:1]),
                                            type=etype, shape=[]).get_splat_value())
    elif value.dtype == np.bool_:
        attr = _bool_elements(value, etype)
    else:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=etype,
                                        shape=list(value.shape))
    return hlo.constant(attr)


def _bool_elements(value: np.ndarray, etype) -> ir.DenseElementsAttr:
    """A bool array's elements: one byte per element, the layout of jaxlib 0.10's MLIR; older
    MLIR packed eight to a byte and refuses the byte layout for more than one element."""
    try:
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=etype,
                                        shape=list(value.shape))
    except ValueError:
        return ir.DenseElementsAttr.get(np.packbits(np.ascontiguousarray(value), axis=None,
                                                    bitorder="little"),
                                        type=etype, shape=list(value.shape))


def full_like_aval(value, aval) -> ir.Value:
    """A constant of `aval`'s shape and dtype filled with `value`."""
    return constant(np.full(aval.shape, value, dtype=aval.dtype))


def dense_i64(values) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def dense_bool(values) -> ir.DenseBoolArrayAttr:
    return ir.DenseBoolArrayAttr.get([bool(v) for v in values])


def i64_elements(values) -> ir.DenseIntElementsAttr:
    return ir.DenseIntElementsAttr.get(np.asarray(values, dtype=np.int64))


def convert(value: ir.Value, aval_in, aval_out) -> ir.Value:
    if np.dtype(aval_in.dtype) == np.dtype(aval_out.dtype):
        return value
    return hlo.convert(aval_type(aval_out), value)


def broadcast_to(value: ir.Value, aval_in, shape, dtype=None) -> ir.Value:
    """Broadcast a value whose aval is `aval_in` to `shape` (numpy rules, trailing alignment)."""
    if tuple(aval_in.shape) == tuple(shape):
        return value
    offset = len(shape) - len(aval_in.shape)
    dims = list(range(offset, len(shape)))
    return hlo.broadcast_in_dim(tensor_type(shape, dtype or aval_in.dtype), value, dense_i64(dims))


def scalar_region(op, dtype, n_args: int, ret_types=None):
    """Append a block with `n_args` rank-0 `dtype` arguments to `op`'s first region."""
    scalar = tensor_type((), dtype)
    block = op.regions[0].blocks.append(*([scalar] * n_args))
    return block
