"""A user-written jaxpr interpreter (an evaluator and an inverse, in the style of JAX's
"Writing custom interpreters" tutorial) runs on yax's public jaxpr object model, and composes
with jit, vmap and grad; outputs are compared with the same interpreter run on real jax."""

import subprocess
import sys
import textwrap
from functools import wraps

import numpy as np
import pytest

import yax
from yax._jax_names import core as jax_core
from yax._jax_names.util import safe_map, safe_zip, split_list, unzip2
from yax.extend import core


def make_interpreters(jx, core_mod):
    """An evaluator and an inverse interpreter written against `jx` (yax or jax)."""
    jnp = jx.numpy

    def eval_jaxpr(jaxpr, consts, *args):
        env = {}

        def read(v):
            return v.val if type(v) is core_mod.Literal else env[v]

        def write(v, val):
            env[v] = val

        safe_map(write, jaxpr.invars, args)
        safe_map(write, jaxpr.constvars, consts)
        for eqn in jaxpr.eqns:
            outs = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
            safe_map(write, eqn.outvars, outs if eqn.primitive.multiple_results else [outs])
        return safe_map(read, jaxpr.outvars)

    inverses = {jx.lax.exp_p: jnp.log, jx.lax.tanh_p: jnp.arctanh,
                jx.lax.log_p: jnp.exp, jx.lax.neg_p: jnp.negative}

    def inverse_jaxpr(jaxpr, consts, *args):
        env = {}

        def read(v):
            return v.val if type(v) is core_mod.Literal else env[v]

        def write(v, val):
            env[v] = val

        safe_map(write, jaxpr.outvars, args)
        safe_map(write, jaxpr.constvars, consts)
        for eqn in jaxpr.eqns[::-1]:
            if eqn.primitive not in inverses:
                raise NotImplementedError(f"{eqn.primitive} has no inverse")
            safe_map(write, eqn.invars, [inverses[eqn.primitive](*safe_map(read, eqn.outvars))])
        return safe_map(read, jaxpr.invars)

    def inverse(fun):
        @wraps(fun)
        def wrapped(*args):
            closed = jx.make_jaxpr(fun)(*args)
            return inverse_jaxpr(closed.jaxpr, closed.literals, *args)[0]
        return wrapped

    return eval_jaxpr, inverse


def f_of(jnp):
    return lambda x: jnp.exp(jnp.tanh(-x))


EVAL, INVERSE = make_interpreters(yax, core)
F = f_of(yax.numpy)


def test_object_model():
    def g(x, w):
        return yax.numpy.dot(w, x) + 1.0

    closed = yax.make_jaxpr(g)(np.ones(3, np.float32), np.ones((2, 3), np.float32))
    assert isinstance(closed, core.ClosedJaxpr)
    assert closed.literals is closed.consts or list(closed.literals) == list(closed.consts)
    jaxpr = closed.jaxpr
    assert all(isinstance(v, core.Var) for v in jaxpr.invars)
    assert [v.aval.shape for v in jaxpr.invars] == [(3,), (2, 3)]
    eqn = jaxpr.eqns[0]
    assert isinstance(eqn, core.JaxprEqn)
    assert eqn.primitive is yax.lax.dot_general_p and "dimension_numbers" in eqn.params
    assert all(isinstance(a, (core.Var, core.Literal)) for e in jaxpr.eqns for a in e.invars)
    literals = [a for e in jaxpr.eqns for a in e.invars if type(a) is core.Literal]
    assert [float(lit.val) for lit in literals] == [1.0]
    assert repr(jaxpr.invars[0]).endswith(":float32[3]")
    assert str(jaxpr.invars[0].aval) == "float32[3]"


def test_user_eval_jaxpr_matches_the_function_and_core_eval_jaxpr():
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    closed = yax.make_jaxpr(F)(x)
    ours = EVAL(closed.jaxpr, closed.literals, x)
    assert isinstance(ours, list) and len(ours) == 1
    np.testing.assert_allclose(ours[0], F(x), rtol=1e-6)
    np.testing.assert_allclose(jax_core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], F(x))
    np.testing.assert_allclose(core.jaxpr_as_fun(closed)(x)[0], F(x))


def test_inverse_and_its_composition_with_transformations():
    x = (np.arange(5, dtype=np.float32) + 1.0) / 7.0
    inv = INVERSE(F)
    np.testing.assert_allclose(inv(F(0.3)), 0.3, rtol=1e-5)
    staged = yax.make_jaxpr(inv)(F(0.3))
    assert [e.primitive.name for e in staged.jaxpr.eqns] == ["log", "atanh", "neg"]
    out = yax.jit(yax.vmap(yax.grad(inv)))(x)
    # d/dy of -atanh(log y) is -1 / (y (1 - log(y)^2))
    np.testing.assert_allclose(out, -1 / (x * (1 - np.log(x) ** 2)), rtol=1e-5)


def test_inverse_matches_real_jax():
    jax = pytest.importorskip("jax")
    from jax.extend import core as jcore
    _, jinverse = make_interpreters(jax, jcore)
    x = (np.arange(5, dtype=np.float32) + 1.0) / 7.0
    expected = jax.jit(jax.vmap(jax.grad(jinverse(f_of(jax.numpy)))))(x)
    np.testing.assert_allclose(yax.jit(yax.vmap(yax.grad(INVERSE(F))))(x), expected, rtol=1e-5)


def test_missing_inverse_raises():
    with pytest.raises(NotImplementedError, match="sin"):
        INVERSE(yax.numpy.sin)(0.5)


def test_util_helpers():
    assert safe_zip([1, 2], "ab") == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError):
        safe_map(lambda a, b: a, [1, 2], [1])
    assert split_list(range(5), [2, 1]) == [[0, 1], [2], [3, 4]]
    assert unzip2([(1, "a"), (2, "b")]) == ((1, 2), ("a", "b"))


def test_interpreter_written_for_jax_runs_in_alias_mode(tmp_path):
    script = tmp_path / "interp.py"
    script.write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        from jax import lax
        from jax.extend import core
        from jax._src.util import safe_map

        def count(jaxpr):
            seen = {}
            for eqn in jaxpr.eqns:
                for v in eqn.invars:
                    if type(v) is core.Literal:
                        seen["literal"] = seen.get("literal", 0) + 1
                seen[str(eqn.primitive)] = seen.get(str(eqn.primitive), 0) + 1
            return seen

        closed = jax.make_jaxpr(lambda x: jnp.exp(x) * 2.0 + lax.tanh(x))(1.0)
        print(sorted(count(closed.jaxpr).items()), safe_map(len, [[1], [2, 3]]))
        print(type(closed).__module__.startswith("yax"))
    """))
    done = subprocess.run([sys.executable, "-m", "yax", str(script)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == [
        "[('add', 1), ('exp', 1), ('literal', 1), ('mul', 1), ('tanh', 1)] [1, 2]", "True"]
