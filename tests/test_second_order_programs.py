"""Hypothesis-drawn programs at second order, yax against real jax.

A drawn program is three segments of ops over a float64 vector of 4 (`before`, `inside`,
`after`); `inside` is wrapped in up to two of checkpoint (with a policy), custom_vjp (its
fwd/bwd written out), custom_jvp (its rule written out), scan, cond, fori_loop and jit. Each op
is a vector-to-vector function of the last value and, for the binary ones, of an earlier value
of the same segment, so a segment is a small expression tree. A program is built once as a
closure over a namespace `L` (tests/second_order.py) and so runs unchanged on yax and on jax.

Several programs make one table for `check_table` (on yax's side one jitted program per drawn
program, on jax's one for the whole batch): hessian, jvp(grad), linearize(grad) v,
jacfwd(jacrev), jacrev(jacrev), grad of <grad, v>, against jax's Hessian and central finite
differences of yax's gradient; their values are compared too. Draws are derandomized, so CI
sees the same programs every run."""

from __future__ import annotations

import jax
import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import yax
from tests.second_order import Case, check_table, jax_namespace, yax_namespace

N = 4
M4 = np.random.default_rng(7).normal(size=(N, N)) * 0.4 + np.eye(N) * 0.6
W4 = np.array([0.7, -0.4, 1.1, 0.3])
GATHER = np.array([2, 0, 2, 1])  # a repeated index: its transpose is a scatter-add
POINTS = (np.array([0.41, -0.73, 0.25, 0.62]), np.array([-0.35, 0.58, 0.91, -0.12]))

# op name -> f(L, a, b): `a` is the last value of the segment, `b` an earlier one
OPS = {
    "sin": lambda L, a, b: L.jnp.sin(a),
    "exp": lambda L, a, b: L.jnp.exp(0.5 * a),
    "tanh": lambda L, a, b: L.jnp.tanh(a),
    "log1p_sq": lambda L, a, b: L.jnp.log1p(a * a),
    "matmul": lambda L, a, b: L.jnp.asarray(M4) @ a,
    "cumsum": lambda L, a, b: 0.5 * L.jnp.cumsum(a),
    "sort": lambda L, a, b: L.jnp.sort(a),
    "where": lambda L, a, b: L.jnp.where(a > 0, L.jnp.sin(a), a * a),
    "transpose": lambda L, a, b: L.jnp.reshape(L.jnp.reshape(a, (2, 2)).T, (N,)),
    "gather": lambda L, a, b: a[L.jnp.asarray(GATHER)],
    "reverse": lambda L, a, b: a[::-1],
    "mul": lambda L, a, b: a * b,
    "add": lambda L, a, b: 0.5 * (a + b),
    "times_sum": lambda L, a, b: a * L.jnp.tanh(L.jnp.sum(b)),
}
BINARY = ("mul", "add", "times_sum")


def _segment(L, ops):
    def run(x):
        values = [x]
        for name, ref in ops:
            values.append(OPS[name](L, values[-1], values[ref % len(values)]))
        return values[-1]
    return run


def _custom_vjp(L, g):
    """g with a custom_vjp whose backward pass is g's own vjp, differentiable in turn."""
    f = L.ad.custom_vjp(lambda x: g(x))

    def fwd(x):
        return g(x), x

    def bwd(x, ct):
        return L.ad.vjp(g, x)[1](ct)
    f.defvjp(fwd, bwd)
    return f


def _custom_jvp(L, g):
    """g with a custom_jvp whose rule is g's own jvp, differentiable in turn."""
    f = L.ad.custom_jvp(lambda x: g(x))
    f.defjvp(lambda primals, tangents: L.ad.jvp(g, primals, tangents))
    return f


def _scan(L, g):
    def body(c, a):
        return g(c + a), c
    return lambda x: (lambda c, ys: c + 0.5 * ys.sum(0))(
        *L.lax.scan(body, x, L.jnp.stack([0.1 * x, -0.2 * x])))


def _cond(L, g):
    # the predicate is piecewise constant: the derivative is the taken branch's
    return lambda x: L.lax.cond(L.jnp.sum(x) > 0.1, g, lambda u: L.jnp.sin(u) * u, x)


def _checkpoint(policy):
    return lambda L, g: L.ad.checkpoint(
        g, policy=None if policy is None else getattr(L.policies, policy))


WRAPPERS = {
    "checkpoint": _checkpoint(None),
    "checkpoint[dots_saveable]": _checkpoint("dots_saveable"),
    "checkpoint[nothing_saveable]": _checkpoint("nothing_saveable"),
    "checkpoint[everything_saveable]": _checkpoint("everything_saveable"),
    "custom_vjp": _custom_vjp,
    "custom_jvp": _custom_jvp,
    "scan": _scan,
    "cond": _cond,
    "fori_loop": lambda L, g: lambda x: L.lax.fori_loop(
        0, 2, lambda i, c: 0.5 * (g(c) + c), x),
    "jit": lambda L, g: L.ad.jit(g),
}


def _text(ops):
    return " > ".join(f"{n}({r})" if n in BINARY else n for n, r in ops) or "id"


def _program(before, inside, wrappers, after):
    """The drawn program as a Case maker and its text (the case's name in a failure)."""
    def make(L):
        g = _segment(L, inside)
        for w in wrappers:
            g = WRAPPERS[w](L, g)
        pre, post = _segment(L, before), _segment(L, after)
        return lambda x: (lambda y: L.jnp.vdot(L.jnp.asarray(W4), y) + 0.5 * L.jnp.sum(y * y))(
            post(g(pre(x))))
    inner = _text(inside)
    for w in wrappers:
        inner = f"{w}[{inner}]"
    return make, f"{_text(before)} > {inner} > {_text(after)}"


_op = st.tuples(st.sampled_from(list(OPS)), st.integers(0, 5))


@st.composite
def programs(draw):
    before, after = (draw(st.lists(_op, max_size=1)) for _ in range(2))
    inside = draw(st.lists(_op, min_size=2, max_size=4))
    wrappers = draw(st.lists(st.sampled_from(list(WRAPPERS)), min_size=0, max_size=2))
    make, text = _program(before, inside, wrappers, after)
    # jax differentiates a custom_vjp in reverse mode only: compare reverse over reverse there
    kind = "rev" if "custom_vjp" in wrappers else "hessian"
    return text, Case(make, draw(st.sampled_from(POINTS)), jax_hessian=kind)


def _values_differ(cases) -> list[str]:
    """The values of every program of the batch, one jitted program per side."""
    def run(L):
        return lambda xs: {name: c.make(L)(xs[name]) for name, c in cases.items()}
    xs = {name: c.x for name, c in cases.items()}
    got = yax.jit(run(yax_namespace()))(xs)
    want = jax.jit(run(jax_namespace()))(xs)
    return [f"{name}: value {float(got[name])} != jax's {float(want[name])}"
            for name in cases if not np.allclose(got[name], want[name], rtol=1e-12, atol=1e-12)]


# no shrinking: each step would recompile a batch (minutes); a failure names its programs
@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batch=st.lists(programs(), min_size=4, max_size=4, unique_by=lambda p: p[0]))
def test_drawn_programs_match_jax_at_second_order(x64, batch):
    cases = dict(batch)
    bad = _values_differ(cases) + check_table(cases)
    assert not bad, "\n".join(bad)
