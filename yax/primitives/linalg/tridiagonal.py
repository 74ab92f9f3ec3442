"""Reduction of a Hermitian matrix to real symmetric tridiagonal form: `tridiagonal`.

tridiagonal(a; lower) for a (..., n, n) returns [packed, d, e, taus], LAPACK sytrd / hetrd's
output: a = q t q^H with t tridiagonal, real diagonal d (..., n) and real off-diagonal e
(..., n - 1) (in a's real dtype); `packed` holds t's diagonal and first sub- (lower) or
super-diagonal (upper) and, beyond it, the Householder vectors whose scalars are taus
(..., n - 1), a's dtype. Only the `lower` (or upper) triangle of a is read; the other is
returned as it came in. CPU lowering only (XLA has no native op); NaN where LAPACK fails.

No derivative, as in JAX (a clear error).
"""

from __future__ import annotations

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.primitives.linalg import _common as C
from yax.primitives.linalg import custom_call as cc


def _tridiagonal_abstract_eval(a, *, lower):
    C.check_matrix("tridiagonal", a, square=True)
    batch, n = tuple(a.shape[:-2]), a.shape[-1]
    real = C.real_dtype(a.dtype)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (n,), real),
            ShapedArray(batch + (max(n - 1, 0),), real),
            ShapedArray(batch + (max(n - 1, 0),), a.dtype)]


def _tridiagonal_lower(ctx, a, *, lower):
    aval, = ctx.avals_in
    if not cc.is_cpu(ctx):
        cc.gpu_unsupported("tridiagonal")
    batch = tuple(aval.shape[:-2])
    routine = "hetrd" if aval.dtype.kind == "c" else "sytrd"
    *outs, info = cc.ffi_call(
        cc.lapack_target(routine, aval.dtype), [a], [aval], [*ctx.avals_out, cc.info_aval(batch)],
        attrs={"uplo": cc.char_attr("L" if lower else "U")}, aliases={0: 0})
    return [cc.nan_where_failed(x, x_aval, info, batch)
            for x, x_aval in zip(outs, ctx.avals_out, strict=True)]


def _tridiagonal_jvp(primals, tangents, **params):
    raise errors.NotImplementedRuleError(
        "tridiagonal: no derivative is defined (as in JAX); differentiate eigh or "
        "eigh_tridiagonal instead")


tridiagonal_p = Primitive("tridiagonal", multiple_results=True,
                          abstract_eval=_tridiagonal_abstract_eval, lower=_tridiagonal_lower,
                          jvp=_tridiagonal_jvp)
C.batch_leading(tridiagonal_p)
