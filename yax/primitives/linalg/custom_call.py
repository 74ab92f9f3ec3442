"""Emitting LAPACK typed-FFI custom calls (CPU) from lowering rules.

jaxlib's CPU LAPACK targets are named `lapack_<p><routine>_ffi`, with <p> in s/d/c/z for
float32/float64/complex64/complex128. They follow one convention, which this module encodes:
- `api_version` 1 and the routine's options as small integer attributes in an
  `mhlo.backend_config` dictionary (e.g. potrf's `uplo` is the unsigned byte ord('L'));
- matrices are column-major (Fortran order) in their two minor dims; leading dims are batch dims
  the routine loops over, so a batch of matrices needs no extra work;
- lower-rank operands/results (pivots, taus, eigenvalues, the int32 `info` status) are
  row-major, i.e. default layout;
- most routines write their result into the input buffer, declared with an operand-to-output alias.
`info` != 0 means failure (not positive definite, no convergence): `nan_where_failed` turns such
batch members into NaN, as NumPy users expect (LAPACK leaves garbage there).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.interpreters import mlir
from yax.interpreters.mlir import hlo
from yax.runtime.lapack import ensure_lapack_registered

ir = mlir.ir

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def lapack_target(routine: str, dtype) -> str:
    """`lapack_<s|d|c|z><routine>_ffi` for `dtype` (registration is ensured as a side effect)."""

    ensure_lapack_registered()
    return f"lapack_{_PREFIX[np.dtype(dtype)]}{routine}_ffi"


def char_attr(c: str) -> ir.Attribute:
    """A LAPACK character option ('L', 'U', 'N', 'T', ...) as the ui8 attribute FFI expects."""
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(c))


def _layout(rank: int, column_major: bool) -> ir.DenseIntElementsAttr:
    # XLA layouts list dims minor-to-major: column-major matrices have the row dim most minor,
    # then the column dim, then the batch dims from the last to the first.
    if column_major and rank >= 2:
        order = [rank - 2, rank - 1] + list(range(rank - 3, -1, -1))
    else:
        order = list(range(rank - 1, -1, -1))
    return ir.DenseIntElementsAttr.get(np.asarray(order, dtype=np.int64),
                                       type=ir.IndexType.get())


def ffi_call(target: str, operands, avals_in, avals_out, *, attrs=None, aliases=None) -> list:
    """Emit `stablehlo.custom_call @target` with LAPACK's conventions; returns the results.

    Args:
      operands / avals_in: MLIR values and their avals.
      avals_out: result avals (include the int32 `info` status where the routine has one).
      attrs: name -> ir.Attribute for the `mhlo.backend_config` dictionary.
      aliases: {operand index: result index} buffers the routine overwrites in place.
    An operand or result of the highest rank among the operands is a (batch of) matrices and
    gets a column-major layout; lower-rank ones get the default layout.
    """
    top = max(len(a.shape) for a in avals_in)
    many = len(avals_out) > 1
    op = hlo.CustomCallOp(
        [mlir.aval_type(a) for a in avals_out], list(operands), target,
        has_side_effect=ir.BoolAttr.get(False),
        backend_config=ir.StringAttr.get(""),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=ir.ArrayAttr.get([_layout(len(a.shape), len(a.shape) == top)
                                          for a in avals_in]),
        result_layouts=ir.ArrayAttr.get([_layout(len(a.shape), len(a.shape) == top)
                                         for a in avals_out]),
        output_operand_aliases=ir.ArrayAttr.get([
            hlo.OutputOperandAlias.get(output_tuple_indices=[o] if many else [],
                                       operand_index=i, operand_tuple_indices=[])
            for i, o in (aliases or {}).items()]))
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get(dict(attrs or {}))
    return list(op.results)


def info_aval(batch_shape) -> ShapedArray:
    return ShapedArray(tuple(batch_shape), np.dtype(np.int32))


def nan_where_failed(x, x_aval, info, batch_shape, ok_direction: str = "EQ"):
    """Replace batch members whose LAPACK `info` is not ok (info <direction> 0) with NaN."""
    nb = len(batch_shape)
    zero = mlir.constant(np.zeros(batch_shape, np.int32))
    ok = hlo.compare(info, zero, hlo.ComparisonDirectionAttr.get(ok_direction),
                     compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
    ok = hlo.broadcast_in_dim(mlir.tensor_type(x_aval.shape, np.bool_), ok,
                              mlir.dense_i64(range(nb)))
    nan = np.nan if not dtypes.is_complex(x_aval.dtype) else complex(np.nan, np.nan)
    filler = mlir.constant(np.full(x_aval.shape, nan, dtype=x_aval.dtype))
    return hlo.select(ok, x, filler)


def keep_triangle(x, aval, lower: bool):
    """Zero the strict upper (lower=True) or strict lower triangle of each matrix: LAPACK
    leaves its input, or Householder vectors, in the other triangle."""
    shape = mlir.tensor_type(aval.shape, np.int32)
    i64 = ir.IntegerType.get_signless(64)
    rows = hlo.iota(shape, ir.IntegerAttr.get(i64, aval.ndim - 2))
    cols = hlo.iota(shape, ir.IntegerAttr.get(i64, aval.ndim - 1))
    keep = hlo.compare(cols, rows, hlo.ComparisonDirectionAttr.get("LE" if lower else "GE"),
                       compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))
    return hlo.select(keep, x, mlir.constant(np.zeros(aval.shape, aval.dtype)))


def slice_matrix(x, aval, rows: int, cols: int):
    """x[..., :rows, :cols] and its aval."""
    limit = tuple(aval.shape[:-2]) + (rows, cols)
    out = hlo.slice(x, mlir.dense_i64([0] * aval.ndim), mlir.dense_i64(limit),
                    mlir.dense_i64([1] * aval.ndim))
    return out, aval.update(shape=limit)


def pad_matrix(x, aval, rows: int, cols: int):
    """Zero-pad each matrix at the bottom/right to rows x cols; returns it and its aval."""
    hi = [0] * (aval.ndim - 2) + [rows - aval.shape[-2], cols - aval.shape[-1]]
    zero = mlir.constant(np.zeros((), aval.dtype))
    out = hlo.pad(x, zero, mlir.dense_i64([0] * aval.ndim), mlir.dense_i64(hi),
                  mlir.dense_i64([0] * aval.ndim))
    return out, aval.update(shape=tuple(aval.shape[:-2]) + (rows, cols))


def is_cpu(ctx) -> bool:
    return ctx.platform == "cpu"


def gpu_unsupported(name: str):
    """The GPU lowering of routines with no native StableHLO op is not written yet."""

    raise errors.NotImplementedRuleError(
        f"{name}: no GPU lowering yet (only cholesky and triangular_solve lower natively on GPU); "
        f"run it on CPU with YAX_PLATFORM=cpu")
