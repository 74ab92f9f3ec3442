"""lax.reduce_window and the reduce_window_{sum,prod,max,min} primitives against jax.lax: values
(eager and jit), derivatives (finite differences in float64, and jax's JVP/VJP including ties),
vmap against a loop, flax-style pooling, and the errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import yax
from tests.harness import assert_close, check_eager_and_jit
from yax import lax
from yax.test_util import check_grads

MONOIDS = {  # name: (yax computation, jax computation, identity init)
    "sum": (lax.add, jlax.add, 0.0),
    "max": (lax.max, jlax.max, -np.inf),
    "min": (lax.min, jlax.min, np.inf),
    "prod": (lax.mul, jlax.mul, 1.0),
}

CONFIGS = [  # window, strides, padding, base_dilation, window_dilation
    ((2,), (1,), "VALID", None, None),
    ((3,), (2,), "SAME", None, None),
    ((2, 3), (1, 2), "SAME", (1, 2), None),
    ((2, 2), (2, 1), ((1, 1), (0, 2)), (2, 1), (1, 2)),
    ((1, 2, 2), (1, 2, 2), "VALID", None, None),
    ((1, 3, 2), (1, 1, 2), "SAME_LOWER", (1, 1, 2), (1, 2, 1)),
]
SHAPES = {1: (7,), 2: (5, 6), 3: (2, 5, 4)}


def _both(monoid, x, window, strides, padding, base, wdil, init=None):
    ours, theirs, identity = MONOIDS[monoid]
    init = identity if init is None else init

    def f(v):
        return lax.reduce_window(v, init, ours, window, strides, padding, base, wdil)

    want = jlax.reduce_window(x, np.asarray(init, x.dtype), theirs, window, strides, padding,
                              base, wdil)
    return f, np.asarray(want)


@pytest.mark.parametrize("monoid", list(MONOIDS))
@pytest.mark.parametrize("config", CONFIGS)
def test_values_match_jax(monoid, config):
    window = config[0]
    x = np.random.default_rng(0).normal(size=SHAPES[len(window)]).astype(np.float32)
    f, want = _both(monoid, x, *config)
    check_eager_and_jit(f, [x], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("monoid,dtype", [("sum", np.int32), ("max", np.int32),
                                          ("min", np.uint8), ("max", np.bool_),
                                          ("min", np.bool_), ("prod", np.int32)])
def test_integer_and_bool_values(monoid, dtype):
    rng = np.random.default_rng(1)
    x = (rng.integers(0, 2, (5, 6)).astype(bool) if dtype == np.bool_
         else rng.integers(0, 5, (5, 6)).astype(dtype))
    ours, theirs, _ = MONOIDS[monoid]
    identity = {"sum": 0, "prod": 1}.get(monoid)
    if identity is None:
        if dtype == np.bool_:
            identity = monoid == "min"
        else:
            info = np.iinfo(dtype)
            identity = info.min if monoid == "max" else info.max
    init = np.asarray(identity, dtype)
    args = ((2, 2), (1, 2), "SAME")
    want = jlax.reduce_window(x, init, theirs, *args)
    check_eager_and_jit(lambda v: lax.reduce_window(v, init, ours, *args), [x], np.asarray(want))


@pytest.mark.parametrize("monoid,init", [("sum", 1.5), ("max", 0.25), ("min", -0.5),
                                         ("prod", 2.0)])
def test_non_identity_init_counts_once_per_window(monoid, init):
    x = np.random.default_rng(2).normal(size=(4, 5)).astype(np.float32)
    f, want = _both(monoid, x, (2, 3), (1, 2), ((1, 0), (2, 1)), (2, 1), None, init=init)
    check_eager_and_jit(f, [x], want, rtol=1e-5, atol=1e-5)


def test_traced_init_value():
    x = np.random.default_rng(3).normal(size=(6,)).astype(np.float32)
    f = yax.jit(lambda v, i: lax.reduce_window(v, i, lax.max, (3,), (1,), "SAME"))
    got = f(x, np.float32(0.5))
    want = jlax.reduce_window(x, np.float32(0.5), jlax.max, (3,), (1,), "SAME")
    assert_close(got, np.asarray(want))


def test_empty_results_and_operands():
    x = np.ones((2,), np.float32)
    got = lax.reduce_window(x, 0.0, lax.add, (3,), (1,), "VALID")
    want = jlax.reduce_window(x, 0.0, jlax.add, (3,), (1,), "VALID")
    assert got.shape == want.shape == (0,)
    empty = np.ones((0, 3), np.float32)
    got = lax.reduce_window(empty, -np.inf, lax.max, (1, 2), (1, 1), ((1, 1), (0, 0)))
    want = jlax.reduce_window(empty, -np.inf, jlax.max, (1, 2), (1, 1), ((1, 1), (0, 0)))
    assert_close(got, np.asarray(want))


def test_shape_tuple_matches_jax():
    args = ((7, 5), (2, 3), (2, 1), ((1, 2), (0, 1)), (1, 2), (2, 1))
    assert lax.reduce_window_shape_tuple(*args) == tuple(jlax.reduce_window_shape_tuple(*args))


@pytest.mark.parametrize("monoid", list(MONOIDS))
@pytest.mark.parametrize("config", [CONFIGS[1], CONFIGS[3], CONFIGS[5]])
def test_grads_finite_differences(x64, monoid, config):
    window, strides, padding, base, wdil = config
    # distinct values (no ties) away from zero, and windows that all touch data (no +-inf)
    x = np.random.default_rng(4).permutation(np.prod(SHAPES[len(window)])).astype(np.float64)
    x = (x / x.size + 0.5).reshape(SHAPES[len(window)])
    if isinstance(padding, tuple):
        padding = tuple((min(lo, 1), min(hi, 1)) for lo, hi in padding)
    f, _ = _both(monoid, x, window, strides, padding, base, wdil)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def _tied(shape, seed):
    """Few distinct values, so windows hold ties (as max-pool over ReLU outputs does)."""
    return np.random.default_rng(seed).integers(-1, 2, shape).astype(np.float32)


@pytest.mark.parametrize("monoid", ["max", "min"])
@pytest.mark.parametrize("config", CONFIGS)
def test_jvp_with_ties_matches_jax(monoid, config):
    window = config[0]
    x = _tied(SHAPES[len(window)], 5)
    t = np.random.default_rng(6).normal(size=x.shape).astype(np.float32)
    f, _ = _both(monoid, x, *config)
    g = lambda v: jlax.reduce_window(v, MONOIDS[monoid][2], MONOIDS[monoid][1], *config)  # noqa
    _, t_out = yax.jvp(f, (x,), (t,))
    _, t_want = jax.jvp(g, (x,), (t,))
    assert_close(t_out, np.asarray(t_want))


@pytest.mark.parametrize("monoid", ["sum", "max", "min"])
@pytest.mark.parametrize("config", [c for c in CONFIGS if c[4] is None])
def test_vjp_matches_jax(monoid, config):
    window = config[0]
    x = _tied(SHAPES[len(window)], 7)
    f, want = _both(monoid, x, *config)
    ct = np.random.default_rng(8).normal(size=want.shape).astype(np.float32)
    g = lambda v: jlax.reduce_window(v, MONOIDS[monoid][2], MONOIDS[monoid][1], *config)  # noqa
    got = yax.vjp(f, x)[1](yax.device_put(ct))[0]
    assert_close(got, np.asarray(jax.vjp(g, x)[1](ct)[0]), rtol=1e-5, atol=1e-5)
    got_jit = yax.jit(lambda v, c: yax.vjp(f, v)[1](c)[0])(x, ct)
    assert_close(got_jit, np.asarray(got))


def _flax_pools(lax_mod, np_mod):
    def max_pool(x):
        return lax_mod.reduce_window(x, -np_mod.inf, lax_mod.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                     "VALID")

    def avg_pool(x):
        return lax_mod.reduce_window(x, 0.0, lax_mod.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                     "VALID") / 4.0
    return max_pool, avg_pool


def test_flax_style_pooling_values_and_grads():
    x = np.maximum(np.random.default_rng(9).normal(size=(2, 6, 8, 3)), 0).astype(np.float32)
    ours, theirs = _flax_pools(lax, yax.numpy), _flax_pools(jlax, jnp)
    w = np.random.default_rng(10).normal(size=(2, 3, 4, 3)).astype(np.float32)
    for pool, jpool in zip(ours, theirs):
        check_eager_and_jit(pool, [x], np.asarray(jpool(x)))

        def loss(v, pool=pool):
            return (pool(v) * w).sum()

        def jloss(v, jpool=jpool):
            return (jpool(v) * w).sum()
        want = np.asarray(jax.grad(jloss)(x))
        assert_close(yax.grad(loss)(x), want, rtol=1e-5, atol=1e-6)
        assert_close(yax.jit(yax.grad(loss))(x), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("monoid", list(MONOIDS))
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_loop(monoid, axis):
    xs = np.random.default_rng(11).normal(size=(3, 5, 6)).astype(np.float32)
    f, _ = _both(monoid, xs[0], *CONFIGS[3])
    moved = np.moveaxis(xs, 0, axis)
    got = yax.vmap(f, in_axes=axis)(moved)
    assert_close(got, np.stack([np.asarray(f(v)) for v in xs]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("monoid", ["sum", "max"])
def test_vmap_of_grad_matches_loop(monoid):
    xs = _tied((3, 5, 6), 12)
    f, _ = _both(monoid, xs[0], *CONFIGS[2])
    g = yax.grad(lambda v: (f(v) ** 2).sum())
    got = yax.vmap(g, in_axes=1)(np.moveaxis(xs, 0, 1))
    assert_close(got, np.stack([np.asarray(g(v)) for v in xs]), rtol=1e-5, atol=1e-5)


def test_sum_transpose_is_the_adjoint(x64):
    """<reduce_window_sum(x), c> == <x, transpose(c)> for a strided, dilated, padded window."""
    rng = np.random.default_rng(13)
    x = rng.normal(size=(5, 7))
    params = ((3, 2), (2, 3), ((2, 1), (0, 3)), (2, 1), (1, 2))
    f = lambda v: lax.reduce_window_sum(v, *params)  # noqa: E731
    c = rng.normal(size=lax.reduce_window_shape_tuple(x.shape, *params))
    (back,) = yax.linear_transpose(f, x)(yax.device_put(c))
    assert np.isclose(np.vdot(np.asarray(f(x)), c), np.vdot(x, np.asarray(back)))


def test_jaxpr_names_the_primitive():
    jaxpr = yax.make_jaxpr(lambda v: lax.reduce_window(v, -np.inf, lax.max, (2,), (2,),
                                                       "VALID"))(np.ones(4, np.float32))
    assert "reduce_window_max" in str(jaxpr)


def test_errors_name_shapes_and_fix():
    x = np.ones((4, 5), np.float32)
    with pytest.raises(yax.errors.ShapeError, match="rank 2"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID")
    with pytest.raises(yax.errors.ShapeError, match=r"f32\[4,5\].*>= 1"):
        lax.reduce_window(x, 0.0, lax.add, (0, 1), (1, 1), "VALID")
    with pytest.raises(yax.errors.ShapeError, match="non-negative"):
        lax.reduce_window(x, 0.0, lax.add, (1, 1), (1, 1), ((-1, 0), (0, 0)))
    with pytest.raises(yax.errors.YaxError, match="lax.add, lax.mul, lax.max or lax.min"):
        lax.reduce_window(x, 0.0, lax.sub, (1, 1), (1, 1), "VALID")
    with pytest.raises(yax.errors.DTypeError, match="init_value"):
        lax.reduce_window(x, np.zeros((2,), np.float32), lax.add, (1, 1), (1, 1), "VALID")
    with pytest.raises(yax.errors.DTypeError, match="c64"):
        lax.reduce_window(np.ones(3, np.complex64), 0j, lax.max, (1,), (1,), "VALID")


def test_docs_page_runs():
    """The code blocks of docs/lax_extras.md run in order, in one namespace."""
    import pathlib
    import re
    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "lax_extras.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, "docs/lax_extras.md", "exec"), namespace)
