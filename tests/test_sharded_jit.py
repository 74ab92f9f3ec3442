"""Sharded jit, with_sharding_constraint and eager ops on sharded Arrays, on 8 CPU devices
(in a child Python: see tests/multidevice.py), compared with unsharded yax and with jax."""

from __future__ import annotations

from tests.multidevice import run_on_devices

_CHILD = r'''
import numpy as np
import jax, jax.numpy as jjnp
import yax, yax.numpy as jnp
from yax import lax
from yax.sharding import Mesh, NamedSharding, P, ShardingError, make_mesh
from yax.core.avals import ShapedArray
from yax.runtime.array import Array
from yax.runtime.transfer import device_put_sharded
from yax.runtime.sharding_bridge import sharding_of_array

def put(x, s):
    x = np.asarray(x)
    return Array(device_put_sharded(x, s), ShapedArray(x.shape, x.dtype))

def spec_of(arr):
    s = sharding_of_array(arr)
    return tuple(s.spec) if hasattr(s, "spec") else s

def jspec(arr):
    return tuple(arr.sharding.spec) if hasattr(arr.sharding, "spec") else arr.sharding

def close(a, b, tol=1e-4):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)

# Auto, as jmesh (jax's Mesh(...) default; make_mesh's axes are Explicit, test_explicit.py)
mesh = make_mesh((8,), ("x",), (yax.sharding.AxisType.Auto,))
jmesh = jax.sharding.Mesh(np.array(jax.devices()), ("x",))
rs = np.random.RandomState(0)
a = rs.randn(16, 4).astype(np.float32)
w = rs.randn(4, 3).astype(np.float32)
S = NamedSharding(mesh, P("x"))
R = NamedSharding(mesh, P())
JS = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x"))
JR = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec())
xs = put(a, S)

# --- eager ops on a sharded Array: sharded programs, right values -------------------------------
for name, r, ref in [("add", xs + 1, a + 1), ("sum", jnp.sum(xs), a.sum()),
                     ("matmul", xs @ w, a @ w), ("sin", jnp.sin(xs), np.sin(a))]:
    assert len(r._buf.sharding.device_set) == 8, (name, r._buf.sharding)
    close(r, ref)
assert spec_of(xs + 1) == ("x",) and spec_of(jnp.sin(xs)) == ("x",)
assert spec_of(xs @ w) == ("x",), spec_of(xs @ w)
mixed = xs * jnp.full((16, 4), 2.0)  # a single-device operand is replicated onto the mesh
assert spec_of(mixed) == ("x",); close(mixed, a * 2)

# --- jit: data-parallel matmul, shardings as jax chooses ----------------------------------------
f = lambda x, w: jnp.tanh(x @ w)
jf = lambda x, w: jjnp.tanh(x @ w)
yo = yax.jit(f, in_shardings=(S, R))(a, w)
jo = jax.jit(jf, in_shardings=(JS, JR))(a, w)
close(yo, jo); close(yo, yax.jit(f)(a, w))
assert spec_of(yo) == jspec(jo) == ("x",), (spec_of(yo), jspec(jo))
# committed argument sharding propagates without in_shardings
yo2 = yax.jit(f)(xs, w)
assert spec_of(yo2) == ("x",); close(yo2, jo)
# out_shardings wins; a reduction gives a replicated output
yo3 = yax.jit(f, out_shardings=R)(xs, w)
assert spec_of(yo3) == (), spec_of(yo3); close(yo3, jo)
ys = yax.jit(lambda x: x.sum())(xs)
assert spec_of(ys) == jspec(jax.jit(lambda x: x.sum())(jax.device_put(a, JS)))
# a committed argument placed differently is resharded; a bare P under `with mesh:`
with mesh:
    g = yax.jit(lambda x: x * 2, in_shardings=P(None, "x"), out_shardings=P(None, "x"))
    big = rs.randn(16, 8).astype(np.float32)
    out = g(put(big, S))
    assert spec_of(out) == (None, "x"), spec_of(out); close(out, big * 2)
# lowering text, compile, input/output shardings
lo = yax.jit(f, in_shardings=(S, None)).lower(a, w)
txt = lo.as_text()
assert 'sdy.mesh @mesh = <["x"=8]>' in txt and '#sdy.sharding<@mesh, [{"x"}, {}]>' in txt, txt
c = lo.compile()
assert c.input_shardings[0] == S, c.input_shardings
assert c.output_shardings.spec == P("x"), c.output_shardings
close(c(a, w), jo)
# pytrees of shardings
tree_f = yax.jit(lambda d: {"s": d["a"] @ d["w"]}, in_shardings=({"a": S, "w": R},),
                 out_shardings={"s": S})
close(tree_f({"a": a, "w": w})["s"], a @ w)

# --- errors -------------------------------------------------------------------------------------
try:
    yax.jit(lambda x: x, in_shardings=S)(np.ones((12, 4), np.float32))
    raise AssertionError("no error")
except ShardingError as e:
    msg = str(e)
    assert "(12, 4)" in msg and "'x'" in msg and "Mesh" in msg, msg
m4 = Mesh(np.array(jax.devices()[:4]), ("y",))
try:
    yax.jit(lambda x, y: x + y)(xs, put(a, NamedSharding(m4, P("y"))))
    raise AssertionError("no error")
except ShardingError as e:
    msg = str(e)
    assert "[1]" in msg and "(16, 4)" in msg and "devices" in msg, msg

# --- with_sharding_constraint -------------------------------------------------------------------
def h(x):
    y = lax.with_sharding_constraint(x * 3, NamedSharding(mesh, P(None, "x")))
    return jnp.sin(y)
big = rs.randn(8, 16).astype(np.float32)
yh = yax.jit(h)(big)
jh = jax.jit(lambda x: jjnp.sin(jax.lax.with_sharding_constraint(
    x * 3, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(None, "x")))))(big)
close(yh, jh); assert spec_of(yh) == jspec(jh), (spec_of(yh), jspec(jh))
assert "sdy.sharding_constraint" in yax.jit(h).lower(big).as_text()
close(yax.grad(lambda x: h(x).sum())(big), jax.grad(lambda x: jjnp.sin(3 * x).sum())(big))
close(yax.jit(yax.vmap(h))(np.stack([big, big])), np.sin(3 * np.stack([big, big])))
e = lax.with_sharding_constraint(jnp.asarray(a), S)
assert spec_of(e) == ("x",); close(e, a)

# --- transformations inside a sharded jit, against unsharded yax and jax ------------------------
def loss(p, x):
    return jnp.mean(jnp.tanh(x @ p) ** 2)
def jloss(p, x):
    return jjnp.mean(jjnp.tanh(x @ p) ** 2)
gy = yax.jit(yax.grad(loss), in_shardings=(R, S))(w, a)
close(gy, jax.jit(jax.grad(jloss), in_shardings=(JR, JS))(w, a)); close(gy, yax.grad(loss)(w, a))
vy = yax.jit(yax.vmap(lambda r: jnp.sin(r) * 2), in_shardings=S)(a)
assert spec_of(vy) == ("x",); close(vy, np.sin(a) * 2)
def body(c, r):
    c = c + jnp.sum(r)
    return c, c * r
sy = yax.jit(lambda x: lax.scan(body, 0.0, x), in_shardings=S)(a)
sj = jax.lax.scan(lambda c, r: (c + jjnp.sum(r), (c + jjnp.sum(r)) * r), 0.0, a)
close(sy[0], sj[0]); close(sy[1], sj[1])
cy = yax.jit(lambda x: lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), in_shardings=S)(a)
close(cy, np.sin(a) if a.sum() > 0 else np.cos(a))
ck = yax.jit(yax.grad(lambda p, x: yax.checkpoint(loss)(p, x)), in_shardings=(R, S))(w, a)
close(ck, gy)
@yax.custom_vjp
def clip_grad(x):
    return x
clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -0.01, 0.01),))
cv = yax.jit(yax.grad(lambda x: (clip_grad(x) * x).sum()), in_shardings=S)(a)
close(cv, np.clip(a, -0.01, 0.01) + a)
# a jitted function applied eagerly under grad/vmap on sharded inputs (the pjit primitive)
inner = yax.jit(lambda x: jnp.sin(x) * 2)
gi = yax.grad(lambda x: inner(x).sum())(xs)
assert spec_of(gi) == ("x",); close(gi, 2 * np.cos(a))
close(yax.vmap(inner)(xs), 2 * np.sin(a))
close(yax.grad(lambda x: yax.jit(h)(x).sum())(big), 3 * np.cos(3 * big))
print("OK")
'''


def test_sharded_jit_on_8_devices():
    out = run_on_devices(_CHILD, n=8, timeout=240)
    assert "OK" in out
