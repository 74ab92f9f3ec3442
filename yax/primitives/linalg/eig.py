"""General (non-Hermitian) eigendecomposition: `eig`.

eig(a; compute_left_eigenvectors, compute_right_eigenvectors) for a (..., n, n) returns
[w, (vl), (vr)]: complex eigenvalues w (..., n) in LAPACK's order (not sorted; a conjugate pair
of a real matrix appears with the positive imaginary part first), and the requested complex left
and right eigenvectors as columns, each of unit 2-norm, with a vr = vr diag(w) and
vl^H a = diag(w) vl^H. CPU lowering: LAPACK geev; NaN where it does not converge. No GPU
lowering (XLA has no native op).

Derivative, as in JAX: only for the eigenvalues (both eigenvector flags off). With right
eigenvectors vr of distinct eigenvalues, dw = diag(vr^-1 da vr). Eigenvector derivatives are not
defined (their phase and scale are arbitrary): a clear error.

That JVP binds eig with `eigenvalue_jvp=True`: its right eigenvectors then get the tangent
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
                       eigenvalue_jvp=False):
    C.check_matrix("eig", a, square=True)
    cdt = _complex_of(a.dtype)
    outs = [ShapedArray(a.shape[:-1], cdt)]
    outs += [ShapedArray(a.shape, cdt)] * (int(compute_left_eigenvectors)
                                           + int(compute_right_eigenvectors))
    return outs


def _eig_lower(ctx, a, *, compute_left_eigenvectors, compute_right_eigenvectors,
               eigenvalue_jvp=False):
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
             eigenvalue_jvp=False):
    a, = primals
    a_dot, = tangents
    if compute_left_eigenvectors or (compute_right_eigenvectors and not eigenvalue_jvp):
        raise errors.NotImplementedRuleError(
            "eig: derivatives of eigenvectors are not defined (as in JAX; their phase and scale "
            "are arbitrary); differentiate jnp.linalg.eigvals, or use eigh for Hermitian "
            "matrices")
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


def _solve(a, b):
    """a^-1 b for square a and b of one batch shape, by LU with partial pivoting."""
    lu, _, perm = lu_p.bind(a)
    y = C.matmul(permutation_matrix(perm, lu.dtype), b)
    y = triangular_solve(lu, y, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu, y, left_side=True, lower=False)


eig_p = Primitive("eig", multiple_results=True, abstract_eval=_eig_abstract_eval,
                  lower=_eig_lower, jvp=_eig_jvp)
C.batch_leading(eig_p)
