"""Differentiation machinery: nesting, perturbation confusion, errors, HVPs, compositions."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.test_util import check_grads


def test_perturbation_confusion_is_avoided():
    # d/dx [x * d/dy (x + y)] = 1 at any x
    f = lambda x: x * yax.grad(lambda y: x + y)(1.0)
    for x in (0.0, 2.0, -3.5):
        assert float(yax.grad(f)(x)) == 1.0
    # d/dx [x * d/dy (x * y)] = 2x
    g = lambda x: x * yax.grad(lambda y: x * y)(1.0)
    np.testing.assert_allclose(yax.grad(g)(3.0), 6.0)


def test_grad_of_grad_of_closure_over_outer_tracer():
    def outer(a):
        inner = lambda x: jnp.sin(a * x)
        return yax.grad(inner)(2.0)  # a * cos(2a)
    # d/da [a cos(2a)] = cos(2a) - 2a sin(2a)
    a = 0.7
    np.testing.assert_allclose(yax.grad(outer)(a), np.cos(2 * a) - 2 * a * np.sin(2 * a),
                               rtol=1e-5)


def test_higher_order_derivatives_of_sin():
    d = jnp.sin
    expected = [np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin]
    for k in range(4):
        d = yax.grad(d)
        np.testing.assert_allclose(d(0.3), expected[k](0.3), rtol=1e-5)


def test_grad_of_non_scalar_output_is_a_clear_error():
    with pytest.raises(yax.errors.ShapeError) as info:
        yax.grad(lambda x: jnp.sin(x))(jnp.ones(3))
    msg = str(info.value)
    assert "f32[3]" in msg and "vjp" in msg and "jacrev" in msg


def test_grad_of_integer_input_is_a_clear_error_unless_allowed():
    with pytest.raises(yax.errors.DTypeError, match="allow_int"):
        yax.grad(lambda x: x * 2.0)(3)
    g = yax.grad(lambda x, y: x * y, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[1].dtype == yax.interpreters.ad_util.float0


def test_argnums_has_aux_and_value_and_grad():
    f = lambda x, y: (x * y + jnp.sin(x), {"aux": x})
    (val, aux), (gx, gy) = yax.value_and_grad(f, argnums=(0, 1), has_aux=True)(2.0, 3.0)
    np.testing.assert_allclose(val, 6.0 + np.sin(2.0), rtol=1e-6)
    np.testing.assert_allclose(gx, 3.0 + np.cos(2.0), rtol=1e-6)
    np.testing.assert_allclose(gy, 2.0)
    assert float(aux["aux"]) == 2.0


def test_pytree_gradients():
    params = {"w": jnp.ones(3), "b": (jnp.asarray(2.0),)}
    g = yax.grad(lambda p: jnp.sum(p["w"] * p["b"][0]))(params)
    np.testing.assert_allclose(g["w"], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(g["b"][0], 3.0)


def test_linearize_reuses_the_linear_program():
    y, f_jvp = yax.linearize(lambda x: jnp.sin(x) * x, 2.0)
    np.testing.assert_allclose(y, np.sin(2.0) * 2.0, rtol=1e-6)
    for v in (1.0, 2.0):
        np.testing.assert_allclose(f_jvp(v), v * (np.cos(2.0) * 2 + np.sin(2.0)), rtol=1e-5)


def test_linear_transpose():
    f_t = yax.linear_transpose(lambda x: jnp.sum(x * 3.0), jnp.ones(4))
    (ct,) = f_t(jnp.asarray(2.0))
    np.testing.assert_allclose(ct, np.full(4, 6.0))


def test_jit_compositions_agree(x64):
    f = lambda x: jnp.sum(jnp.sin(x) * x * x)
    x = np.linspace(-1, 1, 5)
    g = yax.grad(f)(x)
    np.testing.assert_allclose(yax.jit(yax.grad(f))(x), g, rtol=1e-12)
    np.testing.assert_allclose(yax.grad(yax.jit(f))(x), g, rtol=1e-12)
    np.testing.assert_allclose(yax.jit(yax.grad(yax.jit(f)))(x), g, rtol=1e-12)
    np.testing.assert_allclose(yax.vmap(yax.grad(lambda t: jnp.sin(t) * t * t))(x), g,
                               rtol=1e-12)


def test_grad_of_jit_keeps_both_passes_staged():
    f = yax.jit(lambda x: jnp.sin(x) * x)
    text = str(yax.make_jaxpr(yax.grad(lambda x: jnp.sum(f(x))))(jnp.ones(3)))
    assert text.count("= jit[") == 2 and "_known" in text and "transpose_" in text


def test_hessian_vector_products_agree(x64):
    f = lambda x: jnp.sum(jnp.sin(x) * x ** 3)
    x = np.linspace(0.1, 1.0, 4)
    v = np.linspace(-1.0, 1.0, 4)
    fwd_over_rev = yax.jvp(yax.grad(f), (x,), (v,))[1]
    rev_over_rev = yax.grad(lambda y: jnp.sum(yax.grad(f)(y) * v))(x)
    # analytic Hessian of sum(sin(x) x^3) is diagonal
    h = -np.sin(x) * x ** 3 + 6 * np.cos(x) * x ** 2 + 6 * np.sin(x) * x
    np.testing.assert_allclose(fwd_over_rev, h * v, rtol=1e-10)
    np.testing.assert_allclose(rev_over_rev, h * v, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(yax.hessian(f)(x)) @ v, h * v, rtol=1e-10)


def test_jacobians_match_analytic(x64):
    f = lambda x: jnp.sin(x) * x
    x = np.linspace(0.1, 1.0, 3)
    want = np.diag(np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(yax.jacfwd(f)(x), want, rtol=1e-12)
    np.testing.assert_allclose(yax.jacrev(f)(x), want, rtol=1e-12)


def test_check_grads_catches_a_wrong_rule(x64):
    from yax.core.primitive import Primitive
    from yax.primitives import elementwise as ew
    bad = Primitive("bad_sin")
    bad.abstract_eval = ew.unary_primitives["sin"].abstract_eval
    bad.lower = ew.unary_primitives["sin"].lower
    from yax.primitives._ad_rules import defjvp
    defjvp(bad, lambda t, out, x: t * 2.0)  # wrong: should be t * cos(x)
    with pytest.raises(AssertionError):
        check_grads(lambda x: bad.bind(x), (np.array([0.3, 0.5]),), order=1, modes=("fwd",))


def test_vmap_errors_name_arguments_and_sizes():
    with pytest.raises(yax.errors.ShapeError) as info:
        yax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
    assert "args[0]: 3" in str(info.value) and "args[1]: 4" in str(info.value)
    with pytest.raises(yax.errors.ShapeError, match="out of range"):
        yax.vmap(lambda a: a, in_axes=2)(jnp.ones((2, 2)))
    with pytest.raises(yax.errors.YaxError, match="in_axes"):
        yax.vmap(lambda a, b: a, in_axes=(0, 0, 0))(jnp.ones(2), jnp.ones(2))


def test_vmap_axis_size_without_batched_inputs():
    out = yax.vmap(lambda: jnp.ones(2), axis_size=3)()
    assert out.shape == (3, 2)


def test_grad_jaxpr_of_mlp_is_clean():
    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 + b2 - y) ** 2)
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(3, 4)).astype(np.float32), np.zeros(4, np.float32)),
              (rng.normal(size=(4, 2)).astype(np.float32), np.zeros(2, np.float32))]
    jaxpr = yax.make_jaxpr(yax.grad(loss))(params, np.ones((5, 3), np.float32),
                                           np.ones((5, 2), np.float32))
    text = str(jaxpr)
    assert not jaxpr.jaxpr.constvars  # constants are inline literals
    for leftover in ("zeros", "integer_pow[y=1]", "convert_element_type"):
        assert leftover not in text, leftover
    # one add_any: tanh's JVP written as jax writes it, (t + t*tanh)(1 - tanh) (jax's has it too)
    assert text.count("add_any") == 1
    # make_jaxpr keeps the unused primal work, as jax's does: 26 equations (jax 0.10.2's: 30)
    assert len(jaxpr.eqns) <= 26


def test_second_eager_grad_call_compiles_nothing():
    from yax.runtime import executable
    f = yax.jit(lambda x: jnp.sin(x) * x)
    for g in (yax.grad(lambda x: jnp.sum(f(x))), yax.grad(lambda x: jnp.sum(jnp.tanh(x) * x))):
        x, x2 = jnp.arange(3.0), jnp.arange(1.0, 4.0)
        g(x)
        before = executable.stats["compiles"]
        g(x2)
        assert executable.stats["compiles"] == before


def test_aux_outputs_are_values_not_tracers():
    from yax.core.trace import Tracer
    f = lambda x: (jnp.sum(jnp.sin(x)), {"double": x * 2, "n": jnp.sum(x > 0)})
    x = jnp.array([0.5, -1.0, 2.0])
    for aux in (yax.grad(f, has_aux=True)(x)[1], yax.vjp(f, x, has_aux=True)[2],
                yax.value_and_grad(f, has_aux=True)(x)[0][1],
                yax.jit(yax.grad(f, has_aux=True))(x)[1]):
        assert not any(isinstance(v, Tracer) for v in aux.values())
        np.testing.assert_allclose(aux["double"], [1.0, -2.0, 4.0])
        assert int(aux["n"]) == 2


def test_jacobians_with_aux_match_jax():
    import jax
    import jax.numpy as jjnp
    fy = lambda x: (jnp.sin(x) * jnp.sum(x ** 2), {"a": x * 2})
    fj = lambda x: (jjnp.sin(x) * jjnp.sum(x ** 2), {"a": x * 2})
    x = np.array([0.3, -0.7, 1.1], np.float32)
    for ours, theirs in ((yax.jacfwd, jax.jacfwd), (yax.jacrev, jax.jacrev)):
        (jy, ay), (jj, aj) = ours(fy, has_aux=True)(x), theirs(fj, has_aux=True)(x)
        np.testing.assert_allclose(jy, jj, rtol=1e-5)
        np.testing.assert_allclose(ay["a"], aj["a"])
    g = lambda lib, np_: lambda x: (np_.sum(np_.sin(x) ** 3), np_.max(x))
    (hy, auxy), (hj, auxj) = (yax.hessian(g(yax, jnp), has_aux=True)(x),
                              jax.hessian(g(jax, jjnp), has_aux=True)(x))
    np.testing.assert_allclose(hy, hj, rtol=1e-5, atol=1e-6)
    assert float(auxy) == float(auxj)
