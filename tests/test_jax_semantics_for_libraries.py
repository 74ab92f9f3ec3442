"""Semantics that optax, chex, equinox and flax rely on, each checked against real jax: tracers
are Arrays, dtype objects compare like jax's, eval_shape gives ShapeDtypeStructs."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp


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
