"""Shardings as JAX 0.10.2 prints and keeps them: the repr and str of PartitionSpec, Mesh,
NamedSharding and SingleDeviceSharding, spec equality, and the spec length of results (a program
asking for P('model', None) gets P('model', None) back; a placement the compiler chose is written
without trailing Nones). Real jax is the oracle throughout; the multi-device table runs in a
child Python with 8 CPU devices (tests/multidevice.py)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
from tests.multidevice import run_on_devices
from yax.sharding import Mesh, NamedSharding, P, SingleDeviceSharding

JP = jax.sharding.PartitionSpec

SPECS = [(), ("data",), ("data", None), (("a", "b"), None), (None,), (None, "x"), (("a",),),
         (("a",), None), ([],), (None, None), (["a", "b"],), ("x", "UNC"), ("UNC",)]


def _entries(spec, unconstrained):
    return tuple(unconstrained if p == "UNC" else p for p in spec)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_partition_spec_prints_as_jax(spec):
    ours = P(*_entries(spec, P.UNCONSTRAINED))
    theirs = JP(*_entries(spec, JP.UNCONSTRAINED))
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert len(ours) == len(theirs) and repr(tuple(ours)) == repr(tuple(theirs))


def test_partition_spec_equality_as_jax():
    pairs = [(("x", None), ("x",)), ((("x",),), ("x",)), (("x", None), ("x", None)),
             ((), (None,)), ((None, "x"), (None, "x")), ((("a", "b"),), (("a", "b"), None))]
    for a, b in pairs:
        assert (P(*a) == P(*b)) == (JP(*a) == JP(*b)), (a, b)
        assert (P(*a) != P(*b)) == (JP(*a) != JP(*b)), (a, b)
        if P(*a) == P(*b):
            assert hash(P(*a)) == hash(P(*b))
    # a spec is not a tuple, in either
    assert (P("x") == ("x",)) == (JP("x") == ("x",)) is False
    assert repr(P("x") + (None,)) == repr(JP("x") + (None,)) == "P('x', None)"
    assert repr((None,) + P("x")) == repr((None,) + JP("x"))


def _meshes():
    dev, jdev = yax.devices()[0], jax.devices()[0]
    shapes = [((1,), ("x",)), ((1, 1), ("data", "model"))]
    return [(Mesh(np.array([dev]).reshape(s), names), jax.sharding.Mesh(
        np.array([jdev]).reshape(s), names)) for s, names in shapes]


def test_mesh_and_shardings_print_as_jax():
    for ours, theirs in _meshes():
        assert repr(ours) == repr(theirs)
        assert str(ours) == str(theirs)
        for spec in [(), (ours.axis_names[0],), (ours.axis_names[0], None)]:
            ys, js = NamedSharding(ours, P(*spec)), jax.sharding.NamedSharding(theirs, JP(*spec))
            assert repr(ys) == repr(js) and str(ys) == str(js)
            assert ys.memory_kind == js.memory_kind == "device"
    ys = SingleDeviceSharding(yax.devices()[0])
    js = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert repr(ys) == repr(js) and str(ys) == str(js)
    assert repr(yax.numpy.zeros(3).sharding) == repr(jax.numpy.zeros(3).sharding)


def test_named_sharding_equality_as_jax():
    (ours, theirs), _ = _meshes()
    ya, yb = NamedSharding(ours, P("x")), NamedSharding(ours, P("x", None))
    ja, jb = (jax.sharding.NamedSharding(theirs, JP("x")),
              jax.sharding.NamedSharding(theirs, JP("x", None)))
    assert (ya == yb) == (ja == jb) is False
    assert ya.is_equivalent_to(yb, 2) and ja.is_equivalent_to(jb, 2)
    assert NamedSharding(ours, P(), memory_kind="device") == NamedSharding(ours, P())


_CHILD = r'''
import numpy as np
import jax, jax.numpy as jjnp
from jax.sharding import PartitionSpec as JP, NamedSharding as JNS, Mesh as JMesh
import yax, yax.numpy as jnp
from yax import lax
from yax.sharding import Mesh, NamedSharding, P
from yax.experimental.shard_map import shard_map

mesh = Mesh(np.array(yax.devices()).reshape(4, 2), ("data", "model"))
jmesh = JMesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
double = lambda x: x * 2
bad = []

def same(name, ours, theirs):
    y, j = repr(ours()), repr(theirs())
    if y != j:
        bad.append(f"{name}: yax {y} but jax {j}")

for spec in [("model", None), ("data",), (None, None), (("data", "model"), None), (None, "model")]:
    ys, js = NamedSharding(mesh, P(*spec)), JNS(jmesh, JP(*spec))
    yx, jx = yax.device_put(a, ys), jax.device_put(a, js)
    cases = {
        "jit out_shardings": (lambda: yax.jit(double, out_shardings=ys)(a),
                              lambda: jax.jit(double, out_shardings=js)(a)),
        "jit in_shardings": (lambda: yax.jit(double, in_shardings=ys)(a),
                             lambda: jax.jit(double, in_shardings=js)(a)),
        "device_put": (lambda: yx, lambda: jx),
        "eager op": (lambda: yx + 1, lambda: jx + 1),
        "eager sin": (lambda: jnp.sin(yx), lambda: jjnp.sin(jx)),
        "jit of a committed argument": (lambda: yax.jit(double)(yx), lambda: jax.jit(double)(jx)),
        "with_sharding_constraint in jit": (
            lambda: yax.jit(lambda x: lax.with_sharding_constraint(x * 2, ys))(a),
            lambda: jax.jit(lambda x: jax.lax.with_sharding_constraint(x * 2, js))(a)),
        "eager with_sharding_constraint": (
            lambda: lax.with_sharding_constraint(a * 2, ys),
            lambda: jax.lax.with_sharding_constraint(a * 2, js)),
        "eager shard_map": (
            lambda: shard_map(double, mesh=mesh, in_specs=P(*spec), out_specs=P(*spec))(a),
            lambda: jax.shard_map(double, mesh=jmesh, in_specs=JP(*spec), out_specs=JP(*spec))(a)),
        "jit of shard_map": (
            lambda: yax.jit(shard_map(double, mesh=mesh, in_specs=P(*spec),
                                      out_specs=P(*spec)))(a),
            lambda: jax.jit(jax.shard_map(double, mesh=jmesh, in_specs=JP(*spec),
                                          out_specs=JP(*spec)))(a)),
        "reduction": (lambda: yax.jit(lambda x: x.sum(1))(yx),
                      lambda: jax.jit(lambda x: x.sum(1))(jx)),
    }
    for name, (ours, theirs) in cases.items():
        same(f"{name} {spec}", lambda: ours().sharding, lambda: theirs().sharding)

# the first argument's sharding is what a result placed like it keeps
put = lambda s: yax.device_put(a, NamedSharding(mesh, P(*s)))
jput = lambda s: jax.device_put(a, JNS(jmesh, JP(*s)))
three = lambda x, y: (x + y, x * 2, y * 3)
for s1, s2 in [(("data",), ("data", None)), ((None, None), ("data", None))]:
    same(f"two committed arguments {s1} {s2}",
         lambda: [o.sharding.spec for o in yax.jit(three)(put(s1), put(s2))],
         lambda: [o.sharding.spec for o in jax.jit(three)(jput(s1), jput(s2))])
same("an uncommitted first argument",
     lambda: [o.sharding.spec for o in yax.jit(three)(a, put(("data", None)))],
     lambda: [o.sharding.spec for o in jax.jit(three)(a, jput(("data", None)))])
same("results of other ranks and layouts",
     lambda: [o.sharding.spec for o in yax.jit(lambda x: (x.T, x[0], x))(put(("data", None)))],
     lambda: [o.sharding.spec for o in jax.jit(lambda x: (x.T, x[0], x))(jput(("data", None)))])
# device_put to an equivalent spec renames the same blocks (no copy) and keeps the length
moved = yax.device_put(put(("data",)), NamedSharding(mesh, P("data", None)))
same("device_put to an equivalent spec", lambda: moved.sharding,
     lambda: jax.device_put(jput(("data",)), JNS(jmesh, JP("data", None))).sharding)
np.testing.assert_array_equal(np.asarray(moved), a)
spec = P("model", None)
compiled = yax.jit(double, in_shardings=NamedSharding(mesh, spec),
                   out_shardings=NamedSharding(mesh, spec)).lower(a).compile()
jcompiled = jax.jit(double, in_shardings=JNS(jmesh, JP("model", None)),
                    out_shardings=JNS(jmesh, JP("model", None))).lower(a).compile()
same("Compiled.output_shardings", lambda: compiled.output_shardings,
     lambda: jcompiled.output_shardings)
same("Compiled.input_shardings", lambda: compiled.input_shardings[0],
     lambda: jcompiled.input_shardings[0][0])
assert not bad, "\n".join(bad)
print("OK")
'''


def test_result_specs_keep_their_length_as_jax():
    assert "OK" in run_on_devices(_CHILD, n=8)
