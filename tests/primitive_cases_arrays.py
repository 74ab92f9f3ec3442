"""Second-order table, part 2: shape, slicing, scatter, windows, dot/conv, sort, FFT, linalg.

Linear primitives are wrapped in a nonlinear function (`sin(P(x))`, `P(x) * P(x)`) so that
their rules carry a nonzero second derivative in both directions.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
import yax.scipy.linalg as jsl
from tests.primitive_cases import Case, M, X, Y, pts, smooth, zero
from yax import lax
from yax.lax import linalg

sin = jnp.sin
V5 = pts(-1.4, 1.8, (5,))
IDX = np.array([2, 0, 2])
UNIQUE = np.array([4, 1, 2])


def spd(n=3):
    a = pts(-0.5, 0.6, (n, n))
    return a @ a.T + n * np.eye(n)


# a nonsymmetric matrix with well separated real eigenvalues (no tie: stable ordering)
NONSYM = np.diag([1.0, 2.5, -1.5]) + 0.3 * pts(-1.0, 1.0, (3, 3))
LOWER = np.tril(pts(-0.6, 0.7, (3, 3))) + 2 * np.eye(3)
TALL = pts(-1.2, 1.3, (4, 3)) + np.eye(4, 3)


def _sq(fn):
    return lambda *xs: fn(*xs) * fn(*xs)


SHAPE = {
    "broadcast_in_dim": smooth(lambda x: sin(lax.broadcast_in_dim(x, (2, 3), (1,))), X),
    "concatenate": smooth(lambda x, y: sin(lax.concatenate([x, y * y], 0)), X, Y),
    "expand_dims": smooth(lambda x: sin(lax.expand_dims(x, (0,))), X),
    "iota": smooth(lambda x: sin(x * lax.iota(np.float64, 3)), X),
    "pad": smooth(lambda x, p: sin(lax.pad(x, p, [(1, 2, 1)]) * 2.0), X, np.array(0.4)),
    "pad:negative": smooth(lambda x: sin(lax.pad(x, np.float64(0.0), [(-1, 1, 0)])), X),
    "reshape": smooth(lambda x: sin(lax.reshape(x, (3, 2))), M),
    "rev": smooth(lambda x: sin(lax.rev(x, (1,))) * x, M),
    "squeeze": smooth(lambda x: sin(lax.squeeze(x, (0,))), X[None]),
    "transpose": smooth(lambda x: sin(lax.transpose(x, (1, 0))), M),
}

SLICING = {
    "slice": smooth(lambda x: sin(lax.slice(x, (1,), (5,), (2,))), V5),
    "dynamic_slice": smooth(lambda x: sin(lax.dynamic_slice(x, (np.int32(1),), (3,))), V5),
    "dynamic_update_slice": smooth(
        lambda x, y: sin(lax.dynamic_update_slice(x, y * y, (np.int32(1),))), V5, X),
    "gather": smooth(lambda x: sin(x[IDX]) * x[IDX], V5),
    "scatter": smooth(lambda x, y: sin(x.at[UNIQUE].set(y * y)), V5, X),
    "scatter_add": smooth(lambda x, y: sin(x.at[IDX].add(y * y)), V5, X),
    "scatter_mul": smooth(lambda x, y: x.at[IDX].multiply(sin(y)), V5, X),
    "scatter_min": smooth(lambda x, y: x.at[UNIQUE].min(y * y), V5, X),
    "scatter_max": smooth(lambda x, y: x.at[UNIQUE].max(sin(y)), V5, X),
}


def _window(op, init):
    return lambda x: lax.reduce_window(x, init, op, (2,), (1,), "VALID")


WINDOWED = {
    "reduce_window_sum": smooth(lambda x: sin(_window(lax.add, 0.0)(x)), V5),
    "reduce_window_max": smooth(lambda x: _window(lax.max, -np.inf)(x * x), V5),
    "reduce_window_min": smooth(lambda x: _window(lax.min, np.inf)(sin(x)), V5),
    "reduce_window_prod": smooth(_window(lax.mul, 1.0), V5),
}

CONTRACTIONS = {
    "dot_general": smooth(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), M,
                          pts(-1.0, 1.2, (3, 2))),
    "dot_general:batch": smooth(
        lambda a, b: sin(lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))),
        pts(-1, 1, (2, 2, 3)), pts(-1, 1, (2, 3, 2))),
    "conv_general_dilated": smooth(
        lambda lhs, rhs: lax.conv_general_dilated(lhs, rhs, (1,), "VALID"),
        pts(-1, 1, (1, 2, 5)), pts(-1, 1, (2, 2, 3))),
    "conv_general_dilated:strided": smooth(
        lambda lhs, rhs: sin(lax.conv_general_dilated(lhs, rhs, (2,), [(1, 1)],
                                                      rhs_dilation=(2,))),
        pts(-1, 1, (1, 1, 6)), pts(-1, 1, (1, 1, 2))),
}

SORTING = {
    "sort": smooth(lambda x: sin(lax.sort(x * x)) * lax.sort(x), V5),
    "sort:two_operands": smooth(lambda k, v: lax.sort((sin(k), v * v), num_keys=1)[1],
                                V5, V5[::-1]),
    "top_k": smooth(lambda x: lax.top_k(sin(x) * x, 3)[0], V5),
}


def _fft(kind, lengths):
    return lambda x: lax.fft(x, kind, lengths)


def _reim(z):
    return lax.real(z), lax.imag(z)


FFT = {
    "fft": smooth(lambda x, y: _reim(_fft("fft", (4,))(lax.complex(x, y * y))),
                  pts(-1, 1, (4,)), pts(-1, 1, (4,))),
    "fft:ifft2": smooth(lambda x: _reim(_fft("ifft", (2, 3))(lax.complex(sin(x), x))), M),
    "fft:rfft": smooth(lambda x: _reim(_fft("rfft", (5,))(x * x)), V5),
    "fft:irfft": smooth(lambda x, y: sin(_fft("irfft", (4,))(lax.complex(x, y))),
                        pts(-1, 1, (3,)), np.array([0.0, 0.4, 0.0])),
}


def _eigh(a):
    v, w = linalg.eigh(a)
    return w, v * v   # v * v: the eigenvectors' signs drop out


def _svd(a):
    u, s, vh = linalg.svd(a, full_matrices=False)
    return s, u[:, :1] * vh[:1, :]   # the rank-one term: the singular vectors' signs drop out


def _qr(a):
    q, r = linalg.qr(a, full_matrices=False)
    return q, r


def _eig_vectors(a):
    w, v = jnp.linalg.eig(a)
    # |v_ij|^2 of unit-norm eigenvectors: their arbitrary phases drop out
    return jnp.sort(lax.real(w)), lax.real(v * lax.conj(v))


def _eig(a):
    w = jnp.linalg.eigvals(a)
    return jnp.sort(lax.real(w)), lax.imag(w)


LINALG = {
    "cholesky": smooth(lambda a: linalg.cholesky(a), spd()),
    "triangular_solve": smooth(
        lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True), LOWER, M.T),
    "triangular_solve:right_transposed": smooth(
        lambda a, b: linalg.triangular_solve(a, b, left_side=False, lower=True,
                                             transpose_a=True), LOWER, M),
    "lu": smooth(lambda a: linalg.lu(a)[0], NONSYM),
    "qr": smooth(_qr, TALL),
    "svd": smooth(_svd, TALL),
    "eigh": smooth(_eigh, spd()),
    "eig": smooth(_eig, NONSYM),
    # no derivative, as in jax: differentiating raises a clear error naming the primitive
    "eig:vectors": Case(_eig_vectors, (NONSYM,), kind="no_rule"),
    "schur": Case(lambda a: jsl.schur(a)[0], (NONSYM,), kind="no_rule"),
    "hessenberg": Case(lambda a: jsl.hessenberg(a)[0], (NONSYM,), kind="no_rule"),
    "tridiagonal": Case(lambda a: linalg.tridiagonal(a)[1], (spd(),), kind="no_rule"),
}

# XLA's random-number ops: keyed bits are integers (float0 tangents, as jax); the stateful
# uniform draw has no derivative (as jax)
KEY = np.array([1, 2, 3, 4], np.uint32)
XLA_RNG = {
    "rng_bit_generator": zero(lambda lax, jnp, k: lax.rng_bit_generator(k, (3,))[1], KEY),
    "rng_uniform": Case(lambda a, b: lax.rng_uniform(a, b, (3,)),
                        (np.asarray(0.0), np.asarray(1.0)), kind="no_rule"),
}
