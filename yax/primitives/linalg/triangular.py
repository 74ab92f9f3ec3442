"""Cholesky factorisation and triangular solves: `cholesky` and `triangular_solve`.

cholesky(a) = L, lower triangular with a = L L^H, for a Hermitian positive definite `a` of shape
(..., n, n). Only the lower triangle of `a` is read (LAPACK potrf); matrices that are not positive
definite give NaN. yax.numpy's wrapper symmetrises its input first, as NumPy users expect.

triangular_solve(a, b) solves op(a) x = b (left_side) or x op(a) = b, with `a` triangular
(only the `lower` or upper triangle is read; its diagonal is taken to be ones with
unit_diagonal) and op(a) = a, a^T (transpose_a), conj(a) (conjugate_a) or a^H (both).
Shapes: a (..., m, m), b (..., m, n) on the left or (..., n, m) on the right, same batch dims.

On CPU both lower to LAPACK (potrf, trsm); on GPU to the native StableHLO ops (untested here).
"""

from __future__ import annotations

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero, instantiate
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.mlir import hlo
from yax.interpreters.transpose import is_undefined
from yax.primitives._lax import lax
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc

ir = mlir.ir


# --- cholesky ------------------------------------------------------------------------------------

def _cholesky_abstract_eval(a):
    C.check_matrix("cholesky", a, square=True)
    return ShapedArray(a.shape, a.dtype)


def _cholesky_lower(ctx, a):
    aval, = ctx.avals_in
    if cc.is_cpu(ctx):
        batch = aval.shape[:-2]
        l, info = cc.ffi_call(cc.lapack_target("potrf", aval.dtype), [a], [aval],
                           [aval, cc.info_aval(batch)], attrs={"uplo": cc.char_attr("L")},
                           aliases={0: 0})
        # the whole factor of a failed batch member becomes NaN, not just its lower triangle
        return [cc.nan_where_failed(cc.keep_triangle(l, aval, lower=True), aval, info, batch)]
    # GPU: the native op (untested on a GPU: this project's CI has none; the CPU tests run it)
    l = hlo.cholesky(a, lower=ir.BoolAttr.get(True))
    return [cc.keep_triangle(l, aval, lower=True)]


def _cholesky_jvp(primals, tangents):
    """L_dot = L Phi(L^{-1} A_dot L^{-H}), Phi = lower triangle with the diagonal halved.

    A Hermitian A_dot is assumed: the wrappers give the primitive a Hermitian operand (yax.lax's
    `cholesky` symmetrises it, or restricts it to the triangle the routine reads), so the
    tangent is Hermitian too. The solves run in jax's order (right, then left), so eager
    derivatives round as jax's."""
    a, = primals
    a_dot, = tangents
    l = cholesky_p.bind(a)
    if type(a_dot) is Zero:
        return [l], [Zero(l.aval)]
    tmp = triangular_solve(l, a_dot, left_side=False, lower=True, transpose_a=True,
                           conjugate_a=True)
    tmp = triangular_solve(l, tmp, left_side=True, lower=True)
    halve_diagonal = lax.add(C.eye_like(tmp), lax.full_like(tmp, 1))  # 2 on it, 1 elsewhere
    return [l], [C.matmul(l, lax.div(C.tril(tmp), halve_diagonal))]


cholesky_p = Primitive("cholesky", abstract_eval=_cholesky_abstract_eval, lower=_cholesky_lower,
                       jvp=_cholesky_jvp)
C.batch_leading(cholesky_p)


# --- triangular_solve ---------------------------------------------------------------------------

def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
    C.check_matrix("triangular_solve", a, square=True)
    C.check_matrix("triangular_solve", b)
    if a.dtype != b.dtype:
        raise errors.DTypeError(f"triangular_solve needs a and b of one dtype, got a "
                                f"{a.str_short()} and b {b.str_short()}")
    m = a.shape[-1]
    k = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[:-2] != b.shape[:-2] or k != m:
        side = ("b's rows (left_side=True)" if left_side
                else "b's columns (left_side=False)")
        raise errors.ShapeError(
            f"triangular_solve: a {a.str_short()} and b {b.str_short()} do not fit: {side} must "
            f"match a's size {m}, and the batch dims must be equal (broadcast them first).")
    return ShapedArray(b.shape, b.dtype)


def _trsm_native(a, b, aval, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    trans = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    return hlo.triangular_solve(a, b, ir.BoolAttr.get(left_side), ir.BoolAttr.get(lower),
                                ir.BoolAttr.get(unit_diagonal), hlo.TransposeAttr.get(trans))


# LAPACK trsm on CPU: 2-4x faster than stablehlo.triangular_solve up to n ~ 256 and about even
# beyond (docs/linalg.md has the numbers). The native op stays available (it is the GPU path,
# and tested on CPU) behind this flag.
USE_LAPACK_TRSM = True


def _triangular_solve_lower(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a:  # neither trsm nor the native op has plain conj(a)
        a = mlir.chlo.conj(a)
        conjugate_a = False
    if not (cc.is_cpu(ctx) and USE_LAPACK_TRSM):
        return [_trsm_native(a, b, a_aval, left_side, lower, transpose_a, conjugate_a,
                             unit_diagonal)]
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    out, = cc.ffi_call(cc.lapack_target("trsm", a_aval.dtype), [a, b], [a_aval, b_aval], [b_aval],
                    attrs={"side": cc.char_attr("L" if left_side else "R"),
                           "uplo": cc.char_attr("L" if lower else "U"),
                           "trans_x": cc.char_attr(trans),
                           "diag": cc.char_attr("U" if unit_diagonal else "N")},
                    aliases={1: 0})
    return [out]


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Bind triangular_solve (rules use this; the public wrapper is in yax.lax.linalg)."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def _op_a(a, transpose_a, conjugate_a):
    a = C.mT(a) if transpose_a else a
    return C.conj(a) if conjugate_a else a


def _triangular_solve_jvp(primals, tangents, **params):
    """x = op(a)^{-1} b. b: linear. a: dx = -op(a)^{-1} op(da) x (left), -x op(da) op(a)^{-1}."""
    a, b = primals
    a_dot, b_dot = tangents
    x = triangular_solve_p.bind(a, b, **params)
    t = Zero(x.aval)
    if type(b_dot) is not Zero:
        t = triangular_solve_p.bind(a, b_dot, **params)
    if type(a_dot) is not Zero:
        # only the triangle the routine reads carries a derivative
        a_dot = C.tril(a_dot) if params["lower"] else C.triu(a_dot)
        if params["unit_diagonal"]:
            a_dot = lax.sub(a_dot, C.diag_embed(C.diag_part(a_dot)))
        op_da = _op_a(a_dot, params["transpose_a"], params["conjugate_a"])
        rhs = C.matmul(op_da, x) if params["left_side"] else C.matmul(x, op_da)
        ta = triangular_solve_p.bind(a, lax.neg(rhs), **params)
        t = ta if type(t) is Zero else lax.add(t, ta)
    return [x], [t]


def _triangular_solve_transpose(cts, a, b, **params):
    """Linear in b: the transpose of b -> op(a)^{-1} b is ct -> op(a)^{-T} ct (same conj)."""
    ct, = cts
    if is_undefined(a):
        raise errors.NotImplementedRuleError(
            "triangular_solve is not linear in a; only its b operand can be transposed")
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, instantiate(ct), **flipped)]


def _triangular_solve_batch(args, dims, **params):
    size = axis_size_of(args, dims)
    a, b = (move_batch_axis(x, d, 0, size) for x, d in zip(args, dims, strict=True))
    return [triangular_solve_p.bind(a, b, **params)], [0]


triangular_solve_p = Primitive("triangular_solve", abstract_eval=_triangular_solve_abstract_eval,
                               lower=_triangular_solve_lower, jvp=_triangular_solve_jvp,
                               transpose=_triangular_solve_transpose,
                               batch=_triangular_solve_batch)
