"""custom_jvp / custom_vjp: the seed examples, every transformation, control flow, errors.

Each seed example is written once against a module pair (jax-like, numpy-like) and built twice:
with yax and with real jax, which must agree."""

from __future__ import annotations

import gc
import warnings
import weakref

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.test_util import check_grads


def build(lib, np_):
    """The seed examples of docs/custom_derivatives.md, for `lib` = yax or jax."""
    @lib.custom_jvp
    def softplus(x):  # log1p(exp(x)), stable for large x, with a custom JVP
        return np_.where(x > 20.0, x, np_.log1p(np_.exp(np_.minimum(x, 20.0))))

    @softplus.defjvp
    def _softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t / (1.0 + np_.exp(-x))

    @lib.custom_vjp
    def straight_through_round(x):  # round forward, identity backward
        return np_.round(x)
    straight_through_round.defvjp(lambda x: (np_.round(x), None), lambda _, g: (g,))

    @lib.custom_vjp
    def clipped_exp(x):  # exp with its input clipped at 10, and its own backward
        return np_.exp(np_.minimum(x, 10.0))

    def _clipped_exp_fwd(x):
        y = np_.exp(np_.minimum(x, 10.0))
        return y, (y, x < 10.0)

    def _clipped_exp_bwd(res, g):
        y, inside = res
        return (np_.where(inside, g * y, 0.0),)
    clipped_exp.defvjp(_clipped_exp_fwd, _clipped_exp_bwd)

    @lib.custom_vjp
    def clip_gradient_norm(x, max_norm):  # identity forward; backward clips the cotangent
        return x

    def _clip_fwd(x, max_norm):
        return x, max_norm

    def _clip_bwd(max_norm, g):
        norm = np_.sqrt(np_.sum(g * g))
        return (g * np_.minimum(1.0, max_norm / norm), None)
    clip_gradient_norm.defvjp(_clip_fwd, _clip_bwd)
    return dict(softplus=softplus, ste=straight_through_round, clipped_exp=clipped_exp,
                clip=clip_gradient_norm)


Y, J = build(yax, jnp), build(jax, jjnp)


def _loss(fns, np_, name):
    f = fns[name]
    if name == "clip":
        return lambda x: np_.sum(f(x, 1.0) * np_.arange(1.0, 1.0 + x.shape[0]) * 10.0)
    return lambda x: np_.sum(f(x) * np_.sin(x))


X = np.array([-30.0, -1.3, 0.2, 0.7, 2.6, 12.0, 40.0], np.float32)


@pytest.mark.parametrize("name", ["softplus", "ste", "clipped_exp", "clip"])
def test_seed_examples_agree_with_jax(name):
    ly, lj = _loss(Y, jnp, name), _loss(J, jjnp, name)
    # the jax oracle runs jitted throughout (eager jax compiles a program per primitive)
    np.testing.assert_allclose(ly(X), jax.jit(lj)(X), rtol=1e-6)
    grad_j = jax.jit(jax.grad(lj))(X)
    np.testing.assert_allclose(yax.grad(ly)(X), grad_j, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yax.jit(yax.grad(ly))(X), grad_j, rtol=1e-5, atol=1e-6)
    per_example = lambda lib, l: lib.vmap(lib.grad(lambda x: l(x[None])))
    np.testing.assert_allclose(per_example(yax, ly)(X), jax.jit(per_example(jax, lj))(X),
                               rtol=1e-5, atol=1e-6)


def test_softplus_is_finite_and_exact_at_extremes():
    g = yax.grad(Y["softplus"])
    assert float(g(100.0)) == 1.0 and float(g(-100.0)) == pytest.approx(0.0, abs=1e-30)
    assert np.isfinite(float(Y["softplus"](1000.0)))


@pytest.mark.parametrize("name", ["softplus", "clipped_exp"])
def test_true_derivatives_pass_check_grads(name, x64):
    f = Y[name]
    x = np.array([-1.3, 0.2, 0.7, 2.6], np.float64)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    check_grads(yax.jit(f), (x,), order=2, modes=("fwd", "rev"))
    check_grads(yax.vmap(f), (x,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: yax.vmap(yax.grad(f))(x), (x,), order=1, modes=("fwd", "rev"))


def test_hessian_vector_product_forward_over_reverse(x64):
    x = np.array([0.3, -0.4, 1.5])
    for name in ("softplus", "clipped_exp"):
        fy, fj = _loss(Y, jnp, name), _loss(J, jjnp, name)
        v = np.array([1.0, 2.0, -1.0])
        hvp_y = yax.jvp(yax.grad(fy), (x,), (v,))[1]
        hvp_j = jax.jit(lambda x, v, fj=fj: jax.jvp(jax.grad(fj), (x,), (v,))[1])(x, v)
        np.testing.assert_allclose(hvp_y, hvp_j, rtol=1e-10)
        np.testing.assert_allclose(yax.hessian(fy)(x), jax.jit(jax.hessian(fj))(x), rtol=1e-10)


def test_jvp_of_custom_vjp_transposes_the_linear_bwd():
    x, t = np.array([0.5, 11.0], np.float32), np.array([2.0, 3.0], np.float32)
    y, y_dot = yax.jvp(Y["clipped_exp"], (x,), (t,))
    np.testing.assert_allclose(y_dot, [2.0 * np.exp(0.5), 0.0], rtol=1e-6)
    _, ste_dot = yax.jvp(Y["ste"], (x,), (t,))  # the surrogate derivative: identity
    np.testing.assert_allclose(ste_dot, t)
    jac = yax.jacfwd(Y["clipped_exp"])(x)
    np.testing.assert_allclose(jac, yax.jacrev(Y["clipped_exp"])(x), rtol=1e-6)
    np.testing.assert_allclose(yax.jit(lambda x, t: yax.jvp(Y["clipped_exp"], (x,), (t,)))(x, t)[1],
                               y_dot, rtol=1e-6)


def test_jvp_of_custom_vjp_with_nonlinear_bwd_warns_and_uses_the_primal():
    x, t = jnp.ones(3), jnp.arange(3.0)
    with pytest.warns(yax.errors.CustomVJPForwardModeWarning, match="not linear"):
        y, y_dot = yax.jvp(lambda x: Y["clip"](x, 1.0), (x,), (t,))
    np.testing.assert_allclose(y_dot, t)  # d/dx of the identity primal
    # reverse mode still uses the clipping bwd, with no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = yax.grad(lambda x: jnp.sum(Y["clip"](x, 1.0) * 10.0))(x)
    np.testing.assert_allclose(np.linalg.norm(g), 1.0, rtol=1e-6)


def test_nondiff_argnums_and_pytrees():
    def make(lib):
        def apply(fn, params):
            return fn(params["w"]) * params["b"]
        f = lib.custom_jvp(apply, nondiff_argnums=(0,))

        @f.defjvp
        def _(fn, primals, tangents):  # deliberately twice the true derivative
            (p,), (t,) = primals, tangents
            return f(fn, p), 2.0 * (t["w"] * p["b"] + fn(p["w"]) * t["b"])
        return f
    params = {"w": np.float32(0.5), "b": np.float32(3.0)}
    got = yax.grad(lambda p: make(yax)(jnp.sin, p))(params)
    want = jax.jit(jax.grad(lambda p: make(jax)(jjnp.sin, p)))(params)
    for k in ("w", "b"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
    np.testing.assert_allclose(got["b"], 2.0 * np.sin(0.5), rtol=1e-6)


def test_custom_vjp_nondiff_argnums_and_integer_args():
    def make(lib):
        def scale(k, x, n):
            return x * k * n
        f = lib.custom_vjp(scale, nondiff_argnums=(0,))

        def bwd(k, res, g):
            (n,) = res
            return (g * k * 3.0 * n, None)  # deliberately not the true derivative
        f.defvjp(lambda k, x, n: (scale(k, x, n), (n,)), bwd)
        return f
    gy = yax.grad(lambda x: make(yax)(2.0, x, 4))(1.5)
    gj = jax.jit(jax.grad(lambda x: make(jax)(2.0, x, 4)))(1.5)
    np.testing.assert_allclose(gy, gj)
    assert float(gy) == 24.0


def test_defjvps(x64):
    f = yax.custom_jvp(lambda x, y: jnp.sin(x) * y)
    f.defjvps(lambda t, out, x, y: jnp.cos(x) * y * t, lambda t, out, x, y: jnp.sin(x) * t)
    check_grads(f, (0.3, 1.7), order=1, modes=("fwd", "rev"))
    gx, gy = yax.grad(f, argnums=(0, 1))(0.3, 1.7)
    np.testing.assert_allclose([gx, gy], [np.cos(0.3) * 1.7, np.sin(0.3)], rtol=1e-6)


def test_custom_functions_inside_control_flow():
    sp, cexp = Y["softplus"], Y["clipped_exp"]
    jsp, jcexp = J["softplus"], J["clipped_exp"]

    def scanned(lib, f, g):
        def loss(x):
            def body(c, xi):
                return c + f(xi * c), None
            c, _ = lib.lax.scan(body, 0.5, x)
            return lib.lax.cond(c > 1.0, g, lambda c: c * 2.0, c)
        return loss
    x = np.array([0.3, -0.2, 0.9], np.float32)
    ly, lj = scanned(yax, sp, cexp), scanned(jax, jsp, jcexp)
    # the jax oracle runs jitted throughout (eager jax compiles a program per primitive)
    np.testing.assert_allclose(ly(x), jax.jit(lj)(x), rtol=1e-6)
    grad_j = jax.jit(jax.grad(lj))(x)
    np.testing.assert_allclose(yax.grad(ly)(x), grad_j, rtol=1e-5)
    np.testing.assert_allclose(yax.jit(yax.grad(ly))(x), grad_j, rtol=1e-5)
    xs = np.stack([x, x * 0.5])
    np.testing.assert_allclose(yax.vmap(yax.grad(ly))(xs), jax.jit(jax.vmap(jax.grad(lj)))(xs),
                               rtol=1e-5)
    # fori_loop with a custom_vjp function in the body
    fy = lambda x: yax.lax.fori_loop(0, 3, lambda i, c: cexp(c) * 0.1, x)
    fj = lambda x: jax.lax.fori_loop(0, 3, lambda i, c: jcexp(c) * 0.1, x)
    np.testing.assert_allclose(yax.grad(fy)(0.4), jax.jit(jax.grad(fj))(0.4), rtol=1e-5)


def test_grad_through_jit_of_custom_functions():
    f = yax.jit(lambda x: jnp.sum(Y["clipped_exp"](x) + Y["softplus"](x)))
    g = yax.jit(yax.grad(f))
    x = np.arange(3.0, dtype=np.float32)
    first = np.asarray(g(x))
    np.testing.assert_allclose(g(x), first)
    want = jax.jit(jax.grad(lambda x: jjnp.sum(J["clipped_exp"](x) + J["softplus"](x))))(x)
    np.testing.assert_allclose(first, want, rtol=1e-6)


def test_make_jaxpr_shows_the_custom_call():
    text = str(yax.make_jaxpr(Y["softplus"])(1.0))
    assert "custom_jvp_call" in text
    text = str(yax.make_jaxpr(yax.grad(Y["clipped_exp"]))(1.0))
    assert "custom_vjp_call" not in text and "exp" in text  # fwd ran, bwd was transposed in


# --- errors ------------------------------------------------------------------------------------

def test_missing_rules_are_clear():
    f = yax.custom_jvp(jnp.sin)
    with pytest.raises(yax.errors.CustomDerivativeError, match="defjvp"):
        f(1.0)
    g = yax.custom_vjp(jnp.sin)
    with pytest.raises(yax.errors.CustomDerivativeError, match="defvjp"):
        g(1.0)


def test_wrong_tangent_shape_is_clear():
    f = yax.custom_jvp(lambda x: x * 2)
    f.defjvp(lambda p, t: (f(*p), jnp.ones(3)))
    with pytest.raises(yax.errors.CustomDerivativeError, match=r"shape \(3,\).*\(2,\)"):
        yax.jvp(f, (jnp.ones(2),), (jnp.ones(2),))


def test_wrong_bwd_output_count_is_clear():
    f = yax.custom_vjp(lambda x, y: x * y)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1],))
    with pytest.raises(yax.errors.CustomDerivativeError, match="returned 1 cotangents for 2"):
        yax.grad(f)(1.0, 2.0)


def test_closing_over_a_differentiated_value_is_an_error_not_a_wrong_gradient():
    def outer(a):
        f = yax.custom_jvp(lambda x: x * a)
        f.defjvp(lambda p, t: (f(*p), t[0] * a))
        return f(2.0)
    with pytest.raises(yax.errors.CustomDerivativeError, match="closes over"):
        yax.grad(outer)(3.0)


def test_docs_page_runs():
    """The code blocks of docs/custom_derivatives.md run in order, in one namespace."""
    _run_doc("custom_derivatives.md", 6)


def _run_doc(name: str, n_blocks: int) -> None:
    import pathlib
    import re
    path = pathlib.Path(__file__).resolve().parent.parent / "docs" / name
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
    assert len(blocks) == n_blocks
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, f"docs/{name}", "exec"), namespace)


def test_check_grads_with_nondiff_arguments_under_jit_and_vmap(x64):
    def apply(fn, x, scale):
        return fn(x) * scale
    f = yax.custom_jvp(apply, nondiff_argnums=(0,))

    @f.defjvp
    def _(fn, primals, tangents):  # the true derivative, through the nondiff function
        (x, s), (tx, ts) = primals, tangents
        return f(fn, x, s), yax.jvp(fn, (x,), (tx,))[1] * s + fn(x) * ts
    g = yax.custom_vjp(apply, nondiff_argnums=(0,))
    g.defvjp(lambda fn, x, s: (apply(fn, x, s), (x, s)),
             lambda fn, res, ct: (yax.vjp(fn, res[0])[1](ct * res[1])[0],
                                  jnp.sum(ct * fn(res[0]))))
    x = np.array([0.3, -1.2, 2.0])
    for h in (f, g):
        fun = lambda x, s: h(jnp.tanh, x, s)
        check_grads(fun, (x, 1.5), order=2, modes=("fwd", "rev"))
        check_grads(yax.jit(fun), (x, 1.5), order=1, modes=("fwd", "rev"))
        check_grads(yax.vmap(fun, in_axes=(0, None)), (x, 1.5), order=1, modes=("fwd", "rev"))


def test_sinc_derivatives_at_zero_use_the_maclaurin_series():
    """jnp.sinc is built with custom_jvp so every order is exact at 0 (was 0 from order 2)."""
    f, g = jnp.sinc, jax.numpy.sinc
    for _ in range(4):  # orders 1 to 4
        f, g = yax.grad(f), jax.grad(g)
        g_jit = jax.jit(g)  # the oracle jitted: eager jax compiles a program per primitive
        np.testing.assert_allclose(f(0.0), g_jit(0.0), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(f(0.3), g_jit(0.3), rtol=1e-4)


def test_traces_of_a_staged_rule_do_not_outlive_the_program():
    """A JVP rule staged in a loop body is traced once and the trace kept with the call (so the
    carry's fixed point, two passes over the body here, does not rerun it: one call, as in
    jax); what the rule closes over is freed with the program, not kept by a global memo."""
    class Scale:
        factor = 2.0

    def run():
        scale, calls = Scale(), []

        @yax.custom_jvp
        def g(x):
            return jnp.sin(x)

        @g.defjvp
        def g_jvp(primals, tangents):
            calls.append(1)
            return g(primals[0]), scale.factor * tangents[0]

        def loop(x):  # the second carry gets a tangent only after one step
            return yax.lax.fori_loop(0, 2, lambda i, c: (g(c[0]), c[1] + c[0]),
                                     (x, np.float32(0)))[1]
        return float(yax.grad(loop)(np.float32(0.5))), len(calls), weakref.ref(scale)
    grad, n_calls, alive = run()
    assert grad == pytest.approx(1.0 + 2.0)
    assert n_calls == 1
    yax.clear_caches()
    gc.collect()
    assert alive() is None
