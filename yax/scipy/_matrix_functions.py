"""yax.scipy.linalg's matrix functions: expm (Pade(13) with scaling and squaring) and its
Frechet derivative expm_frechet, funm and sqrtm (through the eigendecomposition, jnp.linalg.eig,
CPU only: they need a diagonalisable matrix and return complex results), and the polar
decomposition.
"""

from __future__ import annotations

import yax.numpy as jnp
from yax import errors, lax
from yax.numpy import linalg as jnp_linalg
from yax.numpy.linalg._util import C, as_matrix, compiled_when_eager

__all__ = ["expm", "polar", "funm", "sqrtm", "expm_frechet"]


# Pade(13) numerator coefficients and the 1-norm below which it is accurate to double precision
# without squaring (Higham, "The scaling and squaring method for the matrix exponential
# revisited", 2005).
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152
MAX_SQUARINGS = 20  # inputs with 1-norm up to theta * 2**20; beyond that exp(a) overflows anyway


def _pade13(a):
    """(U, V): the odd and even parts of the Pade(13) approximant's numerator."""
    b = _PADE13
    eye = C.eye_like(a)
    a2 = C.matmul(a, a)
    a4 = C.matmul(a2, a2)
    a6 = C.matmul(a4, a2)

    def comb(*pairs):
        out = None
        for coef, m in pairs:
            term = lax.mul(m, coef)
            out = term if out is None else lax.add(out, term)
        return out
    u = C.matmul(a, lax.add(C.matmul(a6, comb((b[13], a6), (b[11], a4), (b[9], a2))),
                            comb((b[7], a6), (b[5], a4), (b[3], a2), (b[1], eye))))
    v = lax.add(C.matmul(a6, comb((b[12], a6), (b[10], a4), (b[8], a2))),
                comb((b[6], a6), (b[4], a4), (b[2], a2), (b[0], eye)))
    return u, v


@compiled_when_eager
def expm(A, *, upper_triangular: bool = False, max_squarings: int = MAX_SQUARINGS):
    """The matrix exponential of square matrices (..., n, n): Pade(13) with scaling and squaring.

    The number of squarings s = ceil(log2(|A|_1 / 5.37)) is computed from the data; the squaring
    loop runs `max_squarings` masked steps so that it is reverse-differentiable and batchable.
    """
    del upper_triangular

    a = as_matrix("expm", A, square=True)
    norm1 = lax.stop_gradient(jnp.linalg.norm(a, 1, axis=(-2, -1)))
    real_t = C.real_dtype(a.dtype)
    s = jnp.clip(jnp.ceil(jnp.log2(norm1 / _THETA13)), 0, max_squarings).astype(real_t)
    scale = jnp.exp2(-s).astype(a.dtype)[..., None, None]
    u, v = _pade13(a * scale)
    r = jnp_linalg.solve(lax.sub(v, u), lax.add(v, u))

    def square(i, x):
        more = lax.lt(lax.convert_element_type(i, real_t), s)
        more = lax.broadcast_in_dim(more, tuple(x.shape), tuple(range(more.ndim)))
        return lax.select(more, C.matmul(x, x), x)
    return lax.fori_loop(0, max_squarings, square, r)


def polar(a, side: str = "right", *, method: str = "svd", eps=None, max_iterations=None):
    """The polar decomposition a = u p ('right') or a = p u ('left'), u unitary (with
    orthonormal columns) and p Hermitian positive semidefinite, by the SVD (JAX defaults to
    QDWH; both give the same factors up to rounding).

    Returns:
      (u, p).
    """
    del eps, max_iterations
    if side not in ("right", "left"):
        raise errors.InvalidArgumentError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("svd", "qdwh"):
        raise errors.InvalidArgumentError(f"polar: method must be 'svd' or 'qdwh', got "
                                          f"{method!r}")
    w, s, vh = jnp.linalg.svd(a, full_matrices=False)
    u = w @ vh
    if side == "right":
        p = (jnp.conj(jnp.swapaxes(vh, -1, -2)) * s[..., None, :]) @ vh
    else:
        p = (w * s[..., None, :]) @ jnp.conj(jnp.swapaxes(w, -1, -2))
    return u, p


def funm(A, func, disp: bool = True):
    """The matrix function func(A) = V diag(func(w)) V^-1 of a diagonalisable matrix (func acts
    elementwise on the complex eigenvalues w). Complex result. With disp=False, returns
    (result, an error estimate: the relative residual of the eigendecomposition)."""
    a = jnp.asarray(A)
    w, v = jnp.linalg.eig(a)
    result = jnp.linalg.solve(jnp.swapaxes(v, -1, -2),
                              jnp.swapaxes(v * func(w)[..., None, :], -1, -2))
    result = jnp.swapaxes(result, -1, -2)
    if disp:
        return result
    err = jnp.linalg.norm(a @ v - v * w[..., None, :]) / jnp.maximum(jnp.linalg.norm(a), 1e-300)
    return result, err


def sqrtm(A, blocksize: int = 1):
    """A principal square root of a diagonalisable matrix (complex), via its eigenvalues."""
    del blocksize
    return funm(A, jnp.sqrt)


def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """The Frechet derivative of expm at A in the direction E (and expm(A)), from the block
    identity expm([[A, E], [0, A]]) = [[expm(A), L(A, E)], [0, expm(A)]]."""
    del method
    a, e = jnp.asarray(A), jnp.asarray(E)
    if a.shape != e.shape or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise errors.ShapeError(f"expm_frechet needs square A and E of one shape, got "
                                f"{a.shape} and {e.shape}")
    n = a.shape[-1]
    zero = jnp.zeros_like(a)
    big = jnp.concatenate([jnp.concatenate([a, e], -1), jnp.concatenate([zero, a], -1)], -2)
    out = expm(big)
    frechet = out[..., :n, n:]
    return (out[..., :n, :n], frechet) if compute_expm else frechet
