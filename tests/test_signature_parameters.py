"""The parameters closed from tests/test_public_signatures.py's KNOWN_GAPS, each run with yax
and with real jax 0.10.2 (the oracle) on the same arguments: same values, or the same kind of
refusal where jax refuses (withdrawn options such as `reduce_axes` and `concrete`)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import yax

APIS = pytest.mark.parametrize("api", [yax, jax], ids=["yax", "jax"])


def _both(fn):
    """`fn(api)` run with yax and with jax, as numpy trees."""
    return [jax.tree_util.tree_map(np.asarray, fn(api)) for api in (yax, jax)]


def _assert_same(fn, **tol):
    ours, theirs = _both(fn)
    jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, **tol), ours, theirs)


# --- transformations -----------------------------------------------------------------------

def test_linearize_has_aux_returns_output_linear_map_and_aux():
    def run(api):
        def f(x):
            return api.numpy.sin(x) * x, {"twice": 2 * x}
        y, f_jvp, aux = api.linearize(f, 0.7, has_aux=True)
        return y, f_jvp(1.5), aux
    _assert_same(run, rtol=1e-6)


@APIS
def test_linearize_has_aux_refuses_a_non_pair(api):
    with pytest.raises(TypeError):
        api.linearize(lambda x: x * x, 3.0, has_aux=True)


@APIS
@pytest.mark.parametrize("name", ["grad", "value_and_grad"])
def test_reduce_axes_nonempty_is_refused_when_the_transform_is_made(api, name):
    getattr(api, name)(lambda x: x * x, reduce_axes=())  # empty: accepted
    with pytest.raises(NotImplementedError):
        getattr(api, name)(lambda x: x * x, reduce_axes=("i",))


@APIS
def test_vjp_reduce_axes_nonempty_is_refused(api):
    _, pullback = api.vjp(lambda x: x * x, 3.0, reduce_axes=())
    assert float(pullback(1.0)[0]) == 6.0
    with pytest.raises(NotImplementedError):
        api.vjp(lambda x: x * x, 3.0, reduce_axes=("i",))


@APIS
@pytest.mark.parametrize("name", ["checkpoint", "remat"])
@pytest.mark.parametrize("concrete", [False, True])
def test_checkpoint_concrete_is_refused_whatever_its_value(api, name, concrete):
    with pytest.raises(NotImplementedError):
        getattr(api, name)(lambda x: x, concrete=concrete)


def test_checkpoint_static_argnames_by_keyword():
    # jax 0.10.2 honours static_argnames only under its `remat3` config (its default path
    # accepts and ignores them); that is the oracle here
    def block(x, power, *, scale):
        return x ** power * scale if power > 1 else x  # Python control flow: needs static

    def run(api):
        f = api.checkpoint(block, static_argnames="power")
        return api.grad(lambda x: f(x, power=3, scale=x) + f(x, power=2, scale=2.0))(1.5)
    with jax_config.remat3(True):
        _assert_same(run, rtol=1e-6)


def test_checkpoint_static_argnames_also_by_position():
    """yax also finds a static name passed by position (as jit does); jax's remat3 would
    trace it."""
    f = yax.checkpoint(lambda x, power: x ** power if power > 1 else x, static_argnames="power")
    assert float(yax.grad(lambda x: f(x, 3))(2.0)) == 12.0


# --- control flow --------------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, 0, 2, 3, 10])
def test_map_batch_size_same_values_with_and_without_remainder(batch_size):
    def run(api):
        xs = (np.arange(7.0, dtype=np.float32), np.ones((7, 2), np.float32))
        return api.lax.map(lambda x: (api.numpy.sin(x[0]), x[1].sum() * x[0]), xs,
                           batch_size=batch_size)
    _assert_same(run, rtol=1e-6)


def test_map_batch_size_differentiates_under_jit():
    def run(api):
        loss = lambda xs: api.lax.map(api.numpy.sin, xs, batch_size=2).sum()  # noqa: E731
        return api.jit(api.grad(loss))(np.arange(5.0, dtype=np.float32))
    _assert_same(run, rtol=1e-6)


@pytest.mark.parametrize("unroll", [None, False, True, 1, 2, 0])
def test_fori_loop_unroll_with_static_bounds_keeps_the_value(unroll):
    def run(api):
        return api.lax.fori_loop(1, 6, lambda i, c: c * i + 1.0, 0.5, unroll=unroll)
    _assert_same(run)


@APIS
def test_fori_loop_unroll_with_traced_bounds(api):
    body = lambda i, c: c + i  # noqa: E731
    for ok in (None, False, True, 1):  # asking for no unrolling is accepted
        assert int(api.jit(lambda n: api.lax.fori_loop(0, n, body, 0, unroll=ok))(5)) == 10
    with pytest.raises(ValueError):
        api.jit(lambda n: api.lax.fori_loop(0, n, body, 0, unroll=2))(5)


@APIS
def test_fori_loop_negative_unroll_is_refused(api):
    with pytest.raises(ValueError):
        api.lax.fori_loop(0, 3, lambda i, c: c + i, 0, unroll=-1)


def test_cond_and_switch_take_the_operand_keyword():
    def run(api):
        c = api.lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=1.0)
        s = api.lax.switch(1, [lambda x: x + 1, lambda x: x * 10], operand=2.0)
        return c, s
    _assert_same(run)


@APIS
@pytest.mark.parametrize("which", ["cond", "switch"])
def test_operand_keyword_with_positional_operands_is_refused(api, which):
    with pytest.raises(TypeError):
        if which == "cond":
            api.lax.cond(True, lambda x: x, lambda x: x, 2.0, operand=1.0)
        else:
            api.lax.switch(0, [lambda x: x], 2.0, operand=1.0)


# --- numpy -----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [None, "fill", "clip", "promise_in_bounds"])
@pytest.mark.parametrize("wrap", [None, True, False])
def test_take_along_axis_wrap_negative_indices(mode, wrap):
    indices = np.array([[-1, 1, -7, 6], [0, -2, 3, -5]], np.int32)

    def run(api):
        x = api.numpy.arange(10.0, dtype=np.float32).reshape(2, 5)
        return api.numpy.take_along_axis(x, indices, axis=1, mode=mode,
                                         wrap_negative_indices=wrap)
    _assert_same(run)


def test_take_along_axis_default_axis_is_last():
    _assert_same(lambda api: api.numpy.take_along_axis(
        np.arange(6.0).reshape(2, 3), np.array([[2, 0], [1, 1]])))
