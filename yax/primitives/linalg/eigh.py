"""Hermitian eigendecomposition: `eigh`.

eigh(a, lower) for a (..., n, n) returns (v, w): eigenvectors v (..., n, n) (columns) and real
eigenvalues w (..., n) in ascending order, with a = v diag(w) v^H. Only the `lower` (or upper)
triangle of a is read. The params algorithm (None or EighImplementation.QR), sort_eigenvalues
(LAPACK's order is ascending) and subset_by_index (None) are jax's. CPU lowering: LAPACK
syevd / heevd (divide and conquer); NaN where it does not converge.

Derivative (for distinct eigenvalues): with G = v^H da v, dw = real(diag(G)) and
dv = v (F * G), F[i, j] = 1 / (w[j] - w[i]). Convention for degenerate eigenvalues
(w[i] == w[j], i != j): F[i, j] = 0, i.e. the rotation within an eigenspace, which is not
determined, is taken to be zero. Eigenvalue derivatives stay correct there only if da does
not mix the degenerate eigenvectors (eigenvectors themselves are not differentiable there).
"""

from __future__ import annotations

import numpy as np

from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero
from yax.primitives._lax import lax
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc


def _eigh_abstract_eval(a, *, lower, algorithm=None, sort_eigenvalues=True,
                        subset_by_index=None):
    C.check_matrix("eigh", a, square=True)
    return [ShapedArray(a.shape, a.dtype),
            ShapedArray(a.shape[:-1], C.real_dtype(a.dtype))]


def _eigh_lower(ctx, a, *, lower, algorithm=None, sort_eigenvalues=True, subset_by_index=None):
    aval, = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("eigh")
    batch = aval.shape[:-2]
    routine = "heevd" if np.dtype(aval.dtype).kind == "c" else "syevd"
    v, w, info = cc.ffi_call(cc.lapack_target(routine, aval.dtype), [a], [aval],
                             [v_aval, w_aval, cc.info_aval(batch)],
                             attrs={"mode": cc.char_attr("V"),
                                    "uplo": cc.char_attr("L" if lower else "U")},
                             aliases={0: 0})
    return [cc.nan_where_failed(v, v_aval, info, batch),
            cc.nan_where_failed(w, w_aval, info, batch)]


def safe_reciprocal_gaps(w):
    """F[..., i, j] = 1 / (w[j] - w[i]), and 0 where w[i] == w[j] (the diagonal included)."""
    n = w.shape[-1]
    shape = tuple(w.shape) + (n,)
    nb = w.ndim - 1
    wj = lax.broadcast_in_dim(w, shape, tuple(range(nb)) + (nb + 1,))
    wi = lax.broadcast_in_dim(w, shape, tuple(range(nb)) + (nb,))
    gap = lax.sub(wj, wi)
    # compare the values, not their difference: compiled, `w[j] - w[i]` may be contracted with
    # the product that made `w` (an FMA), leaving a rounding error instead of 0 on the diagonal
    same = lax.eq(wj, wi)
    one = lax.broadcast_in_dim(np.ones((), gap.dtype), shape, ())
    return lax.select(same, C.zeros_like(gap), lax.div(one, lax.select(same, one, gap)))


def _eigh_jvp(primals, tangents, *, lower, **params):
    a, = primals
    a_dot, = tangents
    v, w = eigh_p.bind(a, lower=lower, **params)
    if type(a_dot) is Zero:
        return [v, w], [Zero(v.aval), Zero(w.aval)]
    a_dot = C.hermitian_part_of_triangle(a_dot, lower=lower)
    g = C.matmul(C.H(v), C.matmul(a_dot, v))
    dw = C.diag_part(g)
    dw = lax.real(dw) if np.dtype(a.dtype).kind == "c" else dw
    f = lax.convert_element_type(safe_reciprocal_gaps(w), a.dtype)
    dv = C.matmul(v, lax.mul(f, g))
    return [v, w], [dv, dw]


eigh_p = Primitive("eigh", multiple_results=True, abstract_eval=_eigh_abstract_eval,
                   lower=_eigh_lower, jvp=_eigh_jvp)
C.batch_leading(eigh_p)
