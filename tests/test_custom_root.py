"""lax.custom_root: the solver runs on primal values only (a while_loop is fine under reverse
mode) and the tangent is one custom_linear_solve, so derivatives are right at every order;
checked against real jax.
"""

from __future__ import annotations

import jax
import jax.lax as jlax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import JAX_0_10, assert_trees_close
from yax import errors, lax
from yax.test_util import check_grads

YAX, JAX = (lax, jnp, yax), (jlax, jjnp, jax)



def fori_sqrt(lib):
    lax = lib[0]

    def sqrt(a):  # the issue's snippet
        solve = lambda f, x0: lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x0)  # noqa: E731
        return lax.custom_root(lambda x: x * x - a, 1.0, solve, lambda g, y: y / g(1.0))
    return sqrt


def while_sqrt(lib):
    lax, jnp, _ = lib

    def sqrt(a):
        def solve(f, x):
            return lax.while_loop(lambda x: jnp.abs(f(x)) > 1e-14, lambda x: x - f(x) / (2 * x), x)
        return lax.custom_root(lambda x: x * x - a, 1.0, solve, lambda g, y: y / g(1.0))
    return sqrt


def fixed_point_loss(lib):
    """A fixed-point layer z = tanh(W z + x), found by iteration in a while_loop."""
    lax, jnp, t = lib

    def layer(w, x):
        def f(z):
            return jnp.tanh(w @ z + x) - z

        def solve(f, z0):
            def cond(carry):
                z, k = carry
                return (jnp.max(jnp.abs(f(z))) > 1e-14) & (k < 500)
            return lax.while_loop(cond, lambda c: (f(c[0]) + c[0], c[1] + 1), (z0, 0))[0]

        def tangent_solve(g, y):
            return jnp.linalg.solve(t.jacfwd(g)(y), y)
        return lax.custom_root(f, jnp.zeros_like(x), solve, tangent_solve)

    def loss(w, x):
        return jnp.sum(layer(w, x) ** 2 * x)
    return loss


W = 0.3 * np.random.default_rng(0).normal(size=(3, 3))
X = np.array([0.5, -0.3, 0.2])


def test_the_issue_snippet_second_derivative(x64):
    want = jax.grad(jax.grad(fori_sqrt(JAX)))(2.0)
    np.testing.assert_allclose(float(want), -0.0883883476, rtol=1e-8)
    sqrt = fori_sqrt(YAX)
    np.testing.assert_allclose(float(yax.grad(yax.grad(sqrt))(2.0)), float(want), rtol=1e-12)
    np.testing.assert_allclose(float(yax.jit(yax.grad(yax.grad(sqrt)))(2.0)), float(want),
                               rtol=1e-12)


def test_a_while_loop_solver_at_every_order_matches_jax(x64):
    def table(lib):
        _, jnp_, t = lib
        sqrt, loss = while_sqrt(lib), fixed_point_loss(lib)
        a = jnp_.array([2.0, 3.0])
        return {
            "sqrt": sqrt(2.0),
            "grad": t.grad(sqrt)(2.0),
            "grad_grad": t.grad(t.grad(sqrt))(2.0),
            "third": t.grad(t.grad(t.grad(sqrt)))(2.0),
            "jvp_grad": t.jvp(t.grad(sqrt), (2.0,), (1.0,)),
            "vmap_grad_grad": t.vmap(t.grad(t.grad(sqrt)))(a),
            "layer_grad": t.grad(loss, argnums=(0, 1))(W, X),
            "layer_hessian": t.hessian(loss, argnums=1)(W, X),
            "layer_jacfwd_jacrev": t.jacfwd(t.jacrev(loss))(W, X),
            "layer_vmap_hessian": t.vmap(t.hessian(loss, argnums=1), (None, 0))(
                W, jnp_.stack([X, 0.5 * X])),
        }
    got = yax.jit(lambda: table(YAX))()
    want = jax.jit(lambda: table(JAX))()
    for what in want:
        try:
            assert_trees_close(got[what], want[what], rtol=1e-8, atol=1e-10)
        except AssertionError as e:
            raise AssertionError(what) from e


def test_eager_second_order(x64):
    assert_trees_close(yax.grad(yax.grad(while_sqrt(YAX)))(3.0),
                        jax.grad(jax.grad(while_sqrt(JAX)))(3.0))
    assert_trees_close(yax.hessian(fixed_point_loss(YAX), argnums=1)(W, X),
                        jax.hessian(fixed_point_loss(JAX), argnums=1)(W, X), rtol=1e-8)


def test_check_grads_second_order(x64):
    check_grads(yax.jit(fixed_point_loss(YAX)), (W, X), order=2, atol=1e-6, rtol=1e-6)
    check_grads(yax.jit(while_sqrt(YAX)), (2.0,), order=2, atol=1e-6, rtol=1e-6)


def test_the_solver_runs_once_under_grad(x64):
    def whiles(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            total += eqn.primitive.name == "while"
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else [value]:
                    if eqn.primitive.name != "custom_linear_solve" and hasattr(
                            getattr(sub, "jaxpr", sub), "eqns"):
                        total += whiles(getattr(sub, "jaxpr", sub))
        return total
    assert whiles(yax.make_jaxpr(yax.grad(while_sqrt(YAX)))(2.0).jaxpr) == 1
    if JAX_0_10:  # jax 0.11 stages custom_root as an opaque `call_hi_primitive`
        assert whiles(jax.make_jaxpr(jax.grad(while_sqrt(JAX)))(2.0).jaxpr) == 1


def _pytree_root(lib):
    lax, jnp, _ = lib

    def roots(c):
        def f(x):
            return {"a": x["a"] ** 2 - c, "b": x["b"] ** 3 - 2.0 * c}

        def solve(f, x):
            def body(i, x):
                fx = f(x)
                return {"a": x["a"] - fx["a"] / (2 * x["a"]),
                        "b": x["b"] - fx["b"] / (3 * x["b"] ** 2)}
            x = lax.fori_loop(0, 40, body, x)
            return x, jnp.abs(f(x)["a"])

        def tangent_solve(g, y):  # g is diagonal here: read it off one probe
            d = g({"a": jnp.ones_like(y["a"]), "b": jnp.ones_like(y["b"])})
            return {"a": y["a"] / d["a"], "b": y["b"] / d["b"]}
        x, residual = lax.custom_root(f, {"a": 1.0, "b": 1.0}, solve, tangent_solve,
                                      has_aux=True)
        return x["a"] * x["b"] + 0.0 * residual
    return roots


def test_pytrees_and_has_aux(x64):
    assert_trees_close(yax.grad(yax.grad(_pytree_root(YAX)))(3.0),
                        jax.grad(jax.grad(_pytree_root(JAX)))(3.0))
    assert_trees_close(yax.jit(yax.grad(_pytree_root(YAX)))(3.0),
                        jax.grad(_pytree_root(JAX))(3.0))


def _solve_identity(f, x):
    return x


def test_a_tangent_solve_with_the_wrong_signature_is_a_clear_error():
    with pytest.raises(errors.CustomDerivativeError,
                       match=r"tangent_solve .* must take two arguments \(g, y\)") as info:
        lax.custom_root(lambda x: x * x - 2.0, 1.0, _solve_identity, lambda g: g)
    assert __file__ in str(info.value)


@pytest.mark.parametrize("tangent_solve, match", [
    (lambda g, y: jnp.ones(3), r"returned \(f32\[3\]\); it must return leaves shaped and typed "
                               r"like initial_guess: \(f32\[\]\)"),
    (lambda g, y: (y, y), "structured like initial_guess"),
], ids=["shape", "structure"])
def test_a_wrong_tangent_solve_output_is_a_clear_error(tangent_solve, match):
    with pytest.raises(errors.CustomDerivativeError, match="custom_root: tangent_solve"):
        lax.custom_root(lambda x: x * x - 2.0, 1.0, _solve_identity, tangent_solve)
    with pytest.raises(errors.CustomDerivativeError, match=match):
        yax.make_jaxpr(lambda a: lax.custom_root(lambda x: x * x - a, 1.0, _solve_identity,
                                                 tangent_solve))(2.0)


def test_f_and_solve_output_errors():
    with pytest.raises(errors.CustomDerivativeError, match="custom_root: f .* structured like"):
        lax.custom_root(lambda x: (x, x), 1.0, _solve_identity, lambda g, y: y)
    with pytest.raises(errors.CustomDerivativeError,
                       match=r"custom_root: solve .* returned \(f32\[2\]\)"):
        lax.custom_root(lambda x: x * x - 2.0, 1.0, lambda f, x: jnp.ones(2), lambda g, y: y)
    with pytest.raises(errors.CustomDerivativeError, match=r"pair \(solution, aux\)"):
        lax.custom_root(lambda x: x * x - 2.0, 1.0, _solve_identity, lambda g, y: y,
                        has_aux=True)
