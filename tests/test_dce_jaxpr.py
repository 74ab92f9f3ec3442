"""jax.interpreters.partial_eval.dce_jaxpr / dce_jaxpr_consts / dce_rules on yax jaxprs,
compared with jax's on the same program."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
from jax._src.interpreters import partial_eval as jpe

import yax
import yax.numpy as jnp
from yax._jax_names.core import eval_jaxpr
from yax._jax_names.interpreters import partial_eval as pe


def _program(np_):
    def f(x, y, z):
        return np_.sin(x) * 2, np_.cos(y) + 1, z * 0 + np_.sin(x)
    return f


def test_used_inputs_as_jax():
    closed = yax.make_jaxpr(_program(jnp))(1.0, 2.0, 3.0)
    jclosed = jax.make_jaxpr(_program(jjnp))(1.0, 2.0, 3.0)
    for used_outputs in ([True, False, False], [False, True, False], [False, False, True],
                         [False, False, False]):
        new, used = pe.dce_jaxpr(closed.jaxpr, used_outputs)
        _, jused = jpe.dce_jaxpr(jclosed.jaxpr, used_outputs)
        assert used == list(jused), used_outputs
        assert len(new.outvars) == sum(used_outputs)
    new, used = pe.dce_jaxpr(closed.jaxpr, [True, False, False], instantiate=True)
    assert used == [True, True, True] and len(new.invars) == 3


def test_pruned_program_computes_the_kept_outputs_and_keeps_effects():
    def f(x, y):
        yax.debug.print("side effect {}", y)
        return jnp.sin(x), jnp.cos(y)

    closed = yax.make_jaxpr(f)(1.0, 2.0)
    new, used = pe.dce_jaxpr(closed.jaxpr, [True, False])
    assert used == [True, True]  # y is read by the print, an effect
    assert [e.primitive.name for e in new.eqns].count("cos") == 0
    np.testing.assert_allclose(eval_jaxpr(new, [], 1.0, 2.0)[0], np.sin(1.0), rtol=1e-6)
    _, used_consts, used_inputs = pe.dce_jaxpr_consts(closed.jaxpr, [False, True])
    assert used_consts == [] and used_inputs == [False, True]


def test_dce_rules_are_consulted():
    closed = yax.make_jaxpr(lambda x, y: jnp.sin(x) + y)(1.0, 2.0)
    sin_p = closed.jaxpr.eqns[0].primitive
    seen = []

    def rule(used_outputs, eqn):
        seen.append(used_outputs)
        return [True], eqn

    pe.dce_rules[sin_p] = rule
    try:
        pe.dce_jaxpr(closed.jaxpr, [True])
    finally:
        del pe.dce_rules[sin_p]
    assert seen == [[True]]
