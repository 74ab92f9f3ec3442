"""jit's parameters beyond the basics, with jax 0.10.2's meaning: donate_argnames (positional
and keyword-only), keep_unused, device/backend (deprecated, with jax's warning and errors),
inline (no nested pjit in the outer program) and compiler_options (XLA options by name)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import only_against_jax_0_10


def _scaled(x, y):
    return x * 2.0 + y


def _keyword_only(x, *, y):
    return x + y


@pytest.mark.parametrize("api", [jax, yax], ids=["jax", "yax"])
def test_donate_argnames_deletes_the_named_arguments(api):
    xp = api.numpy
    a, b = xp.ones(3), xp.ones(3)
    out = api.jit(_scaled, donate_argnames="x")(a, b)
    assert (a.is_deleted(), b.is_deleted()) == (True, False)
    np.testing.assert_allclose(np.asarray(out), 3.0)
    a, b = xp.ones(3), xp.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax may say a donation was unused on CPU
        out = api.jit(_keyword_only, donate_argnames=("y",))(a, y=b)
    assert (a.is_deleted(), b.is_deleted()) == (False, True)
    np.testing.assert_allclose(np.asarray(out), 2.0)


def test_donate_argnames_and_argnums_are_linked_as_jax():
    a, b = jnp.ones(3), jnp.ones(3)
    yax.jit(_scaled, donate_argnames="y")(a, b)  # a name also donates its position
    assert b.is_deleted() and not a.is_deleted()


@pytest.mark.parametrize("keep_unused", [False, True])
def test_keep_unused_gives_jax_values(keep_unused):
    def f(x, unused):
        return x + 1.0
    got = yax.jit(f, keep_unused=keep_unused)(1.0, 2.0)
    want = jax.jit(f, keep_unused=keep_unused)(1.0, 2.0)
    assert float(got) == float(want)
    # yax keeps every parameter (what jax does with keep_unused=True)
    assert yax.jit(f, keep_unused=keep_unused).lower(1.0, 2.0).as_text().count("%arg") >= 2


@pytest.mark.parametrize("option", ["device", "backend"])
def test_device_and_backend_run_there_with_jax_warning(option):
    value = {"device": yax.devices()[0], "backend": "cpu"}[option]
    with pytest.warns(DeprecationWarning, match="deprecated"):
        f = yax.jit(lambda x: x + 1.0, **{option: value})
    out = f(jnp.ones(2))
    assert out.devices() == {yax.devices("cpu")[0]}
    np.testing.assert_allclose(np.asarray(out), 2.0)


def test_device_and_backend_together_refused_as_jax():
    for api in (jax, yax):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(ValueError, match="both a device and a backend"):
                api.jit(lambda x: x, device=api.devices()[0], backend="cpu")(1.0)


@only_against_jax_0_10("jax 0.11 keeps an inline=True jit as an equation of its own")
def test_inline_traces_into_the_outer_program_as_jax():
    def outer(api, inline):
        return lambda x: api.jit(lambda a: a * 2.0, inline=inline)(x) + 1.0
    for inline in (False, True):
        ours = [e.primitive.name.replace("pjit", "jit")  # jax 0.10 calls its equation `jit`
                for e in yax.make_jaxpr(outer(yax, inline))(1.0).eqns]
        theirs = [e.primitive.name for e in jax.make_jaxpr(outer(jax, inline))(1.0).eqns]
        assert ours == theirs, (inline, ours, theirs)
    f = outer(yax, True)
    assert float(yax.grad(f)(3.0)) == float(jax.grad(outer(jax, True))(3.0)) == 2.0
    np.testing.assert_allclose(np.asarray(yax.vmap(f)(jnp.arange(3.0))),
                               np.asarray(jax.vmap(outer(jax, True))(jjnp.arange(3.0))))


def test_compiler_options_reach_xla():
    f = yax.jit(lambda x: x * 2.0, compiler_options={"xla_cpu_enable_fast_math": True})
    assert float(f(2.0)) == 4.0
    with pytest.raises(Exception, match="xla_no_such_option"):  # XLA's own error, as in jax
        yax.jit(lambda x: x * 3.0, compiler_options={"xla_no_such_option": True})(2.0)
    with pytest.raises(Exception, match="xla_no_such_option"):
        jax.jit(lambda x: x * 3.0, compiler_options={"xla_no_such_option": True})(2.0)


def test_decorator_form_keeps_the_new_options():
    @yax.jit(donate_argnames="x", compiler_options={"xla_cpu_enable_fast_math": False})
    def f(x):
        return x + 1.0
    a = jnp.ones(2)
    np.testing.assert_allclose(np.asarray(f(a)), 2.0)
    assert a.is_deleted()
