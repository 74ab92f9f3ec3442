"""debug_nans / debug_infs: the primitive that produced the NaN and the user's line are named."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp


@pytest.fixture
def flags():
    def set_flags(**kw):
        for k, v in kw.items():
            yax.config.update(k, v)
    yield set_flags
    set_flags(debug_nans=False, debug_infs=False)


def f(x):
    y = jnp.sin(x)
    z = jnp.log(y - 2.0)  # the NaN is made here
    return z * 2


def test_debug_nans_names_primitive_and_line_eager_and_jit(flags):
    flags(jax_debug_nans=True)  # the JAX name of the option works too
    pattern = r"invalid value \(nan\) encountered in log(.|\n)*test_debug_flags.py:23"
    for g in (f, yax.jit(f), yax.jit(lambda x: yax.jit(f)(x) + 1.0)):
        with pytest.raises(FloatingPointError, match=pattern):
            g(jnp.ones(3))
    ok = yax.jit(lambda x: jnp.sqrt(x) + 1)(jnp.ones(2))  # no NaN: no error
    np.testing.assert_allclose(ok, 2.0)


def test_debug_infs_and_flags_off(flags):
    flags(debug_infs=True)
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
        yax.jit(lambda x: 1.0 / x)(jnp.zeros(2))
    flags(debug_infs=False)
    assert np.isnan(np.asarray(f(jnp.ones(3)))).all()  # off: NaNs flow through


# --- smaller pieces JAX programs use --------------------------------------------------------------

def test_named_scope_typeof_jacobian():
    def f(x):
        with yax.named_scope("layer1"):
            y = jnp.sin(x)
            with yax.named_scope("inner"):
                z = y * 2
        return z + 1
    eqns = yax.make_jaxpr(f)(1.0).jaxpr.eqns
    assert [getattr(e.source, "scope", None) for e in eqns] == ["layer1", "layer1/inner", None]
    text = yax.jit(f).lower(jnp.ones(3)).as_text()
    assert 'loc("layer1"' in text and 'loc("layer1/inner"' in text
    assert "loc(" not in yax.jit(lambda x: x + 1).lower(1.0).as_text()  # no scopes: no locations
    assert yax.typeof(jnp.ones((2, 3))).str_short() == "f32[2,3]"
    np.testing.assert_allclose(yax.jacobian(jnp.sin)(jnp.ones(2)),
                               np.diag(np.cos(np.ones(2))), rtol=1e-6)


def test_custom_gradient_closure_convert_compile_time_eval():
    import jax

    def make(lib):
        @lib.custom_gradient
        def g(x):
            return x ** 2, lambda ct: (ct * 10 * x,)
        return g
    for x in (3.0, -1.5):
        assert float(yax.grad(make(yax))(x)) == float(jax.grad(make(jax))(x)) == 10 * x
    assert float(make(yax)(3.0)) == 9.0

    w = jnp.arange(3.0)
    converted, consts = yax.closure_convert(lambda x: x * w, jnp.ones(3))
    assert len(consts) == 1
    np.testing.assert_allclose(converted(jnp.full(3, 2.0), *consts), [0.0, 2.0, 4.0])

    @yax.jit
    def h(x):
        with yax.ensure_compile_time_eval():
            c = jnp.sin(3.0)
            scale = 2.0 if float(c) > 0 else 3.0  # a concrete value inside jit
        return x * scale
    assert float(h(1.0)) == 2.0


def test_debugging_doc_examples_run(capsys):
    import pathlib
    import re
    text = (pathlib.Path(__file__).parent.parent / "docs" / "debugging.md").read_text()
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        if block.startswith("# no-run"):  # as tests/test_docs_pages.py: waits on stdin
            continue
        exec(compile(block, "docs/debugging.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "x = [0. 1. 2.], sum = 3.0" in out and "row [1. 0.]" in out and "w = [1. 1.]" in out
