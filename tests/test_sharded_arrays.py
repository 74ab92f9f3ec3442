"""Sharded Arrays, device_put to shardings, make_array_from_*, visualize_array_sharding and the
devices API. Multi-device checks run in one child Python with 8 forced CPU devices, comparing
with jax there (it sees the same devices)."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import yax
from tests.multidevice import run_on_devices
from yax.runtime import backend
from yax.sharding import SingleDeviceSharding
from yax.transforms import api


def test_devices_api_single_process():
    import jax
    devs = api.devices()
    assert devs == jax.devices()
    assert api.device_count() == len(devs) == api.local_device_count()
    assert api.local_devices() == devs and api.local_devices(process_index=0) == devs
    assert api.local_devices(process_index=1) == []
    assert api.process_index() == 0 and api.process_count() == 1
    assert api.devices("cpu") == jax.devices("cpu")


def test_single_device_array_sharding_and_default_device():
    x = api.device_put(np.arange(6.0, dtype=np.float32))
    dev = api.devices()[0]
    assert x.sharding == SingleDeviceSharding(dev) and x.device == dev
    assert x.devices() == {dev} and x.is_fully_replicated and x.is_fully_addressable
    assert not x.committed
    y = api.device_put(x, dev)
    assert y.committed and np.array_equal(np.asarray(y), np.asarray(x))
    (shard,) = y.addressable_shards
    assert shard.device == dev and shard.index == (slice(None),) and shard.replica_id == 0
    np.testing.assert_array_equal(np.asarray(shard.data), np.arange(6.0))
    tree = {"a": np.ones(2, np.float32), "b": [np.zeros(3, np.float32)]}
    z = api.device_put(tree, {"a": dev, "b": None})
    assert z["a"].committed and not z["b"][0].committed
    assert api.device_put(x, SingleDeviceSharding(dev)).committed
    with pytest.raises(TypeError, match="yax sharding"):
        api.device_put(x, "cpu:0")
    back = pickle.loads(pickle.dumps(y))
    assert back.sharding == y.sharding and np.array_equal(np.asarray(back), np.asarray(y))
    # default_device: a context (per thread) and a config value
    other = dev
    seen = []
    with api.default_device(other):
        assert backend.default_device() is other
        t = threading.Thread(target=lambda: seen.append(backend._default_device_var.get()))
        t.start()
        t.join()
    assert seen == [None]
    yax.config.update("jax_default_device", dev)
    try:
        assert backend.default_device() == dev and yax.config.default_device == dev
    finally:
        yax.config.update("jax_default_device", None)
    with pytest.raises(TypeError):
        with api.default_device("cpu:0"):
            pass


CHILD = r'''
import io, contextlib
import numpy as np
import jax
import yax
from yax.sharding import make_mesh, Mesh, NamedSharding, P, SingleDeviceSharding, ShardingError
from yax.transforms import api, array_creation as ac
from yax.debug import visualize_array_sharding

devs = api.devices()
assert len(devs) == 8 and devs == jax.devices() and api.device_count() == 8
a = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
m = make_mesh((4, 2), ("x", "y"))
jm = jax.sharding.Mesh(np.asarray(m.devices), ("x", "y"))
specs = [P("x", "y"), P("y"), P(None, "x"), P(("x", "y")), P(), P("y", "x")]

def jspec(p):
    return jax.sharding.PartitionSpec(*p)

for spec in specs:
    s = NamedSharding(m, spec)
    js = jax.sharding.NamedSharding(jm, jspec(spec))
    x = api.device_put(a, s)
    jx = jax.device_put(a, js)
    assert x.sharding == s and hash(x.sharding) == hash(s), (x.sharding, s)
    assert x.committed and x.devices() == set(devs) and x.is_fully_addressable
    assert x.is_fully_replicated == jx.is_fully_replicated == s.is_fully_replicated
    assert s.shard_shape(a.shape) == js.shard_shape(a.shape)
    assert s.devices_indices_map(a.shape) == js.devices_indices_map(a.shape)
    mine = sorted((sh.device.id, str(sh.index), sh.replica_id) for sh in x.addressable_shards)
    theirs = sorted((sh.device.id, str(sh.index), sh.replica_id) for sh in jx.addressable_shards)
    assert mine == theirs, (spec, mine, theirs)
    for sh in x.addressable_shards:
        assert sh.data.devices() == {sh.device} and sh.data.shape == s.shard_shape(a.shape)
        np.testing.assert_array_equal(np.asarray(sh.data), a[sh.index])
    assert len(x.global_shards) == 8
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(api.device_get({"k": x})["k"], a)
    assert "Array(" in repr(x) and str(x) == str(a)
    try:
        x.device
        raise AssertionError("no error")
    except ValueError as e:
        assert ".devices()" in str(e)

# equality and hashing as jax: same mesh + spec equal; different spec or mesh order differ
s1, s2 = NamedSharding(m, P("x")), NamedSharding(make_mesh((4, 2), ("x", "y")), P("x"))
assert s1 == s2 and hash(s1) == hash(s2)
assert s1 != NamedSharding(m, P("y"))
m_rev = Mesh(np.asarray(devs[::-1]).reshape(4, 2), ("x", "y"))
assert s1 != NamedSharding(m_rev, P("x"))
assert (jax.sharding.NamedSharding(jm, jspec(P("x"))) !=
        jax.sharding.NamedSharding(jax.sharding.Mesh(np.asarray(devs[::-1]).reshape(4, 2),
                                                     ("x", "y")), jspec(P("x"))))
# a reversed mesh puts blocks on other devices, as in jax
xr = api.device_put(a, NamedSharding(m_rev, P("x", "y")))
jr = jax.device_put(a, jax.sharding.NamedSharding(
    jax.sharding.Mesh(np.asarray(devs[::-1]).reshape(4, 2), ("x", "y")), jspec(P("x", "y"))))
assert (sorted((sh.device.id, str(sh.index)) for sh in xr.addressable_shards) ==
        sorted((sh.device.id, str(sh.index)) for sh in jr.addressable_shards))
np.testing.assert_array_equal(np.asarray(xr), a)

# resharding keeps the values: sharding -> sharding -> one device -> sharding
x = api.device_put(a, NamedSharding(m, P("x", "y")))
y = api.device_put(x, NamedSharding(m, P("y", None)))
assert y.sharding == NamedSharding(m, P("y", None))
np.testing.assert_array_equal(np.asarray(y), a)
z = api.device_put(y, devs[5])
assert z.device == devs[5] and z.committed and z.sharding == SingleDeviceSharding(devs[5])
np.testing.assert_array_equal(np.asarray(z), a)
w = api.device_put(z, NamedSharding(m, P(None, "x")))
np.testing.assert_array_equal(np.asarray(w), a)
assert api.device_put(w, w.sharding)._buf is w._buf

# pytrees with a prefix of targets (and None)
tree = {"p": a, "q": (a[:8], a[:4])}
out = api.device_put(tree, {"p": NamedSharding(m, P("x")), "q": devs[1]})
assert out["p"].sharding == NamedSharding(m, P("x"))
assert out["q"][0].device == devs[1] and out["q"][1].device == devs[1]
same = api.device_put(out, None)
assert same["p"]._buf is out["p"]._buf

# a spec that does not divide: ShardingError naming the shape, the spec and the mesh
try:
    api.device_put(np.zeros((6, 3)), NamedSharding(m, P("x")))
    raise AssertionError("no error")
except ShardingError as e:
    msg = str(e)
    assert "(6, 3)" in msg and "'x'" in msg and "Mesh" in msg, msg

# make_array_from_callback against jax's
for spec in (P("x", "y"), P("y"), P()):
    s = NamedSharding(m, spec)
    got = ac.make_array_from_callback(a.shape, s, lambda idx: a[idx])
    want = jax.make_array_from_callback(a.shape, jax.sharding.NamedSharding(jm, jspec(spec)),
                                        lambda idx: a[idx])
    assert got.sharding == s and got.committed
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert (sorted((sh.device.id, str(sh.index)) for sh in got.addressable_shards) ==
            sorted((sh.device.id, str(sh.index)) for sh in want.addressable_shards))
def expect(exc, words, fn):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError("no error")
s = NamedSharding(m, P("x", "y"))
expect(ValueError, ["shape (3, 3)", "(4, 4)"],
       lambda: ac.make_array_from_callback(a.shape, s, lambda idx: np.zeros((3, 3), np.float32)))

# make_array_from_single_device_arrays: any order, checked count, shape, device
x = api.device_put(a, s)
pieces = [sh.data for sh in x.addressable_shards][::-1]
y = ac.make_array_from_single_device_arrays(a.shape, s, pieces)
np.testing.assert_array_equal(np.asarray(y), a)
assert y.sharding == s
expect(ValueError, ["got 7 arrays", "8 addressable"],
       lambda: ac.make_array_from_single_device_arrays(a.shape, s, pieces[:7]))
bad = [api.device_put(np.zeros((2, 2), np.float32), p.device) for p in pieces]
expect(ValueError, ["shape (2, 2)", "(4, 4)"],
       lambda: ac.make_array_from_single_device_arrays(a.shape, s, bad))
dup = pieces[:7] + [pieces[0]]
expect(ValueError, ["both on"],
       lambda: ac.make_array_from_single_device_arrays(a.shape, s, dup))
m4 = make_mesh((4,), ("x",), devices=devs[:4])
s4 = NamedSharding(m4, P("x"))
other = [api.device_put(np.zeros((4, 8), np.float32), d) for d in devs[4:]]
expect(ValueError, ["not one device"],
       lambda: ac.make_array_from_single_device_arrays(a.shape, s4, other))

# visualize_array_sharding: the blocks and their devices on a 2-D mesh, 1-D arrays too
def shown(x):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        visualize_array_sharding(x)
    return buf.getvalue()
text = shown(api.device_put(a, NamedSharding(m, P("x", "y"))))
rows = [ln for ln in text.splitlines() if "CPU" in ln]
assert len(rows) == 4 and rows[0].split() == ["│", "CPU", "0", "│", "CPU", "1", "│"], text
assert rows[3].split()[1:3] == ["CPU", "6"], text
text = shown(api.device_put(a, NamedSharding(m, P("y"))))
assert [ln.strip("│ ") for ln in text.splitlines() if "CPU" in ln] == [
    "CPU 0,2,4,6", "CPU 1,3,5,7"], text
text = shown(api.device_put(np.arange(8.0), NamedSharding(m, P("x"))))
cells = [ln for ln in text.splitlines() if "CPU" in ln]
assert len(cells) == 1 and cells[0].count("CPU") == 4 and "CPU 0,1" in cells[0], text
text = shown(api.device_put(np.arange(8.0), devs[2]))
assert "CPU 2" in text

# ... laid out as jax lays it out (cell sizes follow the blocks' shares of the array). Two
# drawings as jax 0.10.2 prints them, then, where jax can draw (it needs `rich`), a table of
# shapes and specs against the live jax; tables wider than 80 columns are left out (rich
# squeezes them, yax does not: docs/differences.md).
from yax.debug import visualize_sharding
def drawn(draw, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        draw(*args)
    return buf.getvalue()
m2 = make_mesh((2, 2), ("x", "y"))
assert drawn(visualize_sharding, (16,), NamedSharding(m2, P("x"))) == (
    "┌───────┬───────┐\n│CPU 0,1│CPU 2,3│\n└───────┴───────┘\n")
assert drawn(visualize_sharding, (8, 4), NamedSharding(m, P("y", "x"))) == "\n".join(
    ["┌───────┬───────┬───────┬───────┐"] + [
        ln for r in ("0 │ CPU 2 │ CPU 4 │ CPU 6", "1 │ CPU 3 │ CPU 5 │ CPU 7")
        for ln in ["│       │       │       │       │", "│ CPU " + r + " │"]
        + ["│       │       │       │       │"] * 2 + ["├───────┼───────┼───────┼───────┤"]
    ][:-1] + ["└───────┴───────┴───────┴───────┘", ""])
try:
    import rich  # noqa: F401
except ImportError:
    rich = None
if rich is not None:
    compared = 0
    for mesh_shape in ((4, 2), (2, 4), (2, 2), (8, 1)):
        n = int(np.prod(mesh_shape))
        ym = Mesh(np.asarray(devs[:n]).reshape(mesh_shape), ("x", "y"))
        jmm = jax.sharding.Mesh(np.asarray(devs[:n]).reshape(mesh_shape), ("x", "y"))
        for shape in ((8, 4), (8, 8), (16, 4), (8, 2), (2, 8), (32, 32), (8, 1), (1, 8),
                      (100, 4), (8,), (16,), (1000,)):
            for spec in (P("x", "y"), P("y", "x"), P("x"), P(None, "x"), P(None, "y"), P(),
                         P(("x", "y"))):
                if len(spec) > len(shape):
                    continue
                try:
                    want = drawn(jax.debug.visualize_sharding, shape,
                                 jax.sharding.NamedSharding(jmm, jspec(spec)))
                except Exception:
                    continue  # a block size jax cannot draw
                if max(map(len, want.splitlines())) >= 80:
                    continue
                got = drawn(visualize_sharding, shape, NamedSharding(ym, spec))
                assert got == want, (mesh_shape, shape, spec, got, want)
                compared += 1
    assert compared > 100, compared

# pickling a sharded Array gathers it
import pickle
x = api.device_put(a, NamedSharding(m, P("x")))
np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(x))), a)
print("OK")
'''


def test_sharded_arrays_on_8_devices():
    assert "OK" in run_on_devices(CHILD)


def test_eager_and_jit_follow_default_device_and_committed_arguments():
    out = run_on_devices(r'''
import numpy as np, yax, yax.numpy as jnp
d2, d3 = yax.devices()[2], yax.devices()[3]
a = jnp.ones(3) + 1
with yax.default_device(d2):
    b = jnp.ones(3) + 1                      # the scalar constant follows the block too
    f = yax.jit(lambda x: x * 2)
    assert b.devices() == {d2} and a.devices() == {yax.devices()[0]}, (a.devices(), b.devices())
    assert f(np.ones(3)).devices() == {d2}
c = yax.device_put(np.arange(3.0), d3)        # committed: computations follow it
assert (c + 1).devices() == {d3} and (c * 2).sum().devices() == {d3}
assert yax.jit(lambda x: x * 2)(c).devices() == {d3}
np.testing.assert_allclose(yax.jit(lambda x, y: x + y)(c, 1.0), [1.0, 2.0, 3.0])
assert f(np.ones(3)).devices() == {yax.devices()[0]}
try:
    c + yax.device_put(np.ones(3), d2)
    raise SystemExit("no error for operands committed to different devices")
except yax.errors.YaxError as e:
    assert "committed to different devices" in str(e), e
print("placement ok")
''', n=4)
    assert "placement ok" in out


def test_partition_spec_under_set_mesh_and_make_mesh_of_the_first_devices():
    # jax's explicit-sharding tutorials: device_put(x, P(...)) names axes of the mesh set with
    # set_mesh; make_mesh takes the first prod(shape) devices, axis_types positionally
    out = run_on_devices(r'''
import numpy as np, jax, yax, yax.numpy as jnp
from yax.sharding import PartitionSpec as P, NamedSharding, AxisType
mesh = yax.make_mesh((4, 2), ('x', 'y'))
with yax.set_mesh(mesh):
    a = yax.device_put(jnp.arange(8 * 16.).reshape(8, 16), P('x', 'y'))
assert a.sharding == NamedSharding(mesh, P('x', 'y')), a.sharding
np.testing.assert_array_equal(np.asarray(a), np.arange(8 * 16.).reshape(8, 16))
try:
    yax.device_put(np.ones(4), P('x'))
    raise SystemExit("no error for a PartitionSpec without a mesh")
except ValueError as e:
    assert "no mesh is set" in str(e), e
small = yax.make_mesh((2,), ('i',))
ref = jax.make_mesh((2,), ('i',))
assert [d.id for d in small.devices.flat] == [d.id for d in ref.devices.flat] == [0, 1]
typed = yax.make_mesh((2, 2), ('a', 'b'), (AxisType.Auto, AxisType.Auto))
assert typed.shape == {'a': 2, 'b': 2}
print("OK")
''')
    assert "OK" in out


def test_num_cpu_devices_option_before_the_backend_starts():
    # jax's tutorials start with jax.config.update('jax_num_cpu_devices', 8)
    out = run_on_devices(r'''
import yax
yax.config.update("jax_num_cpu_devices", 3)
assert len(yax.devices()) == 3, yax.devices()
yax.config.update("jax_num_cpu_devices", 3)  # the value in use: accepted
try:
    yax.config.update("jax_num_cpu_devices", 2)
    raise SystemExit("a late change was accepted")
except RuntimeError as e:
    assert "before yax starts its backend" in str(e), e
assert yax.config.num_cpu_devices == 3
print("OK")
''', n=1)
    assert "OK" in out
