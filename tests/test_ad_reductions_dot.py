"""Derivatives of the reduction, sort, dot_general and conv primitives: finite differences and
the transposition identity up to order 2 (float64), and the conventions at ties against jax.
The jax oracle runs jitted: eager jax compiles one program per primitive (about 500 here), its
values are the same."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import yax
from yax import lax
from yax.test_util import check_grads

FAST = settings(max_examples=5, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def shape_and_axes(draw, min_rank=1, max_rank=3):
    rank = draw(st.integers(min_rank, max_rank))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
    return shape, axes


def distinct(shape, seed=0):
    """Values at least 0.5 apart (no ties within a finite-difference step)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.5 - size / 4 + rng.uniform(0, 0.1)).reshape(shape)


def away_from_zero(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"])
@given(sa=shape_and_axes())
@FAST
def test_reduce_grads(x64, name, sa):
    shape, axes = sa
    x = away_from_zero(shape) if name == "reduce_prod" else distinct(shape)
    check_grads(lambda v: getattr(lax, name)(v, axes), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@given(sa=shape_and_axes(max_rank=2), reverse=st.booleans())
@FAST
def test_cumulative_grads(x64, name, sa, reverse):
    shape, axes = sa
    x = away_from_zero(shape) if name == "cumprod" else distinct(shape)
    check_grads(lambda v: getattr(lax, name)(v, axes[0], reverse=reverse), (x,), order=2)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_cumulative_vs_jax(x64, name):
    x = distinct((3, 5), seed=3)
    for reverse in (False, True):
        got = yax.jacrev(lambda v: getattr(lax, name)(v, 1, reverse=reverse))(x)
        want = jax.jit(jax.jacrev(lambda v: getattr(jlax, name)(v, 1, reverse=reverse)))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["reduce_prod", "cumprod"])
def test_products_with_zeros_vs_jax(x64, name):
    """No division: one zero gives the product of the others, two zeros give zero."""
    x = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 1.5, -2.0, 4.0, 1.0]])
    if name == "reduce_prod":
        ours = yax.jacrev(lambda v: lax.reduce_prod(v, (1,)))(x)
        want = jax.jit(jax.jacrev(lambda v: jlax.reduce_prod(v, (1,))))(x)
        hess = yax.hessian(lambda v: lax.reduce_prod(v, (0, 1)))(x)
        want_h = jax.jit(jax.hessian(lambda v: jlax.reduce_prod(v, (0, 1))))(x)
        np.testing.assert_allclose(np.asarray(hess), np.asarray(want_h), rtol=1e-12)
    else:
        ours = yax.jacrev(lambda v: lax.cumprod(v, 1))(x)
        want = jax.jit(jax.jacrev(lambda v: jlax.cumprod(v, 1)))(x)
    assert np.all(np.isfinite(np.asarray(ours)))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(want), rtol=1e-12)
    if name == "cumprod":
        check_grads(lambda v: lax.cumprod(v, 1), (x,), order=2)


@given(sa=shape_and_axes(), num=st.integers(1, 3), num_keys=st.integers(1, 3))
@FAST
def test_sort_grads(x64, sa, num, num_keys):
    shape, axes = sa
    ops = tuple(distinct(shape, seed=i) for i in range(num))
    k = min(num_keys, num)
    check_grads(lambda *vs: lax.sort(vs, dimension=axes[0], num_keys=k), ops, order=2)


def test_sort_int_payload_and_keys(x64):
    keys = distinct((2, 5))
    idx = np.arange(10).reshape(2, 5).astype(np.int64)
    f = yax.grad(lambda v: lax.sort_key_val(v, idx)[0][:, 0].sum() + 0.0)
    g = jax.jit(jax.grad(lambda v: jlax.sort_key_val(v, idx)[0][:, 0].sum()))
    np.testing.assert_allclose(np.asarray(f(keys)), np.asarray(g(keys)))
    vals = distinct((2, 5), seed=4)
    f = yax.grad(lambda v: (lax.sort_key_val(idx[:, ::-1].copy(), v)[1] * np.arange(5.0)).sum())
    g = jax.jit(jax.grad(lambda v: (jlax.sort_key_val(idx[:, ::-1], v)[1]
                                    * jnp.arange(5.0)).sum()))
    np.testing.assert_allclose(np.asarray(f(vals)), np.asarray(g(vals)))


# --- conventions at ties (docs/derivative_conventions_reductions.md) -----------------------

TIES = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, -1.0, 0.0, 5.0]])
WEIGHTS = np.arange(1.0, 6.0)


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_reduce_max_min_ties_split_equally_as_jax(x64, name):
    x = TIES if name == "reduce_max" else -TIES
    got = yax.jacrev(lambda v: getattr(lax, name)(v, (1,)))(x)
    want = jax.jit(jax.jacrev(lambda v: getattr(jlax, name)(v, (1,))))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)
    got_all = yax.grad(lambda v: getattr(lax, name)(v, (0, 1)))(x)
    want_all = jax.jit(jax.grad(lambda v: getattr(jlax, name)(v, (0, 1))))(x)
    np.testing.assert_allclose(np.asarray(got_all), np.asarray(want_all), rtol=1e-12)


def test_sort_ties_follow_stable_order_as_jax(x64):
    f = yax.grad(lambda v: (lax.sort(v, dimension=1) * WEIGHTS).sum())
    g = jax.jit(jax.grad(lambda v: (jlax.sort(v, dimension=1) * WEIGHTS).sum()))
    np.testing.assert_allclose(np.asarray(f(TIES)), np.asarray(g(TIES)))


def test_argmax_selected_element_and_zero_tangent(x64):
    def pick(lax_mod, np_mod):
        def f(v):
            i = lax_mod.argmax(v, 1, np.int32)
            onehot = (np_mod.arange(5)[None, :] == i[:, None]).astype(v.dtype)
            return (v * onehot).sum()
        return f
    got = yax.grad(pick(lax, yax.numpy))(TIES)
    want = jax.jit(jax.grad(pick(jlax, jnp)))(TIES)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    _, t = yax.jvp(lambda v: lax.argmax(v, 1, np.int32), (TIES,), (np.ones_like(TIES),))
    assert np.asarray(t).dtype == yax.interpreters.ad_util.float0


def test_cummax_ties_split_equally_in_each_prefix(x64):
    """Ours (not jax's, whose shares depend on its scan tree): equal shares per prefix."""
    x = TIES[0]
    jac = np.asarray(yax.jacrev(lambda v: lax.cummax(v, 0))(x))
    want = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, .5, .5, 0, 0], [0, .5, .5, 0, 0],
                     [0, 1 / 3, 1 / 3, 0, 1 / 3]])
    np.testing.assert_allclose(jac, want, rtol=1e-12)
    np.testing.assert_allclose(jac.sum(1),
                               np.asarray(jax.jit(jax.jacrev(jlax.cummax))(x)).sum(1))


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or"])
def test_bool_reductions_have_no_tangent(x64, name):
    x = np.array([[True, False], [True, True]])
    out, t = yax.jvp(lambda v: getattr(lax, name)(v, (1,)), (x,), (np.zeros((2, 2), bool),))
    np.testing.assert_array_equal(np.asarray(out), getattr(np, "all" if name == "reduce_and"
                                                           else "any")(x, 1))
    assert np.asarray(t).dtype == yax.interpreters.ad_util.float0


# --- dot_general -----------------------------------------------------------------------------

DOT_CASES = [
    ((3, 4), (4, 2), (((1,), (0,)), ((), ()))),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 3), (((2, 0), (0, 2)), ((), ()))),
    ((2, 3, 4), (4, 2, 5, 3), (((1,), (3,)), ((0,), (1,)))),
    ((3,), (2,), (((), ()), ((), ()))),
]


@pytest.mark.parametrize("ls,rs,dn", DOT_CASES)
def test_dot_general_grads(x64, ls, rs, dn):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=ls), rng.normal(size=rs)
    check_grads(lambda x, y: lax.dot_general(x, y, dn), (a, b), order=2)
    ga = yax.grad(lambda x, y: (lax.dot_general(x, y, dn) ** 2).sum(), (0, 1))(a, b)
    gj = jax.jit(jax.grad(lambda x, y: (jlax.dot_general(x, y, dn) ** 2).sum(), (0, 1)))(a, b)
    for g, w in zip(ga, gj):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10)


def test_dot_general_preferred_element_type(x64):
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
    f = yax.grad(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                              preferred_element_type=np.float64).sum(), (0, 1))
    ga, gb = f(a, b)
    assert np.asarray(ga).dtype == np.float32 and np.asarray(gb).dtype == np.float32
    np.testing.assert_allclose(np.asarray(ga), np.broadcast_to(b.sum(1), (2, 3)), rtol=1e-6)
    ints = np.arange(6, dtype=np.int8).reshape(2, 3)
    g = yax.grad(lambda y: lax.dot_general(ints, y, (((1,), (0,)), ((), ())),
                                           preferred_element_type=np.float64).sum())(b)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(ints.sum(0)[:, None], (3, 4)))


# --- conv_general_dilated: a configuration table against jax.grad ------------------------------

CONV_TABLE = [
    # lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil, dimension_numbers, fgc, bgc
    ((2, 3, 6), (4, 3, 3), (1,), [(0, 0)], (1,), (1,), None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), [(1, 0), (0, 2)], (1, 1), (1, 1), None, 1, 1),
    ((1, 2, 9, 8), (3, 2, 2, 3), (3, 2), [(2, 2), (1, 1)], (1, 1), (2, 1), None, 1, 1),
    ((2, 4, 5, 5), (6, 2, 3, 3), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), None, 2, 1),
    ((2, 6, 5), (6, 1, 2), (2,), [(0, 1)], (1,), (1,), None, 6, 1),
    ((1, 2, 4, 4), (3, 2, 2, 2), (1, 1), [(0, 0), (1, 1)], (2, 1), (1, 2), None, 1, 1),
    ((2, 5, 5, 3), (3, 3, 3, 4), (2, 1), [(1, 1), (0, 0)], (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 6, 6, 4), (2, 2, 2, 6), (1, 2), [(0, 1), (1, 0)], (1, 1), (1, 1),
     ("NHWC", "HWIO", "NCHW"), 2, 1),
    ((4, 3, 5), (6, 3, 2), (1,), [(1, 0)], (1,), (1,), None, 1, 2),
    ((2, 3, 8), (2, 3, 3), (4,), [(-1, 0)], (1,), (1,), None, 1, 1),
]


def _conv_pair(case):
    ls, rs, strides, pad, ld, rd, dn, fgc, bgc = case

    def make(mod):
        def f(x, w):
            return mod.conv_general_dilated(x, w, strides, pad, lhs_dilation=ld, rhs_dilation=rd,
                                            dimension_numbers=dn, feature_group_count=fgc,
                                            batch_group_count=bgc)
        return f
    rng = np.random.default_rng(2)
    return make(lax), make(jlax), rng.normal(size=ls), rng.normal(size=rs)


@pytest.mark.parametrize("case", CONV_TABLE, ids=[str(i) for i in range(len(CONV_TABLE))])
def test_conv_grads_vs_jax(x64, case):
    ours, theirs, x, w = _conv_pair(case)
    ct = np.random.default_rng(3).normal(size=jax.eval_shape(theirs, x, w).shape)
    got = yax.vjp(ours, x, w)[1](ct)
    want = jax.jit(lambda x, w, ct: jax.vjp(theirs, x, w)[1](ct))(x, w, ct)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-10, atol=1e-10)
    check_grads(ours, (x, w), order=2 if int(case[0][0]) <= 2 else 1)
