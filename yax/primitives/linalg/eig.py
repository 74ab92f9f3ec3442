"""General (non-Hermitian) eigendecomposition: `eig`.

eig(a; compute_left_eigenvectors, compute_right_eigenvectors) for a (..., n, n) returns
[w, (vl), (vr)]: complex eigenvalues w (..., n) in LAPACK's order (not sorted; a conjugate pair
of a real matrix appears with the positive imaginary part first), and the requested complex left
and right eigenvectors as columns, each of unit 2-norm, with a vr = vr diag(w) and
vl^H a = diag(w) vl^H. CPU lowering: LAPACK geev; NaN where it does not converge. No GPU
lowering (XLA has no native op).

Derivative, as in JAX: for the eigenvalues; with right eigenvectors vr of distinct eigenvalues,
dw = diag(vr^-1 da vr). Eigenvector derivatives are a clear error unless the caller opts in with
`enable_eigvec_derivs=True` (jax.lax.linalg.eig's flag): they are then taken under geev's own
normalisation (unit 2-norm, largest-magnitude component real), valid for distinct eigenvalues
and no tie for the largest component. The family's tangent dv0 = vr (F * vr^-1 da vr) (below)
is moved along each eigenvector, dv = dv0 + v c, with Re(c) = -Re(v^H dv0) (the norm stays 1)
and Im(c) = -Im(dv0[k]) / v[k] at the largest component k (it stays real). Left eigenvectors
are the right ones of a^H (eigenvalues conj(w)), normalised the same way.

The param `implementation` (None or EigImplementation.LAPACK) is jax's; it changes nothing.
The eigenvalue JVP binds eig with `eigenvalue_jvp=True`: its right eigenvectors then get the tangent
dvr = vr (F * vr^-1 da vr), F[i, j] = 1 / (w[j] - w[i]) off the diagonal and 0 on it (the
derivative of the eigenvector family normalised by diag(vr^-1 dvr) = 0). dw does not depend on
the eigenvectors' scale, so differentiating it through that tangent gives the eigenvalues'
second (and higher) derivatives (beyond JAX, whose eigenvalue JVP is first order only).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo
from yax.primitives._lax import lax
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc
from yax.primitives.linalg.eigh import safe_reciprocal_gaps
from yax.primitives.linalg.lu import lu_p, permutation_matrix
from yax.primitives.linalg.triangular import triangular_solve


def _complex_of(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _eig_abstract_eval(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       eigenvalue_jvp=False, enable_eigvec_derivs=False, implementation=None):
    C.check_matrix("eig", a, square=True)
    cdt = _complex_of(a.dtype)
    outs = [ShapedArray(a.shape[:-1], cdt)]
    outs += [ShapedArray(a.shape, cdt)] * (int(compute_left_eigenvectors)
                                           + int(compute_right_eigenvectors))
    return outs


def _eig_lower(ctx, a, *, compute_left_eigenvectors, compute_right_eigenvectors,
               eigenvalue_jvp=False, enable_eigvec_derivs=False, implementation=None):
    aval, = ctx.avals_in
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("eig")
    batch, n = aval.shape[:-2], aval.shape[-1]
    cdt = _complex_of(aval.dtype)
    real = np.dtype(aval.dtype).kind == "f"
    w_avals = [ShapedArray(batch + (n,), aval.dtype)] * 2 if real else \
        [ShapedArray(batch + (n,), cdt)]
    v_aval = ShapedArray(aval.shape, cdt)
    # geev always returns both eigenvector buffers; those not asked for are left untouched.
    results = cc.ffi_call(
        cc.lapack_target("geev", aval.dtype), [a], [aval],
        [*w_avals, v_aval, v_aval, cc.info_aval(batch)],
        attrs={"compute_left": cc.char_attr("V" if compute_left_eigenvectors else "N"),
               "compute_right": cc.char_attr("V" if compute_right_eigenvectors else "N")})
    *ws, vl, vr, info = results
    w = hlo.complex(ws[0], ws[1]) if real else ws[0]
    w_aval = ShapedArray(batch + (n,), cdt)
    outs = [cc.nan_where_failed(w, w_aval, info, batch)]
    if compute_left_eigenvectors:
        outs.append(cc.nan_where_failed(vl, v_aval, info, batch))
    if compute_right_eigenvectors:
        outs.append(cc.nan_where_failed(vr, v_aval, info, batch))
    return outs


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             eigenvalue_jvp=False, enable_eigvec_derivs=False, implementation=None):
    a, = primals
    a_dot, = tangents
    if enable_eigvec_derivs:
        return _eigvec_jvp(a, a_dot, compute_left_eigenvectors, compute_right_eigenvectors)
    if compute_left_eigenvectors or (compute_right_eigenvectors and not eigenvalue_jvp):
        raise errors.NotImplementedRuleError(
            "eig: derivatives of eigenvectors are only valid for distinct eigenvalues, which "
            "cannot be checked at trace time; opt in with "
            "lax.linalg.eig(..., enable_eigvec_derivs=True), differentiate "
            "jnp.linalg.eigvals, or use eigh for Hermitian matrices")
    w, vr = eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
                       eigenvalue_jvp=True)
    primals_out = [w, vr] if compute_right_eigenvectors else [w]
    if type(a_dot) is Zero:
        return primals_out, [Zero(x.aval) for x in primals_out]
    a_dot = lax.convert_element_type(a_dot, w.aval.dtype)
    g = _solve(vr, C.matmul(a_dot, vr))
    tangents_out = [C.diag_part(g)]
    if compute_right_eigenvectors:
        tangents_out.append(C.matmul(vr, lax.mul(safe_reciprocal_gaps(w), g)))
    return primals_out, tangents_out


def _eigvec_jvp(a, a_dot, left: bool, right: bool):
    """JVP of w, vl, vr under geev's normalisation (the module docstring)."""
    outs = eig_p.bind(a, compute_left_eigenvectors=left, compute_right_eigenvectors=True,
                      enable_eigvec_derivs=True)
    w, vr = outs[0], outs[-1]
    primals_out = [w] + ([outs[1]] if left else []) + ([vr] if right else [])
    if type(a_dot) is Zero:
        return primals_out, [Zero(x.aval) for x in primals_out]
    a_dot = lax.convert_element_type(a_dot, w.aval.dtype)
    g = _solve(vr, C.matmul(a_dot, vr))
    tangents_out = [C.diag_part(g)]
    if left:
        vl = outs[1]
        gl = _solve(vl, C.matmul(C.H(a_dot), vl))
        tangents_out.append(_geev_gauge(vl, C.matmul(vl, lax.mul(
            safe_reciprocal_gaps(lax.conj(w)), gl))))
    if right:
        tangents_out.append(_geev_gauge(vr, C.matmul(vr, lax.mul(safe_reciprocal_gaps(w), g))))
    return primals_out, tangents_out


def _geev_gauge(v, dv0):
    """dv0 + v c: the tangent that keeps each column of unit norm with its largest-magnitude
    component real (c per column, see the module docstring)."""
    nb = v.ndim - 2
    col_sum = (nb,)  # sum over the rows of each column
    re_c = lax.neg(lax.real(lax.reduce_sum(lax.mul(lax.conj(v), dv0), col_sum)))
    mag = lax.abs(v)
    k = lax.argmax(mag, nb, np.int32)
    rows = lax.broadcasted_iota(np.int32, tuple(v.shape), nb)
    pick = lax.eq(rows, lax.broadcast_in_dim(k, tuple(v.shape), tuple(range(nb)) + (nb + 1,)))
    zeros = C.zeros_like(v)
    v_k = lax.real(lax.reduce_sum(lax.select(pick, v, zeros), col_sum))
    dv0_k = lax.imag(lax.reduce_sum(lax.select(pick, dv0, zeros), col_sum))
    im_c = lax.neg(lax.div(dv0_k, v_k))
    c = lax.complex(re_c, im_c)
    return lax.add(dv0, lax.mul(v, lax.broadcast_in_dim(c, tuple(v.shape),
                                                        tuple(range(nb)) + (nb + 1,))))


def _solve(a, b):
    """a^-1 b for square a and b of one batch shape, by LU with partial pivoting."""
    lu, _, perm = lu_p.bind(a)
    y = C.matmul(permutation_matrix(perm, lu.dtype), b)
    y = triangular_solve(lu, y, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu, y, left_side=True, lower=False)


eig_p = Primitive("eig", multiple_results=True, abstract_eval=_eig_abstract_eval,
                  lower=_eig_lower, jvp=_eig_jvp)
C.batch_leading(eig_p)
