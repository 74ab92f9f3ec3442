"""Singular value decomposition: `svd`.

svd(a, full_matrices, compute_uv) for a (..., m, n), k = min(m, n): a = u diag(s) vh with s
(..., k) real, descending and >= 0. compute_uv=True returns [s, u, vh] with u (..., m, k) and
vh (..., k, n), or (..., m, m) and (..., n, n) with full_matrices; compute_uv=False returns [s].
CPU lowering: LAPACK gesdd (divide and conquer), or gesvd (QR iteration) for the param
algorithm=SvdAlgorithm.QR (params `algorithm` and `subset_by_index`, None by default, are
jax's; lax.linalg.svd refuses the algorithms and subsets LAPACK has no routine for); NaN where
it does not converge.

Derivative for distinct nonzero singular values (full_matrices=False or square a): with
dP = u^H da v, ds = real(diag(dP)); du = u (F * (dP S + S dP^H) + J) + (I - u u^H) da v S^{-1}
and dv = v (F * (S dP + dP^H S)) + (I - v v^H) da^H u S^{-1}, F[i, j] = 1/(s_j^2 - s_i^2) (0 on
ties, the convention of eigh), J = diag(imag part of dP's diagonal)/s for complex input.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.primitives._lax import lax
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc
from yax.primitives.linalg.eigh import safe_reciprocal_gaps
from yax.primitives.linalg.enums import SvdAlgorithm


def _uv_shapes(shape, full_matrices):
    *batch, m, n = shape
    k = min(m, n)
    return (tuple(batch) + (m, m if full_matrices else k),
            tuple(batch) + (n if full_matrices else k, n))


def _svd_abstract_eval(a, *, full_matrices, compute_uv, algorithm=None, subset_by_index=None):
    C.check_matrix("svd", a)
    s = ShapedArray(tuple(a.shape[:-2]) + (min(a.shape[-2:]),), C.real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    u_shape, vh_shape = _uv_shapes(a.shape, full_matrices)
    return [s, ShapedArray(u_shape, a.dtype), ShapedArray(vh_shape, a.dtype)]


def _svd_lower(ctx, a, *, full_matrices, compute_uv, algorithm=None, subset_by_index=None):
    aval, = ctx.avals_in
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("svd")
    if min(aval.shape[-2:]) == 0:  # no singular values; u and vh are identities if square
        return _empty_svd(ctx.avals_out)
    batch = aval.shape[:-2]
    s_aval = ctx.avals_out[0]
    # without vectors (mode 'N') gesdd still takes u / vh buffers, of the reduced shapes
    u_shape, vh_shape = _uv_shapes(aval.shape, full_matrices and compute_uv)
    u_aval, vh_aval = aval.update(shape=u_shape), aval.update(shape=vh_shape)
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    _, s, u, vh, info = cc.ffi_call(
        cc.lapack_target("gesvd" if algorithm is SvdAlgorithm.QR else "gesdd", aval.dtype),
        [a], [aval],
        [aval, s_aval, u_aval, vh_aval, cc.info_aval(batch)],
        attrs={"mode": cc.char_attr(mode)}, aliases={0: 0})
    s = cc.nan_where_failed(s, s_aval, info, batch)
    if not compute_uv:
        return [s]
    return [s, cc.nan_where_failed(u, u_aval, info, batch),
            cc.nan_where_failed(vh, vh_aval, info, batch)]


def _empty_svd(avals_out) -> list:
    out = []
    for a in avals_out:
        eye = np.eye(a.shape[-2], a.shape[-1], dtype=a.dtype) if a.ndim >= 2 else 0
        out.append(mlir.constant(np.broadcast_to(np.asarray(eye, a.dtype), a.shape).copy()))
    return out


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, algorithm=None, subset_by_index=None):
    a, = primals
    a_dot, = tangents
    if type(a_dot) is Zero:
        outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv,
                          algorithm=algorithm, subset_by_index=subset_by_index)
        return outs, [Zero(o.aval) for o in outs]
    m, n = a.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise errors.NotImplementedRuleError(
            f"svd: the derivative with full_matrices=True needs a square matrix, got "
            f"{a.aval.str_short()}; use full_matrices=False")
    # one factorisation serves primal and tangent (for square a, full and reduced coincide)
    s, u, vh = svd_p.bind(a, full_matrices=False, compute_uv=True, algorithm=algorithm,
                          subset_by_index=subset_by_index)
    outs = [s, u, vh] if compute_uv else [s]
    v = C.H(vh)
    dp = C.matmul(C.H(u), C.matmul(a_dot, v))
    complex_ = np.dtype(a.dtype).kind == "c"
    ds = C.diag_part(dp)
    ds = lax.real(ds) if complex_ else ds
    if not compute_uv:
        return outs, [ds]
    f = lax.convert_element_type(safe_reciprocal_gaps(lax.mul(s, s)), a.dtype)
    inv_s = _safe_inverse(s)
    dp_s, s_dp = C.scale_columns(dp, s), C.scale_rows(dp, s)
    inner_u = lax.mul(f, lax.add(dp_s, C.H(dp_s)))
    if complex_:  # the phase shared by u[:, i] and v[:, i] is fixed by keeping v's
        half_imag = lax.mul(lax.sub(C.diag_part(dp), C.conj(C.diag_part(dp))), 0.5)
        inner_u = lax.add(inner_u, C.scale_columns(C.diag_embed(half_imag), inv_s))
    du = C.matmul(u, inner_u)
    dv = C.matmul(v, lax.mul(f, lax.add(s_dp, C.H(s_dp))))
    if m > n:  # the part of da outside u's span moves u
        dav = C.matmul(a_dot, v)
        du = lax.add(du, C.scale_columns(lax.sub(dav, C.matmul(u, C.matmul(C.H(u), dav))),
                                         inv_s))
    if n > m:
        dahu = C.matmul(C.H(a_dot), u)
        dv = lax.add(dv, C.scale_columns(lax.sub(dahu, C.matmul(v, C.matmul(vh, dahu))),
                                         inv_s))
    return outs, [ds, du, C.H(dv)]


def _safe_inverse(s):
    """1 / s, and 0 where s == 0 (zero singular values have no direction to follow)."""
    ones = lax.broadcast_in_dim(np.ones((), s.dtype), tuple(s.shape), ())
    zero = lax.eq(s, lax.sub(ones, ones))
    return lax.select(zero, lax.sub(ones, ones), lax.div(ones, lax.select(zero, ones, s)))


svd_p = Primitive("svd", multiple_results=True, abstract_eval=_svd_abstract_eval, lower=_svd_lower,
                  jvp=_svd_jvp)
C.batch_leading(svd_p)
