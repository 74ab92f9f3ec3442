"""Named-axis collectives inside vmap(..., axis_name=...), against real jax as the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.primitives import collectives as coll
from yax.test_util import check_grads

LIBS = {"yax": (yax, yax.lax, jnp), "jax": (jax, jax.lax, jjnp)}


def _data(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _compare(build, *args, rtol=1e-5, atol=1e-5):
    """`build(m, lax, np)` returns a function written against a library; run it in both."""
    got = build(*LIBS["yax"])(*args)
    want = build(*LIBS["jax"])(*args)
    got_leaves, want_leaves = yax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)
    return got


PER_EXAMPLE = {
    "psum": lambda lax, np_: lambda x: lax.psum(x, "i"),
    "pmean": lambda lax, np_: lambda x: lax.pmean(x, "i"),
    "pmax": lambda lax, np_: lambda x: lax.pmax(x, "i"),
    "pmin": lambda lax, np_: lambda x: lax.pmin(x, "i"),
    "all_gather": lambda lax, np_: lambda x: lax.all_gather(x, "i"),
    "all_gather_axis1": lambda lax, np_: lambda x: lax.all_gather(x, "i", axis=1),
    "all_gather_axis-1": lambda lax, np_: lambda x: lax.all_gather(x, "i", axis=-1),
    "all_gather_tiled": lambda lax, np_: lambda x: lax.all_gather(x, "i", axis=1, tiled=True),
    "axis_index": lambda lax, np_: lambda x: x * lax.axis_index("i"),
    "psum_of_constant": lambda lax, np_: lambda x: x + lax.psum(1, "i"),
    "pytree": lambda lax, np_: lambda x: lax.psum({"a": x, "b": (np_.sin(x), 2.0)}, "i"),
}


@pytest.mark.parametrize("name", list(PER_EXAMPLE))
def test_collective_inside_vmap(name):
    x = _data(5, 2, 3)
    _compare(lambda m, lax, np_: m.vmap(PER_EXAMPLE[name](lax, np_), axis_name="i"), x)


@pytest.mark.parametrize("in_axes", [1, 2, -1])
def test_collectives_with_in_axes(in_axes):
    x = _data(2, 4, 3)

    def build(m, lax, np_):
        def f(v):
            return v - lax.pmean(v, "i") + lax.pmax(v, "i") * lax.axis_index("i")
        return m.vmap(f, in_axes=in_axes, axis_name="i")
    _compare(build, x)
    _compare(lambda m, lax, np_: m.vmap(lambda v: lax.all_gather(v, "i", axis=1),
                                        in_axes=in_axes, out_axes=1, axis_name="i"), x)


def _batchnorm(lax, np_):
    def per_example(x, w):
        h = np_.tanh(x @ w)
        mean = lax.pmean(h, "batch")
        var = lax.pmean((h - mean) ** 2, "batch")
        return (h - mean) / np_.sqrt(var + 1e-5)
    return per_example


def test_batch_normalisation_over_the_batch():
    x, w = _data(8, 3), _data(3, 4, seed=1)
    out = _compare(lambda m, lax, np_: m.vmap(_batchnorm(lax, np_), in_axes=(0, None),
                                              axis_name="batch"), x, w)
    np.testing.assert_allclose(np.asarray(out).mean(0), 0.0, atol=1e-5)


def test_grad_of_batch_normalised_loss():
    x, w = _data(8, 3), _data(3, 4, seed=1)

    def build(m, lax, np_):
        def loss(w):
            out = m.vmap(_batchnorm(lax, np_), in_axes=(0, None), axis_name="batch")(x, w)
            return (np_.sin(out) * np_.arange(4.0)).sum()
        return m.grad(loss)
    _compare(build, w, rtol=1e-4, atol=1e-4)


def test_per_example_grads_through_pmean():
    x = _data(6, 3)

    def build(m, lax, np_):
        def loss(v):
            centred = v - lax.pmean(v, "i")
            return (centred ** 2).sum() + lax.psum(np_.sin(v), "i").sum()
        return m.vmap(m.grad(loss), axis_name="i")
    _compare(build, x)


def test_grad_through_all_gather_and_axis_index():
    x = _data(5, 3)

    def build(m, lax, np_):
        def loss(x):
            def per_example(v):
                g = lax.all_gather(np_.sin(v), "i")   # (5, 3)
                t = lax.all_gather(v * 2.0, "i", tiled=True)   # (15,)
                return (g * np_.cos(v)).sum() + (t[:3] * v).sum() * lax.axis_index("i")
            return m.vmap(per_example, axis_name="i")(x).sum()
        return m.grad(loss)
    _compare(build, x)


def test_grad_of_pmax_shares_ties_like_max():
    # jax has no derivative of pmax; its reduce_max convention (ties share) is the oracle
    x = np.array([1.0, 3.0, 3.0, 2.0], np.float32)
    got = yax.grad(lambda x: yax.vmap(lambda v: yax.lax.pmax(v, "i") * v - yax.lax.pmin(v, "i"),
                                      axis_name="i")(x).sum())(x)
    want = jax.grad(lambda x: (jjnp.max(x) * x - jjnp.min(x)).sum())(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_check_grads_through_collectives(x64):
    x = _data(4, 3).astype(np.float64)

    def f(x):
        def per_example(v):
            return (jnp.sin(v) * yax.lax.psum(v, "i") + yax.lax.all_gather(v, "i")[1] ** 2
                    + yax.lax.pmax(v, "i") * v)
        return yax.vmap(per_example, axis_name="i")(x)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def _nested(inner_fn):
    def build(m, lax, np_):
        return m.vmap(m.vmap(inner_fn(lax, np_), axis_name="j"), axis_name="i")
    return build


NESTED = {
    "psum_inner": lambda lax, np_: lambda v: lax.psum(v, "j"),
    "psum_outer": lambda lax, np_: lambda v: lax.psum(v, "i"),
    "psum_both_sequential": lambda lax, np_: lambda v: lax.psum(lax.psum(v, "j"), "i"),
    "psum_outer_then_inner": lambda lax, np_: lambda v: lax.psum(lax.psum(v, "i") * v, "j"),
    "psum_tuple": lambda lax, np_: lambda v: lax.psum(v, ("i", "j")),
    "pmean_pmax_mix": lambda lax, np_: lambda v: lax.pmean(v, "i") - lax.pmax(v, ("j", "i")),
    "pmin_outer": lambda lax, np_: lambda v: lax.pmin(np_.cos(v), "i"),
    "all_gather_outer": lambda lax, np_: lambda v: lax.all_gather(v, "i", axis=1),
    "all_gather_inner": lambda lax, np_: lambda v: lax.all_gather(v, "j", tiled=True),
    "axis_index": lambda lax, np_: lambda v: v * lax.axis_index("i") + lax.axis_index("j"),
    "axis_index_tuple": lambda lax, np_: lambda v: v + lax.axis_index(("i", "j")),
}


@pytest.mark.parametrize("name", list(NESTED))
def test_nested_vmaps_with_two_axis_names(name):
    _compare(_nested(NESTED[name]), _data(3, 4, 2))


def test_nested_all_gather_over_both_names():
    # (jax itself does not support all_gather over two vmapped names: expected by construction)
    x = _data(2, 3, 4)
    gather = lambda v, names: yax.lax.all_gather(v, names)
    out = yax.vmap(yax.vmap(lambda v: gather(v, ("i", "j")), axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(out, np.broadcast_to(x.reshape(6, 4), (2, 3, 6, 4)))
    out = yax.vmap(yax.vmap(lambda v: gather(v, ("j", "i")), axis_name="j"), axis_name="i")(x)
    want = x.transpose(1, 0, 2).reshape(6, 4)
    np.testing.assert_allclose(out, np.broadcast_to(want, (2, 3, 6, 4)))


def test_nested_grad_through_outer_psum():
    x = _data(3, 4)

    def build(m, lax, np_):
        def loss(x):
            def inner(v):
                return np_.sin(v) * lax.psum(v, "i") + lax.pmean(v ** 2, "j")
            return m.vmap(m.vmap(inner, axis_name="j"), axis_name="i")(x).sum()
        return m.grad(loss)
    _compare(build, x)


def test_jit_inside_and_outside_vmap():
    x = _data(6, 3)

    def build(m, lax, np_):
        per_example = lambda v: v - lax.pmean(v, "i") + lax.all_gather(v, "i").sum(0)
        outer = m.jit(m.vmap(per_example, axis_name="i"))
        inner = m.vmap(m.jit(per_example), axis_name="i")
        return lambda x: (outer(x), inner(x), m.jit(m.grad(lambda x: outer(x).sum() ** 2))(x))
    _compare(build, x, rtol=1e-4)


def test_unbatched_operands_along_the_named_axis():
    x, c = _data(4, 3), _data(3, seed=2)

    def build(m, lax, np_):
        def outer(u):
            return m.vmap(lambda v: lax.psum(u, "j") + lax.pmax(u * 2.0, "j")
                          + lax.all_gather(c, "j")[0] * v, axis_name="j")(x)
        return m.vmap(outer, axis_name="i")
    _compare(build, _data(2, 3))


@pytest.mark.parametrize("call", [
    lambda x: yax.lax.psum(x, "i"),
    lambda x: yax.lax.pmean(x, "i"),
    lambda x: yax.lax.all_gather(x, "i"),
    lambda x: yax.lax.axis_index("i"),
    lambda x: yax.jit(lambda v: yax.lax.pmax(v, "i"))(x),
    lambda x: yax.vmap(lambda v: yax.lax.psum(v, "i"), axis_name="j")(x),
    lambda x: yax.vmap(lambda v: yax.lax.psum(v, "i"))(x),
])
def test_unbound_axis_name_is_a_clear_error(call):
    with pytest.raises(yax.errors.YaxError, match="unbound axis name 'i'.*axis_name='i'"):
        call(jnp.ones((3, 2)))


def test_lowering_a_collective_without_its_axis_is_a_clear_error():
    with pytest.raises(yax.errors.YaxError, match="unbound axis name 'i'"):
        yax.jit(lambda v: coll.psum_p.bind(v, axis_name="i"))(jnp.ones(3))
    with pytest.raises(yax.errors.YaxError, match="unbound axis name 'i'"):
        coll.all_gather_p.bind(jnp.ones(3), axis_name="i", axis=0, tiled=False, axis_size=2)


def test_jaxpr_of_a_collective_under_jit_inside_vmap():
    f = yax.vmap(yax.jit(lambda v: v * yax.lax.psum(v, "i")), axis_name="i")
    text = str(yax.make_jaxpr(f)(jnp.ones((3, 2))))
    assert "reduce_sum" in text and "psum" not in text


def test_all_gather_axis_out_of_range():
    with pytest.raises(yax.errors.ShapeError, match="all_gather axis=2"):
        yax.vmap(lambda v: yax.lax.all_gather(v, "i", axis=2, tiled=True), axis_name="i")(
            jnp.ones((3, 2, 2)))
