"""The parameters closed from tests/test_public_signatures.py's KNOWN_GAPS, each run with yax
and with real jax 0.10.2 (the oracle) on the same arguments: same values, or the same kind of
refusal where jax refuses (withdrawn options such as `reduce_axes` and `concrete`)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import yax
from tests.harness import JAX_0_10
from tests.multidevice import run_on_devices

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
    if api.__name__ == "jax" and not JAX_0_10:
        pytest.skip("jax 0.11 removed checkpoint's `concrete` (compared with jax 0.10.2)")
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
    if wrap is None and not JAX_0_10:
        pytest.skip("jax 0.11 changed the default of wrap_negative_indices (compared with 0.10.2)")
    indices = np.array([[-1, 1, -7, 6], [0, -2, 3, -5]], np.int32)

    def run(api):
        x = api.numpy.arange(10.0, dtype=np.float32).reshape(2, 5)
        return api.numpy.take_along_axis(x, indices, axis=1, mode=mode,
                                         wrap_negative_indices=wrap)
    _assert_same(run)


def test_take_along_axis_default_axis_is_last():
    _assert_same(lambda api: api.numpy.take_along_axis(
        np.arange(6.0, dtype=np.float32).reshape(2, 3), np.array([[2, 0], [1, 1]])))


@pytest.mark.parametrize("axis, mean", [
    (None, 1.0), (0, np.array([[1.0, 2.0]], np.float32)),
    (0, np.array([[1.0], [2.0]], np.float32)), (1, np.float32(0.5))])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_with_a_given_mean(name, axis, mean):
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    _assert_same(lambda api: getattr(api.numpy, name)(x, axis=axis, mean=mean, ddof=1),
                 rtol=1e-6)


@APIS
def test_var_mean_of_another_rank_is_refused(api):
    with pytest.raises(TypeError):
        api.numpy.var(np.ones((2, 2), np.float32), axis=0, mean=np.zeros(2, np.float32))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float32", None])
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_dtype_gives_the_indices_that_dtype(dtype, descending):
    x = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 5.0, 2.0]], np.float32)
    ours, theirs = _both(lambda api: api.numpy.argsort(x, axis=1, dtype=dtype,
                                                      descending=descending))
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("copy", [None, True, False])
def test_reshape_copy_keeps_the_values(copy):
    _assert_same(lambda api: api.numpy.reshape(api.numpy.arange(6), (3, 2), copy=copy))


@APIS
def test_take_out_is_refused(api):
    with pytest.raises(NotImplementedError):
        api.numpy.take(api.numpy.arange(3), np.array([1]), out=np.zeros(1))


def test_take_parameters_in_jax_order():
    # take(a, indices, axis, out, mode): a positional mode after out means the same in both
    idx = np.array([0, 7])
    _assert_same(lambda api: api.numpy.take(np.arange(4.0, dtype=np.float32), idx, 0, None, "clip"))


# --- out_sharding and device -----------------------------------------------------------------

_ONES_2x3 = np.ones((2, 3), np.float32)
_OUT_SHARDING_CALLS = {
    "zeros": lambda api, s: api.numpy.zeros((2, 3), out_sharding=s),
    "array": lambda api, s: api.numpy.array([1.0, 2.0], out_sharding=s),
    "asarray": lambda api, s: api.numpy.asarray([1.0, 2.0], out_sharding=s),
    "arange": lambda api, s: api.numpy.arange(4, out_sharding=s),
    "reshape": lambda api, s: api.numpy.reshape(api.numpy.arange(4), (2, 2), out_sharding=s),
    "einsum": lambda api, s: api.numpy.einsum("ij,jk->ik", _ONES_2x3, _ONES_2x3.T,
                                              out_sharding=s),
    "matmul": lambda api, s: api.numpy.matmul(_ONES_2x3, _ONES_2x3.T, out_sharding=s),
    "dot": lambda api, s: api.numpy.dot(_ONES_2x3, _ONES_2x3.T, out_sharding=s),
    "lax.reduce": lambda api, s: api.lax.reduce(np.ones((2, 3), np.float32), np.float32(0),
                                                api.lax.add, (1,), out_sharding=s),
}


@pytest.mark.parametrize("name", sorted(_OUT_SHARDING_CALLS))
def test_out_sharding_none_changes_nothing(name):
    _assert_same(lambda api: _OUT_SHARDING_CALLS[name](api, None))


@pytest.mark.parametrize("name", sorted(_OUT_SHARDING_CALLS))
def test_out_sharding_that_shards_types_the_result_as_jax(name):
    # explicit sharding (tests/test_explicit.py): the result is placed, and typed, as asked
    def run(api):
        mesh = api.make_mesh((1,), ("x",))
        with api.set_mesh(mesh):
            out = _OUT_SHARDING_CALLS[name](api, api.sharding.NamedSharding(mesh, api.P("x")))
            return str(api.typeof(out)), np.asarray(out)
    (got, got_value), (want, want_value) = run(yax), run(jax)
    assert got == want and "@x" in got
    np.testing.assert_array_equal(got_value, want_value)


_DEVICE_CALLS = {
    "zeros": lambda api, d: api.numpy.zeros((2,), device=d),
    "array": lambda api, d: api.numpy.array([1.0, 2.0], device=d),
    "asarray": lambda api, d: api.numpy.asarray(1.0, device=d),
    "arange": lambda api, d: api.numpy.arange(3, device=d),
    "linspace": lambda api, d: api.numpy.linspace(0.0, 1.0, 3, device=d),
}


@pytest.mark.parametrize("name", sorted(_DEVICE_CALLS))
def test_device_commits_the_result_as_jax(name):
    ours, theirs = (_DEVICE_CALLS[name](api, api.devices()[0]) for api in (yax, jax))
    assert ours.committed and theirs.committed
    assert ours.weak_type == theirs.weak_type
    assert not _DEVICE_CALLS[name](yax, None).committed
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_device_places_the_result_on_that_device():
    out = run_on_devices("""
        import yax, yax.numpy as jnp
        d = yax.devices()[1]
        made = [jnp.zeros(2, device=d), jnp.array([1.0], device=d), jnp.asarray(1, device=d),
                jnp.arange(3, device=d), jnp.linspace(0, 1, 3, device=d),
                jnp.zeros(2, device=yax.sharding.SingleDeviceSharding(d))]
        print([sorted(x.devices(), key=str) == [d] for x in made])
    """, n=2)
    assert out.strip() == str([True] * 6)


# --- custom derivatives and keys -------------------------------------------------------------

def test_custom_jvp_nondiff_argnames_by_position_and_keyword():
    def run(api):
        def power(x, n):
            return x ** n
        f = api.custom_jvp(power, nondiff_argnames=("n",))
        f.defjvp(lambda n, primals, tangents: (f(primals[0], n),
                                                10.0 * n * primals[0] ** (n - 1) * tangents[0]))
        return api.grad(f)(2.0, 3), api.grad(lambda x: f(x, n=3))(2.0)
    _assert_same(run)


def test_custom_jvp_nondiff_argnames_with_argnums_reach_the_rule_in_position_order():
    def run(api):
        def g(x, n, m):
            return x ** n * m
        f = api.custom_jvp(g, nondiff_argnums=(2,), nondiff_argnames=("n",))
        f.defjvp(lambda n, m, primals, tangents: (f(primals[0], n, m), tangents[0] * n - m))
        return api.grad(f)(2.0, 3, 4)
    _assert_same(run)


def test_custom_vjp_nondiff_argnames():
    def run(api):
        f = api.custom_vjp(lambda x, n: x * n, nondiff_argnames=("n",))
        f.defvjp(lambda x, n: (x * n, None), lambda n, _, ct: (ct * n * 100.0,))
        return api.grad(f)(2.0, 3), api.grad(lambda x: f(x, n=3))(2.0)
    _assert_same(run)


@pytest.mark.parametrize("name", ["key", "wrap_key_data"])
def test_random_key_dtype_names_the_implementation(name):
    def run(api):
        k = api.random.key(0)
        made = api.random.key(3, dtype=k.dtype) if name == "key" else \
            api.random.wrap_key_data(api.random.key_data(k), dtype=k.dtype)
        return str(made.dtype), api.random.key_data(made), api.random.uniform(made, (2,))
    ours, theirs = _both(run)
    assert str(ours[0]) == str(theirs[0]) == "key<fry>"
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


@APIS
def test_random_key_impl_and_dtype_together_are_refused(api):
    k = api.random.key(0)
    with pytest.raises(ValueError):
        api.random.key(1, impl="threefry2x32", dtype=k.dtype)


@pytest.mark.parametrize("in_axes", [0, 1])
def test_vmap_sum_match_sums_a_batched_output_with_out_axes_none(in_axes):
    def run(api):
        f = api.vmap(lambda v: (api.numpy.outer(v, v), 1.0), in_axes=in_axes,
                     out_axes=(None, None), sum_match=True)
        grad = api.grad(lambda x: api.vmap(lambda v: (v * v).sum(), in_axes=in_axes,
                                           out_axes=None, sum_match=True)(x))
        x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
        return f(x), grad(x)
    _assert_same(run)


@APIS
def test_vmap_batched_output_with_out_axes_none_needs_sum_match(api):
    with pytest.raises((ValueError, yax.errors.YaxError)):  # jax: ValueError
        api.vmap(lambda v: v * 2, out_axes=None)(np.arange(3.0, dtype=np.float32))


@APIS
def test_make_jaxpr_axis_env_stages_collectives_over_those_names(api):
    def f(x):
        return api.lax.pmean(x, "i") * 2.0

    closed = api.make_jaxpr(f, axis_env=[("i", 4)])(np.float32(1.0))
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert "psum" in names
    assert [(a.shape, str(a.dtype)) for a in closed.out_avals] == [((), "float32")]
    # the size reaches what depends on it: pmean divides by 4
    assert any("4.0" in str(e) for e in closed.jaxpr.eqns)
    with pytest.raises(NameError if api is jax else yax.errors.YaxError):
        api.make_jaxpr(f)(np.float32(1.0))  # without the environment the name is unbound
