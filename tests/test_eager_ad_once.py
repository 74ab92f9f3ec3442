"""Eager grad/value_and_grad/vjp run the user's function exactly once per call, whatever it
holds (custom_jvp, custom_vjp, debug.print, debug.callback, io_callback, jit, checkpoint), and
side effects happen as often as under jax. Each case counts Python executions (of the function
and of its custom rules) and printed lines, in yax and in jax, and compares the gradients.
"""

from __future__ import annotations

import collections
import contextlib
import io

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.runtime import executable

KINDS = ("custom_jvp", "custom_vjp", "print", "callback", "io_callback", "jit_print",
         "checkpoint")
MODES = ("grad", "value_and_grad", "vjp")


def _body(lib, np_, kind, tick):
    """The inner part of the function under test, built with `lib` (yax or jax)."""
    if kind == "custom_jvp":
        @lib.custom_jvp
        def g(x):
            tick("fun")
            return np_.sin(x)

        @g.defjvp
        def g_jvp(primals, tangents):
            tick("jvp rule")
            return np_.sin(primals[0]), np_.cos(primals[0]) * tangents[0]
        return lambda x: g(x) * 2.0
    if kind == "custom_vjp":
        @lib.custom_vjp
        def h(x):
            tick("fun")
            return np_.sin(x)

        def fwd(x):
            tick("fwd")
            return np_.sin(x), x

        def bwd(x, ct):
            tick("bwd")
            return (np_.cos(x) * ct,)
        h.defvjp(fwd, bwd)
        return lambda x: h(x) * 2.0
    if kind == "print":
        def printing(x):
            lib.debug.print("x={x}", x=x)
            return np_.sin(x)
        return printing
    if kind == "callback":
        def calling(x):
            lib.debug.callback(lambda v: tick("callback"), x)
            return np_.sin(x)
        return calling
    if kind == "io_callback":
        shape = lib.ShapeDtypeStruct((), np.float32)

        def io(x):
            three = lib.experimental.io_callback(
                lambda v: (tick("callback"), np.float32(3.0))[1], shape,
                lib.lax.stop_gradient(x))
            return np_.sin(x) * three
        return io
    if kind == "jit_print":
        @lib.jit
        def jitted(x):
            lib.debug.print("jit x={x}", x=x)
            return np_.sin(x)
        return lambda x: jitted(x) * 2.0
    assert kind == "checkpoint"

    @lib.checkpoint
    def remat(x):
        tick("checkpointed")
        return np_.sin(np_.sin(x))
    return lambda x: remat(x) * 2.0


def _run(lib, np_, kind, mode):
    """(counts of Python executions and printed lines, the gradient) of one call."""
    counts = collections.Counter()

    def tick(name):
        counts[name] += 1
    body = _body(lib, np_, kind, tick)

    def f(x):
        tick("function")
        return body(x)
    out = io.StringIO()
    x = np_.asarray(0.5, dtype=np.float32)
    with contextlib.redirect_stdout(out):
        if mode == "grad":
            g = lib.grad(f)(x)
        elif mode == "value_and_grad":
            _, g = lib.value_and_grad(f)(x)
        else:
            y, f_vjp = lib.vjp(f, x)
            (g,) = f_vjp(np_.ones_like(y))
        if lib is jax:
            jax.effects_barrier()
    counts["printed lines"] = len(out.getvalue().splitlines())
    return dict(counts), np.asarray(g)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_eager_reverse_mode_runs_the_function_once_as_jax(kind, mode):
    got, g = _run(yax, jnp, kind, mode)
    want, g_ref = _run(jax, jnp_ref, kind, mode)
    assert got["function"] == 1
    np.testing.assert_allclose(g, g_ref, rtol=1e-6)
    assert got == want, f"yax {got}, jax {want}"


def test_the_first_calls_run_the_rules_every_time():
    """Compiled reuse never skips the user's Python: a second and third call run the function
    and its custom rules again, as jax does."""
    for kind in ("custom_jvp", "custom_vjp", "print"):
        counts = collections.Counter()
        body = _body(yax, jnp, kind, lambda name: counts.update([name]))
        x = jnp.asarray(np.float32(0.3))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for _ in range(3):
                yax.grad(lambda v, body=body: body(v) * v)(x)
        assert len(out.getvalue().splitlines()) == (3 if kind == "print" else 0)
        rules = {"custom_jvp": ["jvp rule"], "custom_vjp": ["fwd", "bwd"], "print": []}[kind]
        for rule in rules:
            assert counts[rule] == 3, (kind, dict(counts))


def test_custom_jvp_under_eager_grad_compiles_nothing_once_warm():
    @yax.custom_jvp
    def g(x):
        return jnp.sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        return jnp.sin(primals[0]), jnp.cos(primals[0]) * tangents[0]

    def f(x):
        return jnp.sum(jnp.tanh(g(x * 2.0)) + jnp.sin(x) ** 2)

    def f_ref(x):
        return jnp_ref.sum(jnp_ref.tanh(jnp_ref.sin(x * 2.0)) + jnp_ref.sin(x) ** 2)
    x = np.linspace(0, 1, 8, dtype=np.float32)
    gf = yax.grad(f)
    for _ in range(2):  # the rule object is seen twice before the program is compiled
        gf(jnp.asarray(x))
    before = executable.stats["compiles"]
    got = gf(jnp.asarray(x))
    assert executable.stats["compiles"] == before
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.grad(f_ref)(x)), rtol=1e-5,
                               atol=1e-6)


def test_custom_rule_branching_on_values_works_under_eager_grad():
    """As in jax, the custom rule runs with concrete primal values (it may branch on them)."""
    @yax.custom_jvp
    def clip_grad(x):
        return x

    @clip_grad.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        scale = 0.0 if float(x) > 1.0 else 1.0
        return x, t * scale
    assert float(yax.grad(lambda x: clip_grad(x) * 3.0)(0.5)) == 3.0
    assert float(yax.grad(lambda x: clip_grad(x) * 3.0)(2.0)) == 0.0


def test_closing_over_a_differentiated_value_is_still_an_error():
    def f(x):
        y = x * 2.0

        @yax.custom_jvp
        def g(z):
            return z * y

        @g.defjvp
        def _(primals, tangents):
            return g(primals[0]), tangents[0] * y
        return g(x)
    with pytest.raises(yax.errors.CustomDerivativeError, match="closes over"):
        yax.grad(f)(1.0)
