"""lax.custom_linear_solve: a primitive whose derivatives are custom_linear_solves, right at every
order, against real jax.

Every program is written once against a (lax, numpy, transformations) triple and run with yax and
with jax; a whole table of programs and transformations runs as one jitted program per library.
"""

from __future__ import annotations

import jax
import jax.lax as jlax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import assert_trees_close
from yax import errors, lax
from yax.test_util import check_grads

YAX, JAX = (lax, jnp, yax), (jlax, jjnp, jax)



def richardson(lax, jnp, omega=0.3):
    """x <- x + omega (b - A x) until the residual is tiny: a while_loop solver (never
    differentiated by custom_linear_solve)."""
    def solve(matvec, b):
        def cond(carry):
            x, k = carry
            r = b - matvec(x)
            return (jnp.sum(r * r) > 1e-28) & (k < 3000)

        def body(carry):
            x, k = carry
            return x + omega * (b - matvec(x)), k + 1
        return lax.while_loop(cond, body, (jnp.zeros_like(b), 0))[0]
    return solve


def _spd(jnp, th):
    s = jnp.sin(th)
    return jnp.diag(1.0 + 0.5 * jnp.exp(th)) + 0.1 * jnp.outer(s, s)


def _general(jnp, th):
    return _spd(jnp, th) + 0.2 * jnp.outer(jnp.cos(th), jnp.array([1.0, 0.0, -1.0]))


def systems(lib):
    """name -> loss(th, b): scalar losses through one custom_linear_solve each."""
    lax, jnp, _ = lib

    def direct_symmetric(th, b):
        a = _spd(jnp, th)
        x = lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: jnp.linalg.solve(a, r),
                                    symmetric=True)
        return jnp.sum(jnp.cos(x) * th)

    def direct_general(th, b):
        a = _general(jnp, th)
        x = lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: jnp.linalg.solve(a, r),
                                    transpose_solve=lambda vm, r: jnp.linalg.solve(a.T, r))
        return jnp.sum(jnp.sin(x) * jnp.exp(th))

    def while_symmetric(th, b):
        a = _spd(jnp, th)
        x = lax.custom_linear_solve(lambda v: a @ v, b, richardson(lax, jnp), symmetric=True)
        return jnp.sum(x ** 3) + jnp.sum(x * th)

    def while_general(th, b):
        a = _general(jnp, th)
        x = lax.custom_linear_solve(lambda v: a @ v, b, richardson(lax, jnp),
                                    transpose_solve=richardson(lax, jnp))
        return jnp.sum(jnp.tanh(x) * th)

    def pytree_with_aux(th, b):
        a = _spd(jnp, th)
        rhs = {"u": b, "w": b[:2] * th[:2]}

        def matvec(v):
            return {"u": a @ v["u"], "w": jnp.exp(th[:2]) * v["w"]}

        def solve(mv, r):
            x = richardson(lax, jnp)(lambda u: mv({"u": u, "w": r["w"]})["u"], r["u"])
            return {"u": x, "w": r["w"] / jnp.exp(th[:2])}, jnp.sum(x)
        x, aux = lax.custom_linear_solve(matvec, rhs, solve, symmetric=True, has_aux=True)
        return jnp.sum(x["u"] ** 2 * th) + jnp.sum(x["w"] ** 3) + 0.0 * aux

    return {f.__name__: f for f in (direct_symmetric, direct_general, while_symmetric,
                                    while_general, pytree_with_aux)}


def derivatives(lib, loss, th, b):
    """Every composition the issue names, for one loss."""
    _, _, t = lib
    ths = jnp.stack([th, 0.5 * th]) if t is yax else jjnp.stack([th, 0.5 * th])
    return {
        "value": loss(th, b),
        "grad": t.grad(loss, argnums=(0, 1))(th, b),
        "grad_grad": t.grad(lambda s: t.grad(loss)(s * th, b).sum())(1.0),
        "hessian": t.hessian(loss)(th, b),
        "jacfwd_jacrev": t.jacfwd(t.jacrev(loss, argnums=1), argnums=1)(th, b),
        "jvp_grad": t.jvp(lambda s: t.grad(loss)(s, b), (th,), (b,))[1],
        "vmap_hessian": t.vmap(t.hessian(loss), (0, None))(ths, b),
    }


TH, B = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, -0.5])


def test_every_composition_matches_jax_under_jit(x64):
    def table(lib):
        return {name: derivatives(lib, loss, TH, B) for name, loss in systems(lib).items()}
    got = yax.jit(lambda: table(YAX))()
    want = jax.jit(lambda: table(JAX))()
    for name in want:
        for what in want[name]:
            try:
                assert_trees_close(got[name][what], want[name][what], rtol=1e-8, atol=1e-10)
            except AssertionError as e:
                raise AssertionError(f"{name}: {what}") from e


def test_eager_matches_jit_at_second_order(x64):
    loss, jloss = systems(YAX)["while_symmetric"], systems(JAX)["while_symmetric"]
    # yax eagerly; the jax oracle jitted (eager jax compiles a program per primitive)
    assert_trees_close(yax.hessian(loss)(TH, B), jax.jit(jax.hessian(jloss))(TH, B),
                       rtol=1e-8)
    assert_trees_close(yax.grad(lambda b: yax.grad(loss, argnums=1)(TH, b).sum())(B),
                        jax.jit(jax.grad(lambda b: jax.grad(jloss, argnums=1)(TH, b).sum()))(B),
                        rtol=1e-8)


def test_the_issue_snippet_hessian_is_the_identity(x64):
    def make(lib):
        lax, jnp, _ = lib

        def f(th):
            a = jnp.diag(jnp.exp(th))
            return jnp.sum(lax.custom_linear_solve(lambda v: a @ v, jnp.ones(2),
                                                   lambda mv, r: jnp.linalg.solve(a, r),
                                                   symmetric=True))
        return f
    want = jax.jit(jax.hessian(make(JAX)))(jjnp.zeros(2))  # the oracle jitted: fewer compiles
    np.testing.assert_allclose(np.asarray(want), np.eye(2), atol=1e-12)
    assert_trees_close(yax.hessian(make(YAX))(jnp.zeros(2)), want)
    assert_trees_close(yax.jit(yax.hessian(make(YAX)))(jnp.zeros(2)), want)


@pytest.mark.parametrize("name", ["direct_general", "while_symmetric"])
def test_check_grads_second_order(x64, name):
    loss = systems(YAX)[name]
    check_grads(yax.jit(loss), (TH, B), order=2, atol=1e-6, rtol=1e-6)


def _solve_one(lib):
    lax, jnp, _ = lib

    def solve_one(m, b):
        return lax.custom_linear_solve(lambda v: m @ v, b, richardson(lax, jnp),
                                       transpose_solve=richardson(lax, jnp))
    return solve_one


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0)],
                         ids=["batched_b", "batched_matrix", "both"])
def test_vmap_of_b_matrix_or_both(x64, in_axes):
    rng = np.random.default_rng(0)
    ms = np.stack([np.eye(3) * 2.0 + 0.3 * rng.normal(size=(3, 3)) for _ in range(2)])
    bs = rng.normal(size=(2, 3))
    m_arg = ms if in_axes[0] == 0 else ms[0]
    b_arg = bs if in_axes[1] == 0 else bs[0]

    def everything(lib):
        _, _, t = lib
        solve = t.vmap(_solve_one(lib), in_axes)
        return (solve(m_arg, b_arg),
                t.grad(lambda m, b: (solve(m, b) ** 2).sum(), argnums=(0, 1))(m_arg, b_arg),
                t.jacfwd(lambda b: solve(m_arg, b))(b_arg))
    assert_trees_close(yax.jit(lambda: everything(YAX))(), jax.jit(lambda: everything(JAX))(),
                        rtol=1e-8)


def test_has_aux_returns_the_solvers_aux(x64):
    def run(lib):
        lax, jnp, _ = lib
        a = jnp.array([[3.0, 1.0], [1.0, 2.0]])

        def solve(mv, r):
            return jnp.linalg.solve(a, r), {"norm": jnp.sum(r * r)}
        return lax.custom_linear_solve(lambda v: a @ v, jnp.array([1.0, -1.0]), solve,
                                       symmetric=True, has_aux=True)
    assert_trees_close(run(YAX), jax.jit(lambda: run(JAX))())  # yax eager, the oracle jitted


def _count(jaxpr, names) -> int:
    """How many equations named in `names` a jaxpr (yax's or jax's) holds, looking inside
    sub-programs except those of the counted equations themselves."""
    total = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in names:
            total += 1
            continue
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else [value]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    total += _count(inner, names)
    return total


def test_grad_solves_as_often_as_jax(x64):
    # one solve forward and one transposed solve backward; the solver is never differentiated
    loss, jloss = systems(YAX)["while_general"], systems(JAX)["while_general"]
    names = {"custom_linear_solve", "while"}
    got = _count(yax.make_jaxpr(yax.grad(loss, argnums=(0, 1)))(TH, B).jaxpr, names)
    want = _count(jax.make_jaxpr(jax.grad(jloss, argnums=(0, 1)))(TH, B).jaxpr, names)
    assert got == want == 2


def test_forward_mode_needs_no_transpose_solve(x64):
    def loss(b):
        return jnp.sum(lax.custom_linear_solve(lambda v: 2.0 * v, b, lambda mv, r: r / 2.0) ** 2)
    np.testing.assert_allclose(float(loss(np.ones(2))), 0.5)
    np.testing.assert_allclose(np.asarray(yax.jacfwd(loss)(np.ones(2))), [0.5, 0.5])
    with pytest.raises(errors.CustomDerivativeError, match="transpose_solve=") as info:
        yax.grad(loss)(np.ones(2))
    assert "symmetric=True" in str(info.value)


a2 = np.array([[2.0, 0.5], [0.5, 1.0]])


@pytest.mark.parametrize("solve, match", [
    (lambda mv, r: r[:1], r"returned \(f64\[1\]\); it must return leaves shaped and typed like "
                          r"b: \(f64\[2\]\)"),
    (lambda mv, r: r.astype(jnp.int32), r"returned \(i32\[2\]\)"),
    (lambda mv, r: (r, r), "structured like b"),
], ids=["shape", "dtype", "structure"])
def test_a_wrong_solve_output_is_a_clear_trace_time_error(x64, solve, match):
    with pytest.raises(errors.CustomDerivativeError, match="custom_linear_solve: solve") as info:
        yax.make_jaxpr(lambda b: lax.custom_linear_solve(lambda v: a2 @ v, b, solve))(np.ones(2))
    assert __file__ in str(info.value)  # names the user's function by its file and line
    with pytest.raises(errors.CustomDerivativeError, match=match):
        lax.custom_linear_solve(lambda v: a2 @ v, np.ones(2), solve)


def test_has_aux_and_linearity_errors(x64):
    with pytest.raises(errors.CustomDerivativeError, match=r"pair \(solution, aux\)"):
        lax.custom_linear_solve(lambda v: a2 @ v, np.ones(2), lambda mv, r: r, has_aux=True)
    with pytest.raises(errors.CustomDerivativeError, match="not linear"):
        lax.custom_linear_solve(jnp.sin, np.ones(2), lambda mv, r: r,
                                transpose_solve=lambda vm, r: r)
