"""`custom_vjp.defvjp(fwd, bwd, symbolic_zeros=True)` as jax's: `fwd` receives each argument
leaf as a CustomVJPPrimal (`.value`, `.perturbed`), `bwd` receives a SymbolicZero for each
output cotangent that is zero and may return None for an input's, and the derivatives equal
jax's under grad, jit, vmap and grad of grad; forward mode (which jax refuses) still works by
transposing bwd."""

from __future__ import annotations

import functools

import jax
import jax.custom_derivatives
import numpy as np
import pytest

import yax
import yax._jax_names.custom_derivatives as yax_names  # what alias mode serves as jax's module
from yax.transforms.custom_derivatives import CustomVJPPrimal, SymbolicZero

_NAMES = {yax: yax_names, jax: jax.custom_derivatives}


def _make(api, log):
    """f(x, y, n) = (sin(x) * y, x * y): fwd logs which leaves are perturbed, bwd logs which
    cotangents are symbolic zeros and skips their terms (arithmetic on one would fail)."""
    primal_cls = _NAMES[api].CustomVJPPrimal
    zero_cls = _NAMES[api].SymbolicZero
    jnp = api.numpy

    @api.custom_vjp
    def f(x, y, n):
        return jnp.sin(x) * y, x * y

    def fwd(x, y, n):
        log.append(("fwd", tuple((type(a) is primal_cls, a.perturbed) for a in (x, y, n))))
        x, y = x.value, y.value
        # the outputs computed directly: jax refuses jvp of f itself (jacfwd of grad)
        return (jnp.sin(x) * y, x * y), (jnp.sin(x), jnp.cos(x), x, y)

    def bwd(res, cts):
        sin_x, cos_x, x, y = res
        ca, cb = cts
        log.append(("bwd", tuple(isinstance(c, zero_cls) for c in cts)))
        dx, dy = 0.0, 0.0
        if not isinstance(ca, zero_cls):
            dx, dy = dx + cos_x * y * ca, dy + sin_x * ca
        if not isinstance(cb, zero_cls):
            dx, dy = dx + y * cb, dy + x * cb
        return dx, dy, None
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


def _first(api, f):
    return lambda x, y, n: f(x, y, n)[0]


def _both(api, f):
    return lambda x, y, n: sum(f(x, y, n))


_XS = np.linspace(0.1, 0.9, 3, dtype=np.float32)
_PROGRAMS = {
    "grad x": lambda api, f: api.grad(_first(api, f))(0.5, 2.0, 3),
    "grad y": lambda api, f: api.grad(_first(api, f), argnums=1)(0.5, 2.0, 3),
    "grad x, y of both": lambda api, f: api.grad(_both(api, f), argnums=(0, 1))(0.5, 2.0, 3),
    "jit grad": lambda api, f: api.jit(api.grad(_first(api, f)))(0.5, 2.0, 3),
    "grad jit": lambda api, f: api.grad(api.jit(_first(api, f)))(0.5, 2.0, 3),
    "vmap grad": lambda api, f: api.vmap(api.grad(_first(api, f)), (0, None, None))(
        _XS, np.float32(2.0), 3),
    "grad vmap": lambda api, f: api.grad(lambda x: api.vmap(f, (0, None, None))(
        x, np.float32(2.0), 3)[0].sum())(_XS),
    "grad of grad": lambda api, f: api.grad(api.grad(_first(api, f)))(0.5, 2.0, 3),
    "value_and_grad second output": lambda api, f: api.value_and_grad(
        lambda x: f(x, 2.0, 3)[1])(0.5),
    "jacfwd of grad": lambda api, f: api.jacfwd(api.grad(_first(api, f)))(0.5, 2.0, 3),
    "hessian x, y": lambda api, f: api.hessian(_first(api, f), argnums=(0, 1))(0.5, 2.0, 3),
    "vjp with explicit cotangents": lambda api, f: api.vjp(
        lambda x: f(x, 2.0, 3), 0.5)[1]((np.float32(1.0), np.float32(0.0))),
}


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_symbolic_zeros_as_jax(name):
    log_yax, log_jax = [], []
    got = _PROGRAMS[name](yax, _make(yax, log_yax))
    want = _PROGRAMS[name](jax, _make(jax, log_jax))
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert log_yax, "the rules were not called"
    assert log_yax == log_jax  # perturbed flags seen by fwd, symbolic zeros seen by bwd


def _make_tree(api, log):
    """g(nondiff, {"a": x, "b": (y, k)}): a pytree argument (fwd sees one CustomVJPPrimal per
    leaf) after a nondiff_argnums argument (passed as it is, to fwd and first to bwd)."""
    primal_cls = _NAMES[api].CustomVJPPrimal
    jnp = api.numpy

    @functools.partial(api.custom_vjp, nondiff_argnums=(0,))
    def g(power, tree):
        return jnp.sum(tree["a"] ** power * tree["b"][0])

    def fwd(power, tree):
        leaves = api.tree_util.tree_leaves(tree, is_leaf=lambda v: isinstance(v, primal_cls))
        log.append((power, tuple((type(v) is primal_cls, v.perturbed) for v in leaves)))
        a, (y, k) = tree["a"].value, tree["b"]
        return g(power, {"a": a, "b": (y.value, k.value)}), (a, y.value)

    def bwd(power, res, ct):
        a, y = res
        return ({"a": power * a ** (power - 1) * y * ct, "b": (jnp.sum(a ** power) * ct, None)},)
    g.defvjp(fwd, bwd, symbolic_zeros=True)
    return g


@pytest.mark.parametrize("argnum", ["a", "b"])
def test_pytree_argument_and_nondiff_argnums_as_jax(argnum):
    def program(api, g):
        def loss(a, y):
            return g(2, {"a": a, "b": (y, 5)})
        return api.jit(api.grad(loss, argnums=0 if argnum == "a" else 1))(_XS, np.float32(1.5))
    log_yax, log_jax = [], []
    got = program(yax, _make_tree(yax, log_yax))
    want = program(jax, _make_tree(jax, log_jax))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert log_yax and log_yax == log_jax


def test_forward_mode_transposes_bwd():
    """jax refuses jvp of a custom_vjp function; yax transposes bwd, with zeros materialised
    for the traced bwd (each cotangent is an array there)."""
    log = []
    f = _make(yax, log)
    out, t = yax.jvp(lambda x: f(x, 2.0, 3), (0.5,), (1.0,))
    want_out, want_t = jax.jvp(lambda x: (jax.numpy.sin(x) * 2.0, x * 2.0), (0.5,), (1.0,))
    np.testing.assert_allclose(np.asarray(out), np.asarray(want_out), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(t), np.asarray(want_t), rtol=1e-6)
    assert ("fwd", ((True, True), (True, False), (True, False))) in log


def test_bwd_may_return_symbolic_zero():
    @yax.custom_vjp
    def g(x, y):
        return x * y

    def fwd(x, y):
        return g(x.value, y.value), (x.value, y.value, y.perturbed)

    def bwd(res, ct):
        x, y, _ = res
        return ct * y, SymbolicZero.from_primal_value(x)
    g.defvjp(fwd, bwd, symbolic_zeros=True)
    dx, dy = yax.grad(g, argnums=(0, 1))(3.0, 4.0)
    assert float(dx) == 4.0 and float(dy) == 0.0


def test_custom_vjp_primal_is_exposed_under_jax_names():
    assert yax_names.CustomVJPPrimal is CustomVJPPrimal
    p = CustomVJPPrimal(1.0, False)
    assert p.value == 1.0 and p.perturbed is False


def test_integer_output_cotangent_is_a_float0_symbolic_zero_as_jax():
    def run(api):
        zero_cls, log = _NAMES[api].SymbolicZero, []

        @api.custom_vjp
        def f(x):
            return x * 2.0, (x > 0).astype(np.int32)

        def fwd(x):
            return (x.value * 2.0, (x.value > 0).astype(np.int32)), None

        def bwd(res, cts):
            log.append([(isinstance(c, zero_cls), str(np.dtype(c.dtype))) for c in cts])
            return (2.0 * cts[0],)
        f.defvjp(fwd, bwd, symbolic_zeros=True)
        grads = api.vmap(api.grad(lambda x: f(x)[0]))(np.ones(2, np.float32))
        return np.asarray(grads), log
    (got, log_yax), (want, log_jax) = run(yax), run(jax)
    np.testing.assert_array_equal(got, want)
    assert log_yax == log_jax == [[(False, "float32"), (True, str(np.dtype(jax.dtypes.float0)))]]
