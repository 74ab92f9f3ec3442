"""LU factorisation with partial pivoting: `lu`.

lu(a) for a of shape (..., m, n), k = min(m, n), returns
- lu (..., m, n): L below the diagonal (unit diagonal implied, m x k) and U on and above (k x n);
- pivots (..., k) int32: row i was swapped with row pivots[i] (0-based, applied in order);
- permutation (..., m) int32: the rows those swaps select, a[..., permutation, :] = L @ U
  (computed in the lowering by a small loop; lu_pivots_to_permutation does the same in yax).
Singular matrices factor fine (U has a zero on its diagonal); CPU lowering is LAPACK getrf. NaN
only if LAPACK reports an invalid argument.
"""

from __future__ import annotations

import numpy as np

from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo
from yax.primitives._lax import lax
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc
from yax.primitives.linalg.triangular import triangular_solve

ir = mlir.ir


def _lu_abstract_eval(a):
    C.check_matrix("lu", a)
    k = min(a.shape[-2:])
    batch = tuple(a.shape[:-2])
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (k,), np.dtype(np.int32)),
            ShapedArray(batch + (a.shape[-2],), np.dtype(np.int32))]


def _lu_lower(ctx, a):
    aval, = ctx.avals_in
    lu_aval, piv_aval, perm_aval = ctx.avals_out
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("lu")
    batch = aval.shape[:-2]
    lu, piv, info = cc.ffi_call(cc.lapack_target("getrf", aval.dtype), [a], [aval],
                                [lu_aval, piv_aval, cc.info_aval(batch)], aliases={0: 0})
    piv = hlo.subtract(piv, mlir.constant(np.ones(piv_aval.shape, np.int32)))  # 1-based
    # info > 0 only says U is singular, which is a valid factorisation
    return [cc.nan_where_failed(lu, aval, info, batch, ok_direction="GE"), piv,
            _permutation_lower(piv, piv_aval, perm_aval)]


def _i32(v):
    return mlir.constant(np.int32(v))


def _permutation_lower(piv, piv_aval, perm_aval):
    """A stablehlo.while loop: perm = iota; for i < k: swap perm[..., i] and perm[..., piv[i]].

    The swap is written with masks (iota == i, iota == piv[..., i]) and a sum over the last dim,
    so batch members with different pivots need no gather."""
    nb = piv_aval.ndim - 1
    batch, k = tuple(piv_aval.shape[:-1]), piv_aval.shape[-1]
    perm_t = mlir.aval_type(perm_aval)
    i64 = ir.IntegerType.get_signless(64)
    start = hlo.iota(perm_t, ir.IntegerAttr.get(i64, nb))
    if k == 0:  # empty matrix: no swaps (and no pivot to slice)
        return start
    state = [_i32(0), piv, start]
    types = [v.type for v in state]
    op = hlo.WhileOp(types, state)
    cond = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond):
        hlo.return_([hlo.compare(cond.arguments[0], _i32(k), hlo.ComparisonDirectionAttr.get("LT"),
                                 compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))])
    body = op.body.blocks.append(*types)
    with ir.InsertionPoint(body):
        i, pivs, perm = body.arguments
        iota = hlo.iota(perm_t, ir.IntegerAttr.get(i64, nb))
        zero = _i32(0)
        p = hlo.dynamic_slice(pivs, [zero] * nb + [i], mlir.dense_i64(batch + (1,)))
        p = hlo.broadcast_in_dim(perm_t, p, mlir.dense_i64(range(nb + 1)))
        at_i = _eq(iota, hlo.broadcast_in_dim(perm_t, i, mlir.dense_i64([])))
        at_p = _eq(iota, p)
        perm_i = _pick(perm, at_i, perm_t, batch, nb)
        perm_p = _pick(perm, at_p, perm_t, batch, nb)
        new = hlo.select(at_i, perm_p, hlo.select(at_p, perm_i, perm))
        hlo.return_([hlo.add(i, _i32(1)), pivs, new])
    return op.results[2]


def _eq(x, y):
    return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get("EQ"),
                       compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


def _pick(perm, mask, perm_t, batch, nb):
    """perm's entry where `mask` (one per row) holds, broadcast back along the last dim."""
    masked = hlo.select(mask, perm, mlir.constant(np.zeros(batch + (perm_t.shape[-1],),
                                                           np.int32)))
    scalar = mlir.tensor_type((), np.int32)
    op = hlo.ReduceOp([mlir.tensor_type(batch, np.int32)], [masked], [_i32(0)],
                      mlir.dense_i64([nb]))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    return hlo.broadcast_in_dim(perm_t, op.result, mlir.dense_i64(range(nb)))


def lu_pivots_to_permutation(pivots, m: int):
    """The row permutation (..., m) int32 that getrf's pivots (..., k) describe.

    Equivalent loop: perm = arange(m); for i in range(k): swap perm[i], perm[pivots[i]].
    """
    nb = pivots.ndim - 1
    batch = tuple(pivots.shape[:-1])
    pivots = lax.convert_element_type(pivots, np.int32)
    iota = lax.broadcasted_iota(np.int32, batch + (m,), nb)

    def spread(v):  # (...,) -> (..., m)
        return lax.broadcast_in_dim(v, batch + (m,), tuple(range(nb)))

    def body(i, perm):
        i = lax.convert_element_type(i, np.int32)
        p = spread(lax.dynamic_index_in_dim(pivots, i, axis=nb, keepdims=False))
        at_i = lax.eq(iota, lax.broadcast_in_dim(i, batch + (m,), ()))
        at_p = lax.eq(iota, p)
        zero = lax.broadcast_in_dim(np.zeros((), np.int32), batch + (m,), ())
        perm_i = spread(lax.reduce_sum(lax.select(at_i, perm, zero), (nb,)))
        perm_p = spread(lax.reduce_sum(lax.select(at_p, perm, zero), (nb,)))
        return lax.select(at_i, perm_p, lax.select(at_p, perm_i, perm))

    return lax.fori_loop(0, pivots.shape[-1], body, iota)


def permutation_matrix(perm, dtype):
    """P with P[..., i, j] = (perm[..., i] == j), so P @ a == a[..., perm, :]."""
    m = perm.shape[-1]
    shape = tuple(perm.shape) + (m,)
    rows = lax.broadcast_in_dim(perm, shape, tuple(range(perm.ndim)))
    cols = lax.broadcasted_iota(np.int32, shape, perm.ndim)
    return lax.convert_element_type(lax.eq(rows, cols), dtype)


def _lu_jvp(primals, tangents):
    """a[perm] = L U; with X = L1^{-1} (P da)_1 U1^{-1} on the leading k x k block:
    dL1 = L1 tril(X, -1), dU1 = triu(X) U1; the rest of L (m > n) or U (m < n) follows from
    the remaining rows/columns of P da = dL U + L dU."""
    a, = primals
    a_dot, = tangents
    lu, piv, perm = lu_p.bind(a)
    int_t = [Zero(piv.aval), Zero(perm.aval)]
    if type(a_dot) is Zero:
        return [lu, piv, perm], [Zero(lu.aval), *int_t]
    m, n = a.shape[-2:]
    k = min(m, n)
    nb = a.ndim - 2
    pa_dot = C.matmul(permutation_matrix(perm, a.dtype), a_dot)

    def block(x, r0, r1, c0, c1):
        return lax.slice(x, (0,) * nb + (r0, c0), tuple(x.shape[:-2]) + (r1, c1))
    l1 = block(lu, 0, k, 0, k)
    u1 = block(lu, 0, k, 0, k)
    x = triangular_solve(l1, block(pa_dot, 0, k, 0, k), left_side=True, lower=True,
                         unit_diagonal=True)
    x = triangular_solve(u1, x, left_side=False, lower=False)
    dl1 = C.matmul(_unit_lower(l1), C.tril(x, -1))
    du1 = C.matmul(C.triu(x), C.triu(u1))
    if m > n:
        l2 = block(lu, k, m, 0, k)
        rest = lax.sub(block(pa_dot, k, m, 0, n), C.matmul(l2, du1))
        dl2 = triangular_solve(u1, rest, left_side=False, lower=False)
        lu_dot = lax.add(lax.concatenate([dl1, dl2], nb), _pad_rows(du1, m))
    elif n > m:
        u2 = block(lu, 0, k, k, n)
        rest = lax.sub(block(pa_dot, 0, k, k, n), C.matmul(dl1, u2))
        du2 = triangular_solve(l1, rest, left_side=True, lower=True, unit_diagonal=True)
        lu_dot = lax.add(_pad_cols(dl1, n), lax.concatenate([du1, du2], nb + 1))
    else:
        lu_dot = lax.add(dl1, du1)
    return [lu, piv, perm], [lu_dot, *int_t]


def _unit_lower(x):
    return lax.add(C.tril(x, -1), C.eye_like(x))


def _pad_rows(x, rows):
    cfg = [(0, 0, 0)] * (x.ndim - 2) + [(0, rows - x.shape[-2], 0), (0, 0, 0)]
    return lax.pad(x, 0, cfg)


def _pad_cols(x, cols):
    cfg = [(0, 0, 0)] * (x.ndim - 1) + [(0, cols - x.shape[-1], 0)]
    return lax.pad(x, 0, cfg)


lu_p = Primitive("lu", multiple_results=True, abstract_eval=_lu_abstract_eval, lower=_lu_lower,
                 jvp=_lu_jvp)
C.batch_leading(lu_p)
