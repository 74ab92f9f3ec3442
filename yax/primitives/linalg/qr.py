"""QR factorisation: `qr`.

qr(a, full_matrices) for a (..., m, n), k = min(m, n): a = q @ r with q having orthonormal
columns and r upper triangular. full_matrices=False: q (..., m, k), r (..., k, n);
full_matrices=True: q (..., m, m), r (..., m, n). CPU lowering: LAPACK geqrf (Householder
vectors + taus) then orgqr (forms q explicitly). Signs follow LAPACK (r's diagonal may be
negative), as in NumPy.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero
from yax.primitives._lax import lax
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc
from yax.primitives.linalg.triangular import triangular_solve


def _qr_shapes(shape, full_matrices):
    *batch, m, n = shape
    k = min(m, n)
    kq = m if full_matrices else k
    return tuple(batch) + (m, kq), tuple(batch) + (kq, n)


def _qr_abstract_eval(a, *, full_matrices):
    C.check_matrix("qr", a)
    q_shape, r_shape = _qr_shapes(a.shape, full_matrices)
    return [ShapedArray(q_shape, a.dtype), ShapedArray(r_shape, a.dtype)]


def _qr_lower(ctx, a, *, full_matrices):
    aval, = ctx.avals_in
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("qr")
    m, n = aval.shape[-2:]
    k = min(m, n)
    taus_aval = ShapedArray(tuple(aval.shape[:-2]) + (k,), aval.dtype)
    fact, taus = cc.ffi_call(cc.lapack_target("geqrf", aval.dtype), [a], [aval],
                             [aval, taus_aval], aliases={0: 0})
    # orgqr expands k reflectors into as many columns as its input has
    if m < n:
        q_in, q_aval = cc.slice_matrix(fact, aval, m, m)
    elif full_matrices and m > n:
        q_in, q_aval = cc.pad_matrix(fact, aval, m, m)
    else:
        q_in, q_aval = fact, aval
    orgqr = "ungqr" if np.dtype(aval.dtype).kind == "c" else "orgqr"
    q, = cc.ffi_call(cc.lapack_target(orgqr, aval.dtype), [q_in, taus], [q_aval, taus_aval],
                     [q_aval], aliases={0: 0})
    r, r_aval = fact, aval
    if not full_matrices and m > n:
        r, r_aval = cc.slice_matrix(fact, aval, n, n)
    return [q, cc.keep_triangle(r, r_aval, lower=False)]


def _qr_jvp(primals, tangents, *, full_matrices):
    """For m >= n (reduced q): with C = q^H da r^{-1} and O = tril(C, -1) - tril(C, -1)^H
    (plus i*imag(diag C) for complex), dq = q (O - C) + da r^{-1} and dr = (C - O) r."""
    a, = primals
    a_dot, = tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    if type(a_dot) is Zero:
        return [q, r], [Zero(q.aval), Zero(r.aval)]
    m, n = a.shape[-2:]
    if m < n or (full_matrices and m > n):
        raise errors.NotImplementedRuleError(
            f"qr: the derivative is implemented for m >= n with full_matrices=False (or square "
            f"input), got {a.aval.str_short()} with full_matrices={full_matrices}")
    da_rinv = triangular_solve(r, a_dot, left_side=False, lower=False)
    c = C.matmul(C.H(q), da_rinv)
    low = C.tril(c, -1)
    omega = lax.sub(low, C.H(low))
    if np.dtype(a.dtype).kind == "c":  # the diagonal's imaginary part is free: keep r's real
        omega = lax.add(omega, C.diag_embed(lax.sub(C.diag_part(c),
                                                    lax.convert_element_type(
                                                        lax.real(C.diag_part(c)), a.dtype))))
    dq = lax.add(C.matmul(q, lax.sub(omega, c)), da_rinv)
    dr = C.matmul(lax.sub(c, omega), r)
    return [q, r], [dq, dr]


qr_p = Primitive("qr", multiple_results=True, abstract_eval=_qr_abstract_eval, lower=_qr_lower,
                 jvp=_qr_jvp)
C.batch_leading(qr_p)
