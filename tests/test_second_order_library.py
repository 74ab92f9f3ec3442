"""Second derivatives of the library functions whose derivative yax writes by hand (linalg,
sorting, FFT, special functions), against jax's Hessian and central finite differences of
yax's gradient, through the Case/check_table harness of tests/second_order.py (one jitted
program per case). Every case is a scalar function of one flat float64 vector, so matrices
are built from it inside the case and the Hessian is over all their entries."""

from __future__ import annotations

import numpy as np
import pytest

from tests.second_order import Case, check_table

RNG = np.random.default_rng(23)
# a well-conditioned 3x3 (for solve, inv, det, lu, qr, svd, pinv, expm)
A3 = (RNG.normal(size=(3, 3)) * 0.3 + np.eye(3) * 1.5).reshape(-1)
S3 = np.array([0.9, -0.4, 0.35, 0.2, 1.3])  # the generator of a symmetric matrix, see _spd
B3 = np.array([0.3, -1.1, 0.7])
X4 = np.array([0.41, -0.73, 0.25, 1.12])  # distinct entries: sort/top_k/cummax are smooth here
P4 = np.array([0.21, 0.53, 0.37, 0.82])  # in (0, 1): erfinv, logit, ndtri, betainc's x
POS4 = np.array([0.7, 1.9, 3.2, 0.45])  # positive: gammaln, digamma, gammainc's a


def _mat(L, x):
    return L.jnp.reshape(x, (3, 3))


def _sym(L, x):
    """A symmetric matrix with well-separated eigenvalues whose entries depend on x."""
    a = L.jnp.asarray(np.diag([1.0, 2.5, 4.5])) + 0.3 * L.jnp.outer(x[:3], x[:3])
    return a + 0.2 * (x[3] * L.jnp.asarray(np.eye(3, k=1) + np.eye(3, k=-1))) + 0.1 * x[4]


def _spd(L, x):
    a = _sym(L, x)
    return a @ a.T


def _weights(L, n):
    return L.jnp.asarray(np.linspace(0.5, -0.8, n))


def _gauge_free_eigvecs(L, x):
    """eigh's eigenvectors up to sign: the projector v v^T of each one, weighted."""
    _, v = L.jnp.linalg.eigh(_sym(L, x))
    return L.jnp.sum(_weights(L, 3) * L.jnp.sum((v * (L.jnp.asarray(np.arange(1.0, 4.0))
                                                       [:, None])) ** 2, 0))


def _qr(L, x):
    q, r = L.jnp.linalg.qr(_mat(L, x))
    # Q's columns and R's rows share a sign convention; Q R and |diag R| are fixed, and so is
    # each entry of Q times the matching diagonal entry of R
    return L.jnp.sum(L.jnp.sin(q * L.jnp.diagonal(r)[None, :])) + L.jnp.sum(L.jnp.abs(
        L.jnp.diagonal(r)) ** 2)


LINALG = {
    "solve": Case(lambda L: lambda x: L.jnp.sum(
        L.jnp.sin(L.jnp.linalg.solve(_mat(L, x), L.jnp.asarray(B3)))), A3),
    "solve_matrix_rhs": Case(lambda L: lambda x: L.jnp.sum(
        L.jnp.linalg.solve(_mat(L, x), _mat(L, x).T @ _mat(L, x)) ** 2), A3),
    "inv": Case(lambda L: lambda x: L.jnp.sum(L.jnp.linalg.inv(_mat(L, x)) ** 2), A3),
    "det": Case(lambda L: lambda x: L.jnp.linalg.det(_mat(L, x)), A3),
    "slogdet": Case(lambda L: lambda x: L.jnp.linalg.slogdet(_mat(L, x))[1], A3),
    "cholesky": Case(lambda L: lambda x: L.jnp.sum(
        L.jnp.linalg.cholesky(_spd(L, x)) * L.jnp.asarray(np.arange(9.0).reshape(3, 3))), S3),
    "cho_solve": Case(lambda L: lambda x: L.jnp.sum(L.sla.cho_solve(
        (L.jnp.linalg.cholesky(_spd(L, x)), True), L.jnp.asarray(B3)) ** 2), S3),
    "eigh_values": Case(lambda L: lambda x: L.jnp.sum(
        _weights(L, 3) * L.jnp.linalg.eigh(_sym(L, x))[0] ** 2), S3),
    "eigvalsh": Case(lambda L: lambda x: L.jnp.sum(L.jnp.sin(L.jnp.linalg.eigvalsh(
        _sym(L, x)))), S3),
    "eigh_vectors_gauge_free": Case(lambda L: lambda x: _gauge_free_eigvecs(L, x), S3),
    "svd_values": Case(lambda L: lambda x: L.jnp.sum(
        _weights(L, 3) * L.jnp.linalg.svd(_mat(L, x), compute_uv=False) ** 3), A3),
    "qr": Case(lambda L: lambda x: _qr(L, x), A3),
    "lu_solve": Case(lambda L: lambda x: L.jnp.sum(L.jnp.cos(L.sla.lu_solve(
        L.sla.lu_factor(_mat(L, x)), L.jnp.asarray(B3)))), A3),
    "expm": Case(lambda L: lambda x: L.jnp.sum(
        L.sla.expm(0.5 * _mat(L, x)) * L.jnp.asarray(np.arange(9.0).reshape(3, 3))), A3),
    "solve_triangular_lower": Case(lambda L: lambda x: L.jnp.sum(L.sla.solve_triangular(
        L.jnp.tril(_mat(L, x)), L.jnp.asarray(B3), lower=True) ** 2), A3),
    "solve_triangular_upper_trans": Case(lambda L: lambda x: L.jnp.sum(L.jnp.sin(
        L.sla.solve_triangular(L.jnp.triu(_mat(L, x)), L.jnp.asarray(B3), trans=1))), A3),
}

LINALG_MORE = {
    "pinv": Case(lambda L: lambda x: L.jnp.sum(L.jnp.linalg.pinv(_mat(L, x)) ** 2), A3),
    "norm_fro": Case(lambda L: lambda x: L.jnp.linalg.norm(_mat(L, x)), A3),
    "norm_vector_3": Case(lambda L: lambda x: L.jnp.linalg.norm(x, ord=3), A3),
    "norm_2": Case(lambda L: lambda x: L.jnp.linalg.norm(_mat(L, x), ord=2), A3),
    "cond": Case(lambda L: lambda x: L.jnp.linalg.cond(_mat(L, x)), A3),
    "lstsq": Case(lambda L: lambda x: L.jnp.sum(L.jnp.linalg.lstsq(
        _mat(L, x), L.jnp.asarray(B3))[0] ** 2), A3),
    "matrix_power": Case(lambda L: lambda x: L.jnp.sum(
        L.jnp.linalg.matrix_power(_mat(L, x), 3) * L.jnp.asarray(np.eye(3) + 0.5)), A3),
    # jax's polar iterates with a while_loop: it has a Hessian forward over forward only
    "polar": Case(lambda L: lambda x: L.jnp.sum(L.sla.polar(_mat(L, x))[0] ** 3), A3,
                  jax_hessian="fwd"),
    # jax defines no derivative of eigvals' eigenvectors, so none of eigvals at second order:
    # yax's Hessian is checked against finite differences of its gradient only
    "eigvals": Case(lambda L: lambda x: L.jnp.sum(
        L.jnp.real(L.jnp.linalg.eigvals(_mat(L, x))) ** 3), A3, jax_hessian="none"),
}

SORTING = {
    "sort": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.jnp.sort(L.jnp.sin(x) * x)),
                 X4),
    "argsort_gather": Case(lambda L: lambda x: L.jnp.sum(
        _weights(L, 4) * (x ** 3)[L.jnp.argsort(x)]), X4),
    "top_k": Case(lambda L: lambda x: L.jnp.sum(
        _weights(L, 2) * L.lax.top_k(L.jnp.exp(x) * x, 2)[0] ** 2), X4),
    "cumsum": Case(lambda L: lambda x: L.jnp.sum(L.jnp.sin(L.jnp.cumsum(x * x))), X4),
    "cumprod": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.jnp.cumprod(x)), X4),
    "cummax": Case(lambda L: lambda x: L.jnp.sum(
        _weights(L, 4) * L.lax.cummax(x ** 3 - x)), X4),
    "cumlogsumexp": Case(lambda L: lambda x: L.jnp.sum(
        _weights(L, 4) * L.lax.cumlogsumexp(x * x)), X4),
}


def _fft_real(L, y):
    return L.jnp.sum(_weights(L, y.size) * (L.jnp.real(y) ** 2 + L.jnp.imag(y) * L.jnp.real(y)))


FFT = {
    "fft": Case(lambda L: lambda x: _fft_real(L, L.jnp.fft.fft(L.jnp.sin(x) * x)), X4),
    "ifft": Case(lambda L: lambda x: _fft_real(L, L.jnp.fft.ifft(x * x + 1j * x)), X4),
    "rfft": Case(lambda L: lambda x: _fft_real(L, L.jnp.fft.rfft(x ** 3)), X4),
    "irfft": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 6) * L.jnp.fft.irfft(
        (x[:3] + 1j * x[1:]) * x[:3], n=6) ** 2), X4),
    "fft2": Case(lambda L: lambda x: _fft_real(L, L.jnp.fft.fft2(
        L.jnp.reshape(L.jnp.tanh(x), (2, 2)) * x[0]).reshape(-1)), X4),
}

SPECIAL = {
    "gammaln": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.gammaln(x)), POS4),
    "digamma": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.digamma(x)), POS4),
    "polygamma_1": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.polygamma(1, x)),
                        POS4),
    "polygamma_2": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.polygamma(2, x)),
                        POS4),
    # regression: yax raised on the exponent's derivative, which jax's scipy zeta defines
    "zeta_exponent": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.zeta(
        x + 1.2, L.jnp.asarray(POS4))), POS4),
    "zeta_both": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 2) * L.sp.zeta(
        x[:2] + 1.5, x[2:])), POS4),
    "erf": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.erf(x)), X4),
    "erfc": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.erfc(x * x)), X4),
    "erfinv": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.erfinv(x)), P4),
    "logsumexp": Case(lambda L: lambda x: L.sp.logsumexp(x * x), X4),
    "logsumexp_weighted": Case(lambda L: lambda x: L.sp.logsumexp(
        x, b=L.jnp.asarray(np.array([0.5, 2.0, 1.0, 0.3]))), X4),
    "xlogy": Case(lambda L: lambda x: L.jnp.sum(L.sp.xlogy(x, x[::-1] ** 2)), X4),
    "xlog1py": Case(lambda L: lambda x: L.jnp.sum(L.sp.xlog1py(x, x[::-1] ** 2)), X4),
    "logit": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.logit(x)), P4),
    "expit": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.expit(x)), X4),
    "i0e": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.i0e(x)), X4),
    "i1e": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.i1e(x)), X4),
    "ndtri": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.ndtri(x)), P4),
    # jax differentiates betainc in x only (a, b held fixed here)
    "betainc_x": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.betainc(
        L.jnp.asarray(POS4), L.jnp.asarray(POS4[::-1]), x)), P4),
    "gammainc_x": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.gammainc(
        L.jnp.asarray(POS4), x)), POS4[::-1]),
    "gammaincc_x": Case(lambda L: lambda x: L.jnp.sum(_weights(L, 4) * L.sp.gammaincc(
        L.jnp.asarray(POS4), x)), POS4[::-1]),
}

TABLES = {"linalg": LINALG, "linalg_more": LINALG_MORE, "sorting": SORTING, "fft": FFT,
          "special": SPECIAL}


@pytest.mark.parametrize("table", list(TABLES))
def test_second_order_library_matches_jax_and_finite_differences(x64, table):
    bad = check_table(TABLES[table])
    assert not bad, "\n".join(bad)
