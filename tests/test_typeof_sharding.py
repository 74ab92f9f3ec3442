"""`typeof(x).sharding` as jax gives it: a NamedSharding whose spec has one None per dimension
on an automatic (or empty) mesh, for arrays, scalars and tracers; the answer stays equal to the
abstract value."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax.sharding import NamedSharding, P

_VALUES = {
    "matrix": lambda api: api.numpy.ones((4, 2)),
    "vector": lambda api: api.numpy.arange(3),
    "python scalar": lambda api: 1.0,
    "numpy": lambda api: np.zeros((2, 3), np.float32),
}


def _seen(api, value):
    return api.typeof(value).sharding


@pytest.mark.parametrize("name", sorted(_VALUES))
def test_typeof_sharding_spec_as_jax(name):
    got, want = _seen(yax, _VALUES[name](yax)), _seen(jax, _VALUES[name](jax))
    assert isinstance(got, NamedSharding)
    assert tuple(got.spec) == tuple(want.spec)
    assert got.mesh.axis_names == tuple(want.mesh.axis_names) == ()
    assert got.mesh.empty


@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
def test_typeof_sharding_of_tracers_as_jax(transform):
    def spec_seen(api):
        seen = []

        def body(x):
            seen.append(tuple(api.typeof(x).sharding.spec))
            return (x * x).sum()
        getattr(api, transform)(body)(api.numpy.ones((2, 3)))
        return seen
    assert spec_seen(yax) == spec_seen(jax)


def test_typeof_sharding_follows_the_array_mesh():
    mesh = yax.make_mesh((1,), ("x",), axis_types=(yax.sharding.AxisType.Auto,))
    jmesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    x = yax.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P("x")))
    jx = jax.device_put(jjnp.ones((4, 2)), jax.sharding.NamedSharding(jmesh, jax.P("x")))
    got, want = yax.typeof(x).sharding, jax.typeof(jx).sharding
    assert tuple(got.spec) == tuple(want.spec) == (None, None)  # an Auto axis is not in the type
    assert got.mesh.axis_names == tuple(want.mesh.axis_names) == ("x",)


def test_typeof_is_still_the_abstract_value():
    x = jnp.ones((2, 3))
    t = yax.typeof(x)
    assert t == x.aval and hash(t) == hash(x.aval)
    assert (t.shape, t.dtype) == ((2, 3), np.float32)
    assert str(yax.typeof(x).sharding.mesh) == "AbstractMesh((), axis_types=())"  # as jax 0.10
