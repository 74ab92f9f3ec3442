"""vmap of the reduction, sort, dot_general and conv primitives against stacking per-example
results, with hypothesis-drawn in_axes/out_axes; per-example gradients of a small MLP."""

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

FAST = settings(max_examples=5, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
B = 3


def batched(x, axis):
    """x with a batch of B distinct examples inserted at `axis` (None: x itself)."""
    if axis is None:
        return x
    stack = np.stack([x * (1 + 0.25 * i) + i for i in range(B)], axis=0)
    return np.moveaxis(stack, 0, axis % (x.ndim + 1))


def check_vmap(f, args, in_axes, out_axes=0):
    xs = [batched(np.asarray(a), ax) for a, ax in zip(args, in_axes)]
    got = yax.vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*xs)
    per = []
    for i in range(B):
        one = [x if ax is None else np.take(x, i, axis=ax) for x, ax in zip(xs, in_axes)]
        per.append(yax.tree_util.tree_leaves(f(*one)))
    for k, g in enumerate(yax.tree_util.tree_leaves(got)):
        want = np.stack([np.asarray(p[k]) for p in per], axis=out_axes)
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-5, atol=2e-5)


def axis_for(rank):
    return st.one_of(st.integers(-(rank + 1), rank))


@st.composite
def case(draw, max_rank=3):
    rank = draw(st.integers(1, max_rank))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
    in_axis = draw(axis_for(rank))
    return shape, axes, in_axis


REDUCE = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "argmax", "argmin"]
CUMULATIVE = ["cumsum", "cumprod", "cummax", "cummin"]


@pytest.mark.parametrize("name", REDUCE + ["reduce_and", "reduce_or"])
@given(c=case())
@FAST
def test_vmap_reductions(name, c):
    shape, axes, in_axis = c
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    if name in ("reduce_and", "reduce_or"):
        x = x > 0
        f = lambda v: getattr(lax, name)(v, axes)  # noqa: E731
    elif name.startswith("arg"):
        f = lambda v: getattr(lax, name)(v, axes[-1], np.int32)  # noqa: E731
    else:
        f = lambda v: getattr(lax, name)(v, axes)  # noqa: E731
    if name in ("reduce_and", "reduce_or"):
        xs = np.stack([x, ~x, x], axis=in_axis % (x.ndim + 1))
        got = yax.vmap(f, in_axes=in_axis)(xs)
        want = np.stack([np.asarray(f(np.take(xs, i, in_axis))) for i in range(B)])
        np.testing.assert_array_equal(np.asarray(got), want)
        return
    check_vmap(f, [x], [in_axis])


@pytest.mark.parametrize("name", CUMULATIVE)
@given(c=case(), reverse=st.booleans(), out_axis=st.integers(-1, 0))
@FAST
def test_vmap_cumulative(name, c, reverse, out_axis):
    shape, axes, in_axis = c
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    check_vmap(lambda v: getattr(lax, name)(v, axes[0], reverse=reverse), [x], [in_axis],
               out_axis)


@given(c=case(), num=st.integers(1, 3), nones=st.lists(st.booleans(), min_size=3, max_size=3))
@FAST
def test_vmap_sort(c, num, nones):
    shape, axes, in_axis = c
    ops = [np.random.default_rng(i).normal(size=shape).astype(np.float32) for i in range(num)]
    in_axes = [None if n and i else in_axis for i, n in enumerate(nones[:num])]
    check_vmap(lambda *vs: lax.sort(vs, dimension=axes[0], num_keys=max(1, num - 1)), ops,
               in_axes)


DOT_CASES = [
    ((3, 4), (4, 2), (((1,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 3), (((2, 0), (0, 2)), ((), ()))),
    ((2, 3, 4), (4, 2, 5, 3), (((1,), (3,)), ((0,), (1,)))),
]


@pytest.mark.parametrize("ls,rs,dn", DOT_CASES)
@given(data=st.data())
@FAST
def test_vmap_dot_general(ls, rs, dn, data):
    la = data.draw(st.one_of(st.none(), axis_for(len(ls))), label="lhs axis")
    ra = data.draw(st.one_of(st.none(), axis_for(len(rs))), label="rhs axis")
    if la is None and ra is None:
        ra = 0
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=ls).astype(np.float32), rng.normal(size=rs).astype(np.float32)
    out_rank = len(jlax.dot_general(a, b, dn).shape)
    out_axis = data.draw(st.integers(-(out_rank + 1), out_rank), label="out axis")
    check_vmap(lambda x, y: lax.dot_general(x, y, dn), [a, b], [la, ra], out_axis)


CONV_CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 2), (2, 1), [(1, 0), (0, 1)], (1, 1), (1, 2), None, 1, 1),
    ((2, 4, 5), (6, 2, 3), (1,), [(1, 1)], (2,), (1,), None, 2, 1),
    ((2, 5, 5, 4), (2, 3, 2, 6), (1, 1), [(0, 0), (1, 1)], (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 2, 1),
    ((4, 3, 5), (6, 3, 2), (1,), [(1, 0)], (1,), (1,), None, 1, 2),
]


@pytest.mark.parametrize("conv", CONV_CASES, ids=[str(i) for i in range(len(CONV_CASES))])
@pytest.mark.parametrize("which", ["lhs", "rhs", "both"])
@given(data=st.data())
@settings(max_examples=3, deadline=None, derandomize=True)
def test_vmap_conv(conv, which, data):
    ls, rs, strides, pad, ld, rd, dn, fgc, bgc = conv
    la = data.draw(axis_for(len(ls))) if which != "rhs" else None
    ra = data.draw(axis_for(len(rs))) if which != "lhs" else None
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=ls).astype(np.float32), rng.normal(size=rs).astype(np.float32)

    def f(a, b):
        return lax.conv_general_dilated(a, b, strides, pad, lhs_dilation=ld, rhs_dilation=rd,
                                        dimension_numbers=dn, feature_group_count=fgc,
                                        batch_group_count=bgc)
    check_vmap(f, [x, w], [la, ra], data.draw(st.integers(-1, 0)))


def test_vmap_of_grad_of_conv_and_sort(x64):
    """Batching the derivative rules themselves (transposed convs, sorts by permutation)."""
    rng = np.random.default_rng(4)
    xs, w = rng.normal(size=(B, 2, 3, 6)), rng.normal(size=(4, 3, 2))

    def loss(w, x):
        y = lax.conv_general_dilated(x, w, (2,), [(1, 0)], feature_group_count=1)
        return (lax.sort(y, dimension=2) * np.arange(3.0)).sum() + lax.reduce_max(y, (0, 1, 2))
    got = yax.vmap(yax.grad(loss, argnums=(0, 1)), in_axes=(None, 0))(w, xs)
    for i in range(B):
        want = yax.grad(loss, argnums=(0, 1))(w, xs[i])
        for g, v in zip(got, want):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(v), rtol=1e-10)


def _mlp_loss(lax_mod, np_mod):
    def loss(params, x, y):
        w1, b1, w2 = params
        h = lax_mod.tanh(lax_mod.dot_general(x, w1, (((0,), (0,)), ((), ()))) + b1)
        out = lax_mod.dot_general(h, w2, (((0,), (0,)), ((), ())))
        return lax_mod.reduce_sum((out - y) ** 2, (0,))
    return loss


def test_per_example_gradients_of_mlp(x64):
    rng = np.random.default_rng(5)
    params = (rng.normal(size=(4, 8)), rng.normal(size=(8,)), rng.normal(size=(8, 2)))
    xs, ys = rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    loss = _mlp_loss(lax, yax.numpy)
    got = yax.vmap(yax.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
    loop = [yax.grad(loss)(params, xs[i], ys[i]) for i in range(6)]
    want = jax.vmap(jax.grad(_mlp_loss(jlax, jnp)), in_axes=(None, 0, 0))(params, xs, ys)
    for k in range(3):
        stacked = np.stack([np.asarray(g[k]) for g in loop])
        np.testing.assert_allclose(np.asarray(got[k]), stacked, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-10)
