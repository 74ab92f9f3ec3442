"""yax.scipy.sparse.linalg (cg, gmres, bicgstab) against real jax and numpy.linalg.solve.

Every program is written once against a (sparse.linalg, numpy, transformations) triple and run
with yax and with jax; each table runs as one jitted program per library (few compiles).
"""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import jax.scipy.sparse.linalg as jspla
import numpy as np
import pytest

import yax
import yax.numpy as jnp
import yax.scipy.sparse.linalg as spla
from tests.harness import assert_trees_close
from yax import errors
from yax.test_util import check_grads

YAX, JAX = (spla, jnp, yax), (jspla, jjnp, jax)
N = 5
_rng = np.random.default_rng(0)
_G = _rng.normal(size=(N, N))
SPD = _G @ _G.T + N * np.eye(N)                       # symmetric positive definite
GENERAL = 3.0 * np.eye(N) + 0.6 * _G                   # nonsymmetric, well conditioned
B = _rng.normal(size=N)
X0 = _rng.normal(size=N)
B2 = _rng.normal(size=3)                               # the second leaf of a pytree b
TIGHT = dict(tol=1e-12)


def _jacobi(jnp, a):
    return jnp.diag(1.0 / jnp.diag(jnp.asarray(a)))


def value_cases(lib):
    """name -> (x, the exact solution or None where only jax's iterate is the reference)."""
    sp, jnp, _ = lib
    spd, gen, b = jnp.asarray(SPD), jnp.asarray(GENERAL), jnp.asarray(B)
    tree_b = {"u": b, "w": jnp.asarray(B2)}
    small = jnp.asarray(np.diag([2.0, 3.0, 4.0]))

    def tree_op(a):
        return lambda v: {"u": a @ v["u"], "w": small @ v["w"]}
    cases = {}
    for name, a in (("cg", spd), ("gmres", gen), ("bicgstab", gen)):
        solver = getattr(sp, name)
        cases[f"{name} matrix"] = solver(a, b, **TIGHT)[0]
        cases[f"{name} function"] = solver(lambda v, a=a: a @ v, b, **TIGHT)[0]
        cases[f"{name} pytree"] = solver(tree_op(a), tree_b, **TIGHT)[0]
        cases[f"{name} x0"] = solver(a, b, x0=jnp.asarray(X0), **TIGHT)[0]
        cases[f"{name} M matrix"] = solver(a, b, M=_jacobi(jnp, a), **TIGHT)[0]
        cases[f"{name} M function"] = solver(a, b, M=lambda v, a=a: v / jnp.diag(a), **TIGHT)[0]
        cases[f"{name} atol"] = solver(a, b, tol=0.0, atol=1e-11)[0]
        cases[f"{name} maxiter=2"] = solver(a, b, maxiter=2, **TIGHT)[0]
    for method in ("batched", "incremental"):
        cases[f"gmres {method} restart=2"] = sp.gmres(gen, b, restart=2, solve_method=method,
                                                      **TIGHT)[0]
        cases[f"gmres {method} restart=2 maxiter=1"] = sp.gmres(
            gen, b, restart=2, maxiter=1, solve_method=method, **TIGHT)[0]
        cases[f"gmres {method} M restart=3"] = sp.gmres(
            gen, b, restart=3, M=_jacobi(jnp, gen), solve_method=method, **TIGHT)[0]
    return cases


def exact(name):
    if "maxiter" in name:
        return None
    a = SPD if name.startswith("cg") else GENERAL
    x = np.linalg.solve(a, B)
    if "pytree" in name:
        return {"u": x, "w": B2 / np.array([2.0, 3.0, 4.0])}
    return x


def test_values_match_numpy_and_jax(x64):
    got = yax.jit(lambda: value_cases(YAX))()
    want = jax.jit(lambda: value_cases(JAX))()
    assert set(got) == set(want)
    for name in want:
        try:
            assert_trees_close(got[name], want[name], rtol=1e-7, atol=1e-9)
            if exact(name) is not None:
                assert_trees_close(got[name], exact(name), rtol=1e-8, atol=1e-10)
        except AssertionError as e:
            raise AssertionError(name) from e
    # the truncated runs really stopped early (so the maxiter cases test something)
    assert not np.allclose(np.asarray(got["cg maxiter=2"]), np.linalg.solve(SPD, B), atol=1e-3)


def losses(lib):
    """name -> loss(th, b), a scalar through one solve of a system that depends on th."""
    sp, jnp, _ = lib

    def system(th, base):
        return jnp.asarray(base) + jnp.diag(jnp.exp(th))

    def cg_loss(th, b):
        a = system(th, SPD)
        return jnp.sum(jnp.sin(sp.cg(lambda v: a @ v, b, **TIGHT)[0]) * jnp.exp(th))

    def gmres_loss(th, b):
        a = system(th, GENERAL)
        return jnp.sum(sp.gmres(a, b, solve_method="incremental", **TIGHT)[0] ** 2 * th)

    def gmres_batched_loss(th, b):
        a = system(th, GENERAL)
        return jnp.sum(jnp.cos(sp.gmres(lambda v: a @ v, b, restart=3, **TIGHT)[0]))

    def bicgstab_loss(th, b):
        a = system(th, GENERAL)
        return jnp.sum(jnp.tanh(sp.bicgstab(lambda v: a @ v, b, **TIGHT)[0]) + th)

    return {f.__name__: f for f in (cg_loss, gmres_loss, gmres_batched_loss, bicgstab_loss)}


TH = np.linspace(-0.3, 0.4, N)


def derivative_table(lib):
    _, _, t = lib
    return {name: {"grad": t.grad(loss, argnums=(0, 1))(TH, B),
                   "hessian": t.hessian(loss, argnums=(0, 1))(TH, B),
                   "jvp_grad": t.jvp(lambda s, loss=loss: t.grad(loss)(s, B), (TH,), (B,))[1]}
            for name, loss in losses(lib).items()}


def test_derivatives_match_jax_at_first_and_second_order(x64):
    got = yax.jit(lambda: derivative_table(YAX))()
    want = jax.jit(lambda: derivative_table(JAX))()
    for name in want:
        for what in want[name]:
            try:
                assert_trees_close(got[name][what], want[name][what], rtol=1e-7, atol=1e-9)
            except AssertionError as e:
                raise AssertionError(f"{name}: {what}") from e


@pytest.mark.parametrize("name", ["cg_loss", "bicgstab_loss"])
def test_derivatives_match_finite_differences(x64, name):
    loss = yax.jit(losses(YAX)[name])
    check_grads(loss, (TH, B), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)


def test_the_solution_is_the_exact_solve_in_value_and_gradient(x64):
    # d/db sum(w * A^-1 b) = A^-T w, for the nonsymmetric solvers' transposed solve
    w = np.arange(1.0, N + 1)
    for solver in (spla.gmres, spla.bicgstab):
        g = yax.grad(lambda b, solver=solver: jnp.sum(
            jnp.asarray(w) * solver(jnp.asarray(GENERAL), b, **TIGHT)[0]))(jnp.asarray(B))
        np.testing.assert_allclose(np.asarray(g), np.linalg.solve(GENERAL.T, w), rtol=1e-9)


def test_vmap_over_b_with_different_trip_counts(x64):
    # the first right-hand side is an eigenvector (one step), the others take several
    eigvec = np.linalg.eigh(SPD)[1][:, 0]
    bs = np.stack([eigvec, B, -2 * B + 1.0])
    for solver, a in ((spla.cg, SPD), (spla.gmres, GENERAL), (spla.bicgstab, GENERAL)):
        xs = yax.vmap(lambda b, solver=solver, a=a: solver(jnp.asarray(a), b, **TIGHT)[0])(bs)
        np.testing.assert_allclose(np.asarray(xs), np.linalg.solve(a, bs.T).T, rtol=1e-9,
                                   atol=1e-12)


def test_jit_equals_eager(x64):
    def f(b):
        return (spla.cg(lambda v: jnp.asarray(SPD) @ v, b)[0],
                spla.gmres(jnp.asarray(GENERAL), b, solve_method="incremental")[0],
                spla.bicgstab(jnp.asarray(GENERAL), b, M=_jacobi(jnp, GENERAL))[0])
    assert_trees_close(f(jnp.asarray(B)), yax.jit(f)(jnp.asarray(B)), rtol=1e-12, atol=1e-14)


def test_float32_default_tolerance():
    x, info = spla.cg(jnp.asarray(SPD, np.float32), jnp.asarray(B, np.float32))
    assert info is None and x.dtype == np.float32
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(SPD, B), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: spla.cg(jnp.ones((3, 3)), jnp.ones(4)), "needs b to be one array with 3 rows"),
    (lambda: spla.gmres(jnp.ones((3, 4)), jnp.ones(3)), "must be a square matrix"),
    (lambda: spla.bicgstab(jnp.eye(3), jnp.ones(3), x0=jnp.ones(2)), "same shapes"),
    (lambda: spla.cg(jnp.eye(3), jnp.ones(3), x0=(jnp.ones(3),)), "same tree structure"),
    (lambda: spla.cg(lambda v: v[:2], jnp.ones(3)), "cg: A"),
    (lambda: spla.bicgstab(jnp.eye(3), jnp.ones(3), M=lambda v: v[:2]), "bicgstab: M"),
    (lambda: spla.gmres(jnp.eye(3), jnp.ones(3), solve_method="qr"), "solve_method"),
])
def test_bad_input_is_a_clear_error_at_trace_time(call, message):
    with pytest.raises(errors.YaxError, match=message):
        yax.make_jaxpr(call)()


def test_vmap_over_the_matrix_and_b(x64):
    scales = np.array([1.0, 2.0, 5.0])
    mats = np.stack([SPD * s for s in scales])
    bs = np.stack([B, 2 * B, X0])
    xs = yax.vmap(lambda a, b: spla.cg(a, b, **TIGHT)[0])(mats, bs)
    np.testing.assert_allclose(np.asarray(xs), np.linalg.solve(mats, bs[..., None])[..., 0],
                               rtol=1e-9, atol=1e-12)


def test_complex_systems_match_jax(x64):
    rng = np.random.default_rng(1)
    c = rng.normal(size=(N, N)) + 1j * rng.normal(size=(N, N))
    herm = c @ c.conj().T + N * np.eye(N)
    b = rng.normal(size=N) + 1j * rng.normal(size=N)
    for name, a in (("cg", herm), ("gmres", herm + 0.3 * c), ("bicgstab", herm + 0.3 * c)):
        def loss(b, sp, jnp, a=a, name=name):
            return jnp.sum(jnp.abs(getattr(sp, name)(jnp.asarray(a), b, **TIGHT)[0]) ** 2)
        x = getattr(spla, name)(jnp.asarray(a), jnp.asarray(b), **TIGHT)[0]
        np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-9)
        # the jax oracle jitted: eagerly it compiles a program per primitive of the solver
        want = jax.jit(jax.grad(loss), static_argnums=(1, 2))(jjnp.asarray(b), jspla, jjnp)
        assert_trees_close(yax.grad(loss)(jnp.asarray(b), spla, jnp), want, rtol=1e-8,
                           atol=1e-10)


def test_grad_wrt_the_whole_matrix_is_the_implicit_one(x64):
    # d/dA sum(w * A^-1 b) = -(A^-T w) x^T, with x = A^-1 b
    w = np.arange(1.0, N + 1)

    def loss(a, sp, jnp, name):
        return jnp.sum(jnp.asarray(w) * getattr(sp, name)(a, jnp.asarray(B), **TIGHT)[0])
    for name, a in (("cg", SPD), ("gmres", GENERAL), ("bicgstab", GENERAL)):
        got = yax.jit(yax.grad(loss), static_argnums=(1, 2, 3))(a, spla, jnp, name)
        x = np.linalg.solve(a, B)
        np.testing.assert_allclose(np.asarray(got), -np.outer(np.linalg.solve(a.T, w), x),
                                   rtol=1e-9, atol=1e-12)
        want = jax.jit(jax.grad(loss), static_argnums=(1, 2, 3))(a, jspla, jjnp, name)
        assert_trees_close(got, want, rtol=1e-8, atol=1e-11)
