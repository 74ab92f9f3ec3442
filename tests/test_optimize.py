"""yax.scipy.optimize.minimize (BFGS, L-BFGS) against jax.scipy.optimize on Rosenbrock and a
quadratic; under jit and vmap over starting points; the line search on its own."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.scipy.optimize import OptimizeResults, line_search, minimize


def _rosenbrock(x, np_=jnp):
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


_A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
_B = np.array([1.0, -2.0, 0.5])


def _quadratic(x, a, b):
    return 0.5 * x @ a @ x - b @ x


@pytest.mark.parametrize("method", ["BFGS", "l-bfgs-experimental-do-not-rely-on-this"])
def test_against_jax(x64, method):
    import jax.numpy as jjnp
    from jax.scipy.optimize import minimize as jax_minimize
    # jax's own line search stops early on Rosenbrock from most starts (success False, e.g.
    # from (-1.2, 1)); from (2, 2) its BFGS converges, and yax's must agree with it
    x0 = np.array([2.0, 2.0])
    got = yax.jit(lambda x: minimize(_rosenbrock, x, method=method))(x0)
    assert isinstance(got, OptimizeResults)
    assert bool(got.success) and int(got.status) == 0
    np.testing.assert_allclose(got.x, np.ones(2), atol=1e-5)
    if method == "BFGS":
        want = jax_minimize(lambda x: _rosenbrock(x, jjnp), x0, method=method)
        assert bool(want.success)
        np.testing.assert_allclose(got.x, want.x, atol=1e-6)
        np.testing.assert_allclose(got.fun, want.fun, atol=1e-12)
    assert float(got.fun) < 1e-10 and int(got.nit) > 5 and int(got.nfev) >= int(got.nit)
    # the quadratic's minimiser solves A x = b; BFGS's inverse Hessian tends to A^-1
    q = minimize(_quadratic, np.zeros(3), args=(_A, _B), method=method, tol=1e-8)
    assert bool(q.success), q
    np.testing.assert_allclose(q.x, np.linalg.solve(_A, _B), rtol=2e-6)
    if method == "BFGS":
        want_q = jax_minimize(lambda x: _quadratic(x, _A, _B), jjnp.zeros(3), method=method,
                              tol=1e-8)
        np.testing.assert_allclose(q.x, want_q.x, rtol=1e-5)  # jax stops at ~1e-6
        np.testing.assert_allclose(q.hess_inv, np.linalg.inv(_A), atol=1e-3)
        np.testing.assert_allclose(q.jac, _A @ q.x - _B, atol=1e-8)
        # the classic start (-1.2, 1, 0.5), where jax's search stalls, converges here
        hard = minimize(_rosenbrock, np.array([-1.2, 1.0, 0.5]), method=method)
        np.testing.assert_allclose(hard.x, np.ones(3), atol=1e-5)


def test_vmap_over_starting_points():
    starts = np.array([[-1.2, 1.0], [2.0, 2.0], [0.0, 0.0], [1.5, -0.5]], np.float32)
    solve = yax.jit(yax.vmap(lambda x: minimize(_rosenbrock, x, method="BFGS")))
    out = solve(starts)
    assert out.x.shape == (4, 2) and out.nit.shape == (4,)
    np.testing.assert_allclose(out.x, np.ones((4, 2)), atol=2e-3)
    assert np.all(np.asarray(out.success))
    # each lane stops on its own: iteration counts differ and match a solve of that start alone
    single = minimize(_rosenbrock, starts[1], method="BFGS")
    assert int(out.nit[1]) == int(single.nit)
    np.testing.assert_allclose(out.x[1], single.x, rtol=1e-5)


def test_line_search_wolfe_conditions(x64):
    x, p = np.array([-1.2, 1.0]), np.array([1.0, -0.5])
    f0, g0 = yax.value_and_grad(_rosenbrock)(x)
    res = line_search(_rosenbrock, x, -g0 / np.linalg.norm(g0))
    a, dphi0 = float(res.a_k), float(np.dot(g0, -g0 / np.linalg.norm(g0)))
    assert not bool(res.failed) and a > 0
    assert float(res.f_k) <= float(f0) + 1e-4 * a * dphi0
    assert abs(float(np.dot(res.g_k, -g0 / np.linalg.norm(g0)))) <= 0.9 * abs(dphi0)
    with pytest.raises(ValueError, match="not supported"):
        minimize(_rosenbrock, x, method="Nelder-Mead")
    del p
