"""The suite-time fixes in yax itself: lowering contexts load only the MLIR dialects yax emits
(a rule written against jax's mlir API still gets every dialect), and the multi-primitive
ufuncs run eagerly as one compiled program (as jax's jitted jnp functions do) with the same
values, dtypes and weak types as jax and as their op-by-op evaluation, traced inline under a
transformation."""

from __future__ import annotations

import jax.numpy as jnp_ref
import numpy as np
import pytest
from jaxlib.mlir.dialects import arith

import yax
import yax.numpy as jnp
from yax._jax_names import core as jax_core
from yax._jax_names.interpreters import mlir as jax_mlir
from yax.extend import core
from yax.interpreters import mlir
from yax.interpreters.lowering import ModuleContext
from yax.runtime import executable

# --- lowering contexts ---------------------------------------------------------------------------


def test_lowering_context_loads_only_the_dialects_yax_emits():
    ctx = ModuleContext("cpu").context
    for op in ("func.func", "stablehlo.add", "chlo.erf_inv", "sdy.mesh"):
        assert ctx.is_registered_operation(op), op
    assert not ctx.is_registered_operation("arith.constant")
    assert mlir.make_context().is_registered_operation("arith.constant")  # the default: all


# a primitive lowered by a rule written for jax, emitting an op of a dialect yax never emits
_arith_p = core.Primitive("test_suitetime_arith")
_arith_p.def_abstract_eval(lambda x: jax_core.ShapedArray(x.shape, x.dtype))


def _arith_rule(ctx, x):
    arith.ConstantOp(mlir.ir.IntegerType.get_signless(32), 7)  # unused: only that it builds
    return [x]


jax_mlir.register_lowering(_arith_p, _arith_rule)


def test_a_jax_api_rule_may_emit_any_dialect():
    text = yax.jit(lambda x: _arith_p.bind(x) * 2.0).lower(np.ones(3, np.float32)).as_text()
    assert "arith.constant" in text and "stablehlo.multiply" in text


def test_lowering_still_compiles_and_runs():
    x = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
    got = yax.jit(lambda v: jnp.sin(v) * 2.0 + jnp.cumsum(v))(x)
    np.testing.assert_allclose(got, np.sin(x) * 2.0 + np.cumsum(x), rtol=1e-6)


# --- multi-primitive ufuncs: one program when eager -----------------------------------------------

FUSED = ["floor_divide", "remainder", "hypot", "copysign", "logaddexp", "logaddexp2",
         "heaviside", "fmax", "fmin"]
INT_OK = {"floor_divide", "remainder", "fmax", "fmin"}
X = np.array([[-3.5, 0.0, 2.25], [7.0, -0.5, 1.0]], np.float32)
Y = np.array([[2.0, -1.5, 0.5], [-2.5, 3.0, 1.0]], np.float32)
XNAN = np.array([np.nan, 1.0, np.nan, -2.0], np.float32)
YNAN = np.array([0.5, np.nan, np.nan, 3.0], np.float32)
XI = np.array([-7, 5, 0, 9, -1], np.int8)
YI = np.array([2, -3, 4, 4, 5], np.int8)


def _operands(name):
    cases = [(X, Y), (X, 1.5), (-2.0, Y)]
    if name in INT_OK:
        cases += [(XI, YI), (XI, 3)]
    if name in ("fmax", "fmin"):
        cases += [(XNAN, YNAN)]
    return cases


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6,
                               atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", FUSED)
def test_eager_matches_jax_and_op_by_op(name):
    fused = getattr(jnp, name)
    op_by_op = fused.__wrapped__  # the function itself, every primitive dispatched alone
    for a, b in _operands(name):
        ya, yb = (yax.device_put(v) if isinstance(v, np.ndarray) else v for v in (a, b))
        got, each = fused(ya, yb), op_by_op(ya, yb)
        want = getattr(jnp_ref, name)(*(jnp_ref.asarray(v) if isinstance(v, np.ndarray) else v
                                        for v in (a, b)))
        _same(got, want)
        _same(got, each)
        assert got.weak_type == each.weak_type == want.weak_type, (name, a, b)


def test_eager_call_is_one_compile():
    a = yax.device_put(np.arange(-6, 5, dtype=np.int16))  # a shape and dtype no test uses
    b = yax.device_put(np.full(11, 4, np.int16))
    programs = lambda: executable.stats["compiles"] + executable.stats["cache_loads"]  # noqa: E731
    before = programs()  # a compile, or a load from the suite's persistent cache
    out = jnp.floor_divide(a, b)
    assert programs() - before == 1
    np.testing.assert_array_equal(out, np.floor_divide(np.asarray(a), np.asarray(b)))
    before = programs()
    jnp.floor_divide(a, b)  # and the second call compiles nothing
    assert programs() == before


@pytest.mark.parametrize("name", ["floor_divide", "logaddexp", "fmax"])
def test_traced_inline_as_before(name):
    """Under a transformation the function is traced as it always was: no jit equation."""
    fused = getattr(jnp, name)
    staged = str(yax.make_jaxpr(fused)(X, Y))
    assert staged == str(yax.make_jaxpr(fused.__wrapped__)(X, Y))
    assert "jit" not in staged
    g = yax.grad(lambda x: jnp.sum(fused(x, Y)))(X)
    g_each = yax.grad(lambda x: jnp.sum(fused.__wrapped__(x, Y)))(X)
    _same(g, g_each)


# --- softmax, log_softmax, logsumexp: one program when eager, options compiled in -------------

A = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]], np.float32)
W = np.array([[True, False, True], [True, True, False]])
BW = np.array([[1.0, 0.5, -2.0], [0.0, 1.5, 1.0]], np.float32)
NN_CASES = [
    ("softmax", (A,), {}), ("softmax", (A, 0), {}), ("softmax", (A,), {"axis": None, "where": W}),
    ("log_softmax", (A,), {"axis": (0, 1)}), ("log_softmax", (A,), {"where": W}),
    ("logsumexp", (A,), {}), ("logsumexp", (A, 1), {"keepdims": True}),
    ("logsumexp", (A,), {"axis": 0, "b": BW, "return_sign": True}),
    ("logsumexp", (A,), {"axis": 1, "where": W}),
    ("gelu", (A,), {}), ("gelu", (A,), {"approximate": False}),
]


@pytest.mark.parametrize("name,args,kwargs", NN_CASES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(NN_CASES)])
def test_nn_eager_matches_jax_and_op_by_op(name, args, kwargs):
    import jax
    fused = getattr(yax.nn, name)
    got = fused(*args, **kwargs)
    each = fused.__wrapped__(*args, **kwargs)
    want = getattr(jax.nn, name)(*args, **kwargs)
    for g, e, w in zip(yax.tree_util.tree_leaves(got), yax.tree_util.tree_leaves(each),
                       jax.tree_util.tree_leaves(want), strict=True):
        _same(g, w)
        _same(g, e)


def test_nn_options_are_compiled_in_and_lists_fall_back():
    a = yax.device_put(np.linspace(-2.0, 2.0, 14, dtype=np.float32).reshape(2, 7))
    programs = lambda: executable.stats["compiles"] + executable.stats["cache_loads"]  # noqa: E731
    before = programs()
    yax.nn.logsumexp(a, axis=1, keepdims=True)
    assert programs() - before == 1
    before = programs()
    first = yax.nn.logsumexp(a, axis=1, keepdims=True)
    assert programs() == before
    # options given by position are compiled in as well (a program of their own, as in jax)
    np.testing.assert_array_equal(yax.nn.logsumexp(a, 1, None, True), first)
    # an unhashable option (a list axis) is not compiled in: primitive by primitive
    np.testing.assert_allclose(yax.nn.softmax(a, axis=[0, 1]), yax.nn.softmax(a, axis=(0, 1)),
                               rtol=1e-6)


SCIPY_CASES = [("log_ndtr", (np.linspace(-40.0, 6.0, 9, dtype=np.float32),)),
               ("ndtr", (A,)), ("xlogy", (A, np.abs(BW))), ("xlogy", (0.0, A)),
               ("xlog1py", (A, np.abs(BW)))]


@pytest.mark.parametrize("name,args", SCIPY_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCIPY_CASES)])
def test_scipy_special_eager_matches_jax_and_op_by_op(name, args):
    import jax.scipy.special as jsp

    import yax.scipy.special as ysp
    fused = getattr(ysp, name)
    got, each, want = fused(*args), fused.__wrapped__(*args), getattr(jsp, name)(*args)
    _same(got, want)
    _same(got, each)
    assert got.weak_type == each.weak_type == want.weak_type
