"""`checkpoint_policies.save_within_bytes(budget)`: store what saves the most recomputation
per byte, within a byte budget.

The derivatives are those of the unbudgeted program (jax.grad is the oracle); the residuals
(yax.saved_residuals) fit the budget; more budget means less recomputation.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import yax
import yax.numpy as ynp
from yax import checkpoint_policies as cp

RNG = np.random.default_rng(0)
WS = [(RNG.normal(size=(8, 8)) / 3).astype(np.float32) for _ in range(3)]
X = RNG.normal(size=(4, 8)).astype(np.float32)
ARRAY = 4 * 8 * 4  # bytes of one activation


def _block(np_mod):
    def block(Ws, h):
        for W in Ws:
            h = np_mod.tanh(np_mod.sin(h @ W))
        return h
    return block


def _loss(policy):
    block = yax.checkpoint(_block(ynp), policy=policy)
    return lambda Ws, x: ynp.sum(block(Ws, x) ** 2)


def _jax_loss(Ws, x):
    return jnp.sum(_block(jnp)(Ws, x) ** 2)


def _close(a, b, tol=2e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def _inside_bytes(policy):
    """Bytes the checkpointed block stores beyond its inputs (the final square's residual is
    outside it and the same for every policy)."""
    report = yax.saved_residuals(_loss(policy), WS, X, compare_checkpoint=False)
    return report.total_bytes, [r for r in report if not r.is_input]


BUDGETS = [0, ARRAY - 1, ARRAY, 3 * ARRAY, 5 * ARRAY, 10 ** 9]


@pytest.mark.parametrize("budget", BUDGETS)
def test_gradients_equal_the_unbudgeted_program(budget):
    loss = _loss(cp.save_within_bytes(budget))
    want = jax.value_and_grad(_jax_loss, argnums=(0, 1))(WS, X)
    _close(yax.value_and_grad(loss, argnums=(0, 1))(WS, X), want)
    _close(yax.jit(yax.value_and_grad(loss, argnums=(0, 1)))(WS, X), want)


def test_residuals_fit_the_budget_and_grow_with_it():
    plain, _ = _inside_bytes(None)
    totals = []
    for budget in BUDGETS[:-1]:
        total, _ = _inside_bytes(cp.save_within_bytes(budget))
        assert plain <= total <= plain + budget
        totals.append(total)
    assert totals == sorted(totals) and totals[-1] > totals[0]


def test_too_small_saves_nothing_and_large_saves_everything():
    assert _inside_bytes(cp.save_within_bytes(0)) == _inside_bytes(None)
    assert _inside_bytes(cp.save_within_bytes(ARRAY - 1)) == _inside_bytes(None)
    everything, saved = _inside_bytes(cp.everything_saveable)
    big, big_saved = _inside_bytes(cp.save_within_bytes(10 ** 9))
    assert big == everything
    assert sorted(r.primitive for r in big_saved) == sorted(r.primitive for r in saved)


def test_greedy_stores_the_matmuls_first():
    # a matmul costs 2*8 flops per element, sin or tanh 1: with room for three arrays the
    # three dot_general results are the most recomputation saved per byte
    _, saved = _inside_bytes(cp.save_within_bytes(3 * ARRAY))
    inside = [r.primitive for r in saved if r.primitive != "mul"]  # mul: the square, outside
    assert inside == ["dot_general"] * 3


def _count(jaxpr_text: str, name: str) -> int:
    return jaxpr_text.count(f" {name} ") + jaxpr_text.count(f" {name}[")


def test_a_larger_budget_recomputes_less():
    counts = []
    for budget in (0, 3 * ARRAY, 10 ** 9):
        text = str(yax.make_jaxpr(yax.grad(_loss(cp.save_within_bytes(budget))))(WS, X))
        counts.append((_count(text, "dot_general"), _count(text, "sin")))
    # budget 0 reruns the 3 matmuls and 3 sines; storing the matmuls removes their rerun;
    # storing everything removes the sines' too
    assert counts[0][0] > counts[1][0] == counts[2][0]
    assert counts[0][1] == counts[1][1] > counts[2][1]


def test_vmap_and_grad_of_grad():
    loss = _loss(cp.save_within_bytes(2 * ARRAY))
    xs = np.stack([X, X * 0.5])
    _close(yax.vmap(yax.grad(loss, argnums=1), in_axes=(None, 0))(WS, xs),
           jax.vmap(jax.grad(_jax_loss, argnums=1), in_axes=(None, 0))(WS, xs))
    _close(yax.grad(lambda Ws, xs: yax.vmap(lambda x: loss(Ws, x))(xs).sum())(WS, xs),
           jax.grad(lambda Ws, xs: jax.vmap(lambda x: _jax_loss(Ws, x))(xs).sum())(WS, xs))
    v = np.ones_like(X)
    yhvp = yax.grad(lambda x: ynp.vdot(yax.grad(loss, argnums=1)(WS, x), v))
    jhvp = jax.grad(lambda x: jnp.vdot(jax.grad(_jax_loss, argnums=1)(WS, x), v))
    _close(yax.jit(yhvp)(X), jhvp(X), tol=1e-4)


def test_inside_and_around_scan():
    policy = cp.save_within_bytes(2 * 8 * 4)
    xs = np.linspace(-1, 1, 5 * 8, dtype=np.float32).reshape(5, 8)

    def make(np_mod, scan, wrap):
        def step(h, x):
            h = np_mod.tanh(np_mod.sin(h @ WS[0]) + x)
            return h, np_mod.sum(h)

        def loss(h0):
            h, ys = scan(wrap(step), h0, xs)
            return np_mod.sum(h * h) + np_mod.sum(ys)
        return loss
    ystep = lambda f: yax.checkpoint(f, policy=policy, prevent_cse=False)
    want = jax.grad(make(jnp, jax.lax.scan, lambda f: f))(X[0])
    _close(yax.jit(yax.grad(make(ynp, yax.lax.scan, ystep)))(X[0]), want)
    # the whole loop checkpointed under one budget
    whole = yax.checkpoint(make(ynp, yax.lax.scan, lambda f: f), policy=policy)
    _close(yax.grad(whole)(X[0]), want)


def test_policy_value_semantics_and_names():
    assert cp.save_within_bytes(10) == cp.save_within_bytes(10.0) == \
        cp.save_within_bytes(np.int64(10))
    assert hash(cp.save_within_bytes(10)) == hash(cp.save_within_bytes(10))
    assert cp.save_within_bytes(10) != cp.save_within_bytes(11)
    assert repr(cp.save_within_bytes(10)) == "save_within_bytes(10)"
    assert yax.ad_checkpoint.checkpoint_policies.save_within_bytes is cp.save_within_bytes
    for bad in (-1, "1MiB", None, True, float("nan")):
        with pytest.raises(ValueError, match="save_within_bytes"):
            cp.save_within_bytes(bad)


def _walk_work(plan, stored):
    """Brute force: the work of the backward walk from the residuals with `stored` kept."""
    seen, done, work, stack = set(), set(), 0, list(plan.roots)
    while stack:
        v = stack.pop()
        if v in seen or v in stored or v not in plan.producer:
            continue
        seen.add(v)
        eqn = plan.producer[v]
        if id(eqn) not in done:
            done.add(id(eqn))
            work += plan.cost[id(eqn)]
            stack.extend(a for a in eqn.inputs if type(a).__name__ == "Var")
    return work


def test_dominator_gains_equal_brute_force_walks():
    from yax.checkpoint_policies import _BudgetPlan

    def f(W, x):   # shared values, several consumers, a multi-output loop
        h = x @ W
        a, b = ynp.sin(h), ynp.cos(h)
        c = ynp.tanh(a * b) @ W
        (u, v), _ = yax.lax.scan(lambda c, _: ((c[0] * c[1], c[1] + 1.0), None), (c, a), None,
                                 length=3)
        return [ynp.exp(u), v * b, c]
    jaxpr = yax.make_jaxpr(f)(WS[0], X).jaxpr
    residuals = list(jaxpr.outvars)  # as if the backward pass read the outputs
    plan = _BudgetPlan(jaxpr, residuals, set())
    inner = [o for e in jaxpr.eqns for o in e.outvars if o not in residuals]
    shared = set()
    for stored in (set(), {inner[0]}, set(inner[2:5])):
        gains, _ = plan.gains(stored)
        base = _walk_work(plan, stored)
        assert len(gains) >= 5
        for v, gain in gains.items():
            assert gain == base - _walk_work(plan, stored | {v}), v
            shared.add(gain > plan.cost[id(plan.producer[v])])
    assert shared == {True, False}  # some values dominate more than their own equation


def test_budget_on_top_of_another_policy():
    dots, dots_saved = _inside_bytes(cp.dots_saveable)
    both = cp.save_from_both_policies(cp.dots_saveable, cp.save_within_bytes(2 * ARRAY))
    total, saved = _inside_bytes(both)
    # the matmuls are kept by dots_saveable and cost the budget nothing: it buys 2 more values
    assert total == dots + 2 * ARRAY
    assert sorted(r.primitive for r in saved).count("dot_general") == 3
    _close(yax.grad(_loss(both), argnums=(0, 1))(WS, X),
           jax.grad(_jax_loss, argnums=(0, 1))(WS, X))
