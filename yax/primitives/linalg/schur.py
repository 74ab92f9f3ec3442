"""Schur and Hessenberg decompositions of general square matrices: `schur`, `hessenberg`.

schur(a; compute_schur_vectors) for a (..., n, n) returns [t, z] ([t] without the vectors:
LAPACK's mode 'N') with a = z t z^H, z unitary and t upper triangular
(complex input) or quasi-upper-triangular with 2 x 2 blocks for complex conjugate pairs (real
input: SciPy's "real" Schur form). CPU lowering: LAPACK gees, unsorted; NaN where it fails.
The params sort_eig_vals and select_callable are jax's and unused, as in jax.

hessenberg(a) returns (packed, taus): LAPACK gehrd's output, the upper Hessenberg h in the upper
triangle and first subdiagonal and the Householder vectors below it, with their n - 1 scalars
taus; yax.scipy.linalg.hessenberg forms h and q (a = q h q^H) from them.

Neither has a derivative, as in JAX (a clear error).
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc


def _no_derivative(name):
    def jvp(primals, tangents, **params):
        raise errors.NotImplementedRuleError(
            f"{name}: no derivative is defined (as in JAX); differentiate a function of the "
            f"matrix that does not go through the decomposition")
    return jvp


def _schur_abstract_eval(a, *, compute_schur_vectors=True, sort_eig_vals=False,
                         select_callable=None):
    C.check_matrix("schur", a, square=True)
    return [ShapedArray(a.shape, a.dtype)] * (2 if compute_schur_vectors else 1)


def _schur_lower(ctx, a, *, compute_schur_vectors=True, sort_eig_vals=False,
                 select_callable=None):
    aval, = ctx.avals_in
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("schur")
    batch, n = aval.shape[:-2], aval.shape[-1]
    real = np.dtype(aval.dtype).kind == "f"
    eigenvalues = [ShapedArray(batch + (n,), aval.dtype)] * (2 if real else 1)
    t, z, *_, info = cc.ffi_call(
        cc.lapack_target("gees", aval.dtype), [a], [aval],
        [aval, aval, *eigenvalues, ShapedArray(batch, np.dtype(np.int32)), cc.info_aval(batch)],
        attrs={"mode": cc.char_attr("V" if compute_schur_vectors else "N"),
               "sort": cc.char_attr("N")}, aliases={0: 0})
    t = cc.nan_where_failed(t, aval, info, batch)
    if not compute_schur_vectors:
        return [t]
    return [t, cc.nan_where_failed(z, aval, info, batch)]


schur_p = Primitive("schur", multiple_results=True, abstract_eval=_schur_abstract_eval,
                    lower=_schur_lower, jvp=_no_derivative("schur"))
C.batch_leading(schur_p)


def _hessenberg_abstract_eval(a):
    C.check_matrix("hessenberg", a, square=True)
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype),
            ShapedArray(a.shape[:-2] + (max(n - 1, 0),), a.dtype)]


def _hessenberg_lower(ctx, a):
    aval, = ctx.avals_in
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("hessenberg")
    batch, n = aval.shape[:-2], aval.shape[-1]
    taus_aval = ctx.avals_out[1]
    i32 = cc.ir.IntegerType.get_signless(32)
    packed, taus, info = cc.ffi_call(
        cc.lapack_target("gehrd", aval.dtype), [a], [aval],
        [aval, taus_aval, cc.info_aval(batch)],
        attrs={"low": cc.ir.IntegerAttr.get(i32, 1), "high": cc.ir.IntegerAttr.get(i32, n)},
        aliases={0: 0})
    return [cc.nan_where_failed(packed, aval, info, batch), taus]


hessenberg_p = Primitive("hessenberg", multiple_results=True,
                         abstract_eval=_hessenberg_abstract_eval, lower=_hessenberg_lower,
                         jvp=_no_derivative("hessenberg"))
C.batch_leading(hessenberg_p)
