"""Semantics that optax, chex, equinox and flax rely on, each checked against real jax: tracers
are Arrays, dtype objects compare like jax's, eval_shape gives ShapeDtypeStructs."""

from __future__ import annotations

import logging

import jax
import jax.numpy as jjnp
import jax.scipy.special  # noqa: F401  (`import jax` does not import jax.scipy)
import numpy as np
import pytest

import yax
import yax.numpy as jnp
import yax.scipy.special  # noqa: F401


def _seen_inside(api, transform, fn, *args):
    """What `fn` returns (Python values) when called on tracers inside `transform`."""
    seen = []

    def body(*xs):
        seen.append(fn(*xs))
        return api.numpy.sum(xs[0])

    transform(body)(*args)
    return seen


_TRANSFORMS = {
    "jit": lambda api: api.jit,
    "grad": lambda api: api.grad,
    "vmap": lambda api: api.vmap,
    "linearize": lambda api: lambda f: lambda x: api.linearize(f, x),
    "scan": lambda api: lambda f: lambda x: api.lax.scan(
        lambda c, xi: (c + f(xi), None), 0.0, x),
}


@pytest.mark.parametrize("name", sorted(_TRANSFORMS))
def test_tracers_are_arrays_as_in_jax(name):
    def kinds(api):
        return lambda x: (isinstance(x, api.Array), isinstance(x, api.numpy.ndarray))

    got = _seen_inside(yax, _TRANSFORMS[name](yax), kinds(yax), jnp.ones(3))
    want = _seen_inside(jax, _TRANSFORMS[name](jax), kinds(jax), jjnp.ones(3))
    assert set(got) == set(want) == {(True, True)}  # (yax may trace a scan body twice)


def test_array_instance_check_keeps_other_values_out():
    for api in (yax, jax):
        for value in (1.0, 3, np.ones(2), np.float32(1), [1.0], None):
            assert not isinstance(value, api.Array), (api.__name__, value)
    assert not issubclass(yax.core.trace.Tracer, yax.Array)
    assert not issubclass(jax.core.Tracer, jax.Array)


_DTYPE_OTHERS = {
    "f32": lambda m: m.float32, "f16": lambda m: m.float16, "bf16": lambda m: m.bfloat16,
    "i32": lambda m: m.int32, "np.f32": lambda m: np.float32, "np.f16": lambda m: np.float16,
    "dtype.f32": lambda m: np.dtype("float32"), "str": lambda m: "float32",
    "float": lambda m: float, "None": lambda m: None,
}


def _comparisons(m):
    table = {}
    for a in ("f32", "bf16", "i32"):
        left = _DTYPE_OTHERS[a](m)
        for b, other in _DTYPE_OTHERS.items():
            o = other(m)
            table[a, b] = (left == o, left != o, o == left, o != left)
    return table


def test_dtype_objects_compare_as_jax():
    assert _comparisons(jnp) == _comparisons(jjnp)
    assert jnp.float16 != jnp.float32 and not jnp.float32 != jnp.float32
    for name in ("float32", "bfloat16", "int8", "bool_"):
        mine, theirs = getattr(jnp, name), getattr(jjnp, name)
        assert (hash(mine) == hash(np.dtype(mine).type)) == (
            hash(theirs) == hash(np.dtype(theirs).type))
        assert {mine: 1}.get(np.dtype(mine).type) == {theirs: 1}.get(np.dtype(theirs).type)


def _struct_fields(s):
    return (s.shape, np.dtype(s.dtype), s.weak_type, s.sharding, type(s).__name__)


def test_eval_shape_returns_shape_dtype_structs():
    def run(api):
        f_api = lambda x, y: {"a": x * 2.0, "b": (y.astype(api.numpy.int32), y.sum() * 1.0)}
        outs = api.eval_shape(f_api, api.numpy.ones((2, 3)), api.ShapeDtypeStruct((4,), "float32"))
        jitted = api.jit(f_api).eval_shape(api.numpy.ones((2, 3)), api.numpy.ones(4))
        weak = api.eval_shape(lambda: 1.0)
        return ([_struct_fields(s) for s in api.tree_util.tree_leaves(outs)],
                [_struct_fields(s) for s in api.tree_util.tree_leaves(jitted)],
                _struct_fields(weak))

    assert run(yax) == run(jax)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_functions_accept_shape_dtype_structs(name):
    def run(api):
        fn = getattr(api.numpy, name)
        args = (7,) if name == "full_like" else ()
        outs = [fn(api.ShapeDtypeStruct((2, 3), dt), *args) for dt in ("float32", "int32")]
        outs.append(fn(api.ShapeDtypeStruct((), "float32", weak_type=True), *args))
        outs.append(fn(api.eval_shape(lambda x: x[:1], api.numpy.ones(3)), *args))
        return [(o.shape, o.dtype, o.weak_type,
                 None if name == "empty_like" else np.asarray(o).tolist()) for o in outs]

    assert run(yax) == run(jax)


_X = np.array([[1.0, 5.0, 3.0, -2.0], [2.0, -1.0, 0.5, 40.0], [0.0, 1.0, 2.0, 3.0]], np.float32)
_W = np.array([[True, False, True, True], [False, False, False, False],
               [True, True, True, True]])
_WEIGHTS = np.array([1.0, 2.0, -3.0, 0.5], np.float32)

# name -> f(api, x, where): the masked functions libraries call (optax's losses, flax's masks)
_MASKED = {
    "softmax": lambda api, x, w: api.nn.softmax(x, where=w),
    "softmax_axis0": lambda api, x, w: api.nn.softmax(x, axis=0, where=w),
    "softmax_bcast_mask": lambda api, x, w: api.nn.softmax(x, where=w[0]),
    "log_softmax": lambda api, x, w: api.numpy.where(w, api.nn.log_softmax(x, where=w), 0.0),
    "log_softmax_masked_value": lambda api, x, w: api.numpy.isneginf(
        api.nn.log_softmax(x, where=w)).astype("float32"),
    "nn_logsumexp": lambda api, x, w: api.numpy.maximum(
        api.nn.logsumexp(x, axis=-1, where=w), -1e3),
    "nn_logsumexp_all": lambda api, x, w: api.nn.logsumexp(x, where=w),
    "nn_logsumexp_keepdims": lambda api, x, w: api.numpy.maximum(
        api.nn.logsumexp(x, axis=1, keepdims=True, where=w), -1e3),
    "nn_logsumexp_b_sign": lambda api, x, w: api.numpy.stack(
        [api.numpy.maximum(v, -1e3) for v in api.nn.logsumexp(
            x, axis=-1, b=api.numpy.asarray(_WEIGHTS), return_sign=True, where=w)]),
    "scipy_logsumexp": lambda api, x, w: api.numpy.maximum(
        api.scipy.special.logsumexp(x, axis=1, where=w), -1e3),
    "standardize": lambda api, x, w: api.nn.standardize(x[::2], where=w[::2]),
    "standardize_stable": lambda api, x, w: api.nn.standardize(x[::2], where=w[::2],
                                                               algorithm="stable"),
    "standardize_mean_given": lambda api, x, w: api.nn.standardize(x[::2], mean=1.0,
                                                                   where=w[::2]),
    "standardize_axis_none": lambda api, x, w: api.nn.standardize(x, axis=None, where=w),
}


def _masked_table(api, x, w):
    """Every masked function's value and gradient (of a weighted sum), in one jitted program."""
    def one(fn):
        value = fn(api, x, w)
        weights = api.numpy.arange(value.size, dtype=value.dtype).reshape(value.shape) - 3.0
        grad = api.grad(lambda y: api.numpy.sum(fn(api, y, w) * weights))(x)
        return value, grad

    return api.jit(lambda: {name: one(fn) for name, fn in _MASKED.items()})()


def test_where_masks_match_jax_values_and_gradients():
    got = _masked_table(yax, jnp.asarray(_X), jnp.asarray(_W))
    want = _masked_table(jax, jjnp.asarray(_X), jjnp.asarray(_W))
    for name in _MASKED:
        for part, g, w in zip(("value", "grad"), got[name], want[name], strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5,
                                       err_msg=f"{name} {part}")


def test_where_masks_eager_match_jit_and_fast_variance_is_clamped():
    x, w = jnp.asarray(_X), jnp.asarray(_W)
    np.testing.assert_allclose(np.asarray(yax.nn.softmax(x, where=w)),
                               np.asarray(yax.jit(lambda a: yax.nn.softmax(a, where=w))(x)))
    big = np.float32(1e4) + np.arange(3, dtype=np.float32)
    for algorithm in ("fast", "stable"):
        np.testing.assert_allclose(
            np.asarray(yax.nn.standardize(jnp.asarray(big), algorithm=algorithm)),
            np.asarray(jax.nn.standardize(jjnp.asarray(big), algorithm=algorithm)), rtol=1e-5)
    with pytest.raises(ValueError, match="algorithm"):
        yax.nn.standardize(x, algorithm="two-pass")


def test_log_compiles_is_a_context_manager_and_an_option(caplog):
    f = yax.jit(lambda x: x * 3.0 + 1.0)
    assert yax.log_compiles.value is False and jax.log_compiles.value is False
    with caplog.at_level(logging.WARNING, logger="yax"):
        with yax.log_compiles():
            assert yax.log_compiles.value is True and yax.config.jax_log_compiles is True
            f(jnp.ones(3))
            f(jnp.ones(3))  # cached: no second compile logged
        f(jnp.ones(4))  # outside the block: not logged
        with yax.log_compiles(False):
            f(jnp.ones(5))
    finished = [r.getMessage() for r in caplog.records
                if "Finished XLA compilation" in r.getMessage()]
    assert len(finished) == 1 and "jit(<lambda>)" in finished[0]
    assert yax.log_compiles.value is False
    for api in (yax, jax):
        with pytest.raises(TypeError):
            bool(api.log_compiles)
        with pytest.raises(TypeError), api.numpy_dtype_promotion():
            pass
        with api.numpy_dtype_promotion("standard"):
            assert api.numpy_dtype_promotion.value == "standard"
    with pytest.raises(NotImplementedError, match="strict"), yax.numpy_dtype_promotion("strict"):
        pass
    assert yax.numpy_dtype_promotion.value == "standard"


def test_lowered_compiler_ir_dialects_as_jax():
    def parts(api):
        lowered = api.jit(lambda x: x * 2.0 + 1.0).lower(api.numpy.ones(3))
        stablehlo, hlo = lowered.compiler_ir(), lowered.compiler_ir(dialect="hlo")
        return (type(stablehlo).__name__, type(lowered.compiler_ir("stablehlo")).__name__,
                "stablehlo" in str(stablehlo), type(hlo).__name__,
                "ENTRY" in hlo.as_hlo_text(), "ENTRY" in lowered.as_text(dialect="hlo"),
                "func.func" in lowered.as_text())

    assert parts(yax) == parts(jax) == ("Module", "Module", True, "XlaComputation", True, True,
                                        True)
    with pytest.raises(ValueError, match="dialect"):
        yax.jit(lambda x: x).lower(1.0).compiler_ir("mhlo-ish")
