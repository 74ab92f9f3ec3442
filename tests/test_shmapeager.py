"""Eager shard_map (a child with 8 CPU devices), against jax.shard_map: what `print` shows of
every device's block, `typeof` with varying mesh axes ({V:i}), lax.pcast, in_specs inferred
from Explicit-axis types, jax's error texts, eager == jit == jax, and grad/vmap of it."""

from __future__ import annotations

from tests.multidevice import run_on_devices

CHILD = r'''
import contextlib, io, re
import numpy as np, jax, jax.numpy as jjnp
import yax, yax.numpy as jnp
from yax import lax
from yax.sharding import P, AxisType

def close(a, b, what, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol, err_msg=what)

def printed(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args)
    return buf.getvalue(), out

def same_print(make, L_y, L_j, args, what):
    """make(L) builds the body from a namespace with lax/typeof; runs both eagerly."""
    sy, oy = printed(make(L_y), *args)
    sj, oj = printed(make(L_j), *args)
    assert sy == sj, f"{what}:\n--- yax\n{sy}\n--- jax\n{sj}"
    jax.tree.map(lambda a, b: close(a, b, what), oy, oj)
    return oy

class NS:
    def __init__(self, **kw): self.__dict__.update(kw)

devs = np.array(jax.devices())
Y1 = NS(lax=lax, typeof=yax.typeof, mesh=yax.sharding.Mesh(devs[:4], ("i",)), P=P,
        shard_map=yax.shard_map, jnp=jnp)
J1 = NS(lax=jax.lax, typeof=jax.typeof, mesh=jax.sharding.Mesh(devs[:4], ("i",)), P=jax.P,
        shard_map=jax.shard_map, jnp=jjnp)
Y2 = NS(**{**Y1.__dict__, "mesh": yax.sharding.Mesh(devs[:4].reshape(2, 2), ("i", "j"))})
J2 = NS(**{**J1.__dict__, "mesh": jax.sharding.Mesh(devs[:4].reshape(2, 2), ("i", "j"))})

x16 = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2], np.int32)
xf = np.arange(8.0, dtype=np.float32)

def coll_1d(body, ins="i", outs="i"):
    def make(L):
        def f(b):
            print("BEFORE:\n", b, L.typeof(b))
            y = body(L, b)
            print("AFTER:\n", y, L.typeof(y))
            return y
        return L.shard_map(f, mesh=L.mesh, in_specs=L.P(ins), out_specs=L.P(outs))
    return make

cases = {
    "psum": (coll_1d(lambda L, b: L.lax.psum(b, "i"), outs=None), x16),
    "all_gather": (coll_1d(lambda L, b: L.lax.all_gather(b, "i", tiled=True)), x16),
    "all_gather untiled": (coll_1d(lambda L, b: L.lax.all_gather(b, "i")), x16),
    "psum_scatter": (coll_1d(lambda L, b: L.lax.psum_scatter(b, "i", tiled=True)), x16),
    "ppermute": (coll_1d(lambda L, b: L.lax.ppermute(
        b, "i", [(k, (k + 1) % L.lax.axis_size("i")) for k in range(L.lax.axis_size("i"))])),
        x16),
    "all_to_all": (coll_1d(lambda L, b: L.lax.all_to_all(b, "i", 0, 0, tiled=True)), x16),
    "axis_index": (coll_1d(lambda L, b: b * L.lax.axis_index("i") + 1.5), xf),
    "replicated input": (coll_1d(lambda L, b: 2 * b, ins=None, outs=None), xf),
    "pmax": (coll_1d(lambda L, b: L.lax.pmax(L.jnp.sin(b), "i"), outs=None), xf),
}
for what, (make, arg) in cases.items():
    same_print(make, Y1, J1, (arg,), what)

x44 = np.arange(16, dtype=np.int32).reshape(4, 4)
def make2(axes, outs):
    def make(L):
        def f(b):
            print("BEFORE:\n", b, L.typeof(b))
            y = L.lax.psum(b, axes)
            print("AFTER:\n", y, L.typeof(y))
            return y
        return L.shard_map(f, mesh=L.mesh, in_specs=L.P("i", "j"), out_specs=L.P(*outs))
    return make
same_print(make2("i", (None, "j")), Y2, J2, (x44,), "2-D psum i")
same_print(make2(("i", "j"), (None, None)), Y2, J2, (x44,), "2-D psum i,j")
same_print(make2("j", ("i",)), Y2, J2, (x44,), "2-D psum j")

def make2b(body, outs):
    def make(L):
        def f(b):
            y = body(L, b)
            print(y, L.typeof(y))
            return y
        return L.shard_map(f, mesh=L.mesh, in_specs=L.P("i", "j"), out_specs=L.P(*outs))
    return make
x44f = x44.astype(np.float32)
for what, body, outs in [
        ("ppermute j", lambda L, b: L.lax.ppermute(b, "j", [(0, 1), (1, 0)]), ("i", "j")),
        ("all_gather i", lambda L, b: L.lax.all_gather(b, "i", axis=1, tiled=True), ("j", "i")),
        ("axis_index ij", lambda L, b: b + L.lax.axis_index(("i", "j")), ("i", "j")),
        ("pmean ij", lambda L, b: L.lax.pmean(b * b, ("j", "i")), ()),
        ("psum_scatter j", lambda L, b: L.lax.psum_scatter(b, "j", scatter_dimension=1,
                                                            tiled=True), ("i", "j"))]:
    got = same_print(make2b(body, outs), Y2, J2, (x44f,), what)
    close(printed(yax.jit(make2b(body, outs)(Y2)), x44f)[1], got, what + " jit")

def mat(L):
    def f(b):
        y = L.lax.psum(b, "j")
        assert L.typeof(y).manual_axis_type.varying == {"i"}, L.typeof(y).manual_axis_type
        assert L.typeof(b).manual_axis_type.varying == {"i", "j"}
        return y
    return L.shard_map(f, mesh=L.mesh, in_specs=L.P("i", "j"), out_specs=L.P("i"))
same_print(mat, Y2, J2, (np.arange(8 * 4.0, dtype=np.float32).reshape(8, 4),), "varying set")
print("printing ok")

# eager == jit == jax, and the eager result's sharding
fy = yax.shard_map(lambda b: lax.psum(jnp.sin(b) * 2, "i") + b, mesh=Y1.mesh,
                   in_specs=P("i"), out_specs=P("i"))
fj = jax.shard_map(lambda b: jax.lax.psum(jjnp.sin(b) * 2, "i") + b, mesh=J1.mesh,
                   in_specs=jax.P("i"), out_specs=jax.P("i"))
close(fy(xf), fj(xf), "eager vs jax")
close(yax.jit(fy)(xf), fj(xf), "jit vs jax")
assert fy(xf).sharding.spec == P("i"), fy(xf).sharding
# transformations around it take the staged path
close(yax.grad(lambda v: jnp.sum(fy(v) ** 2))(xf), jax.grad(lambda v: jjnp.sum(fj(v) ** 2))(xf),
      "grad", 1e-4)
close(yax.vmap(fy)(np.stack([xf, xf + 1])), jax.vmap(fj)(np.stack([xf, xf + 1])), "vmap")
# grad inside the eager body: eager == jit (yax's psum transposes as under vmap, so a grad
# through a psum inside the body differs from jax's by the axis size; not compared here)
gy = yax.shard_map(lambda b: yax.grad(lambda v: jnp.sum(jnp.sin(v) * lax.axis_index("i")))(b),
                   mesh=Y1.mesh, in_specs=P("i"), out_specs=P("i"))
gj = jax.shard_map(lambda b: jax.grad(lambda v: jjnp.sum(jjnp.sin(v) * jax.lax.axis_index("i")))(b),
                   mesh=J1.mesh, in_specs=jax.P("i"), out_specs=jax.P("i"))
close(gy(xf), gj(xf), "grad in body")
close(gy(xf), yax.jit(gy)(xf), "grad in body, jit")
# pytrees in and out, a Python scalar out, check_vma=False keeps device 0's block
ty = yax.shard_map(lambda d: {"s": d["a"] + d["b"], "k": 3.0}, mesh=Y1.mesh,
                   in_specs=({"a": P("i"), "b": P()},), out_specs={"s": P("i"), "k": P()})
tj = jax.shard_map(lambda d: {"s": d["a"] + d["b"], "k": 3.0}, mesh=J1.mesh,
                   in_specs=({"a": jax.P("i"), "b": jax.P()},),
                   out_specs={"s": jax.P("i"), "k": jax.P()})
d = {"a": xf, "b": np.float32(2.0)}
jax.tree.map(lambda a, b: close(a, b, "pytree"), ty(d), tj(d))
uy = yax.shard_map(lambda b: b, mesh=Y1.mesh, in_specs=P("i"), out_specs=P(), check_vma=False)
uj = jax.shard_map(lambda b: b, mesh=J1.mesh, in_specs=jax.P("i"), out_specs=jax.P(),
                   check_vma=False)
close(uy(xf), uj(xf), "check_vma=False")
def unchecked(L):  # without the check, types carry no varying axes
    return L.shard_map(lambda b: print(L.typeof(b * 2)) or b, mesh=L.mesh, in_specs=L.P("i"),
                       out_specs=L.P(), check_vma=False)
same_print(unchecked, Y1, J1, (xf,), "check_vma=False typeof")
# collectives inside remat, while_loop and custom_jvp bodies (their batching rules name the axis)
def inner(L):
    ckpt = L.ckpt(lambda w: L.jnp.sin(L.lax.all_gather(w, "i", tiled=True)))
    loop = lambda b: L.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + L.lax.psum(
        c[1], "i")), (0, b))[1]
    return L.shard_map(lambda b: (ckpt(b).sum() * b, loop(b)), mesh=L.mesh, in_specs=L.P("i"),
                       out_specs=L.P("i"))
Y1.ckpt, J1.ckpt = yax.checkpoint, jax.checkpoint
jax.tree.map(lambda a, b: close(a, b, "remat/while inside"), inner(Y1)(xf), inner(J1)(xf))
# the staged body prints with jax's types ({V:i}) and jax's pvary casts (literals included)
def staged(L):
    return L.shard_map(lambda x, y: (x * y + 1.0, L.jnp.sin(y) * 2.0), mesh=L.mesh,
                       in_specs=(L.P("i"), L.P()), out_specs=(L.P("i"), L.P()))
jy = str(yax.make_jaxpr(staged(Y1))(xf, xf[:2]))
jj = str(jax.make_jaxpr(staged(J1))(xf, xf[:2]))
assert jy == jj, f"--- yax\n{jy}\n--- jax\n{jj}"
close(yax.jit(staged(Y1))(xf, xf[:2])[0], staged(J1)(xf, xf[:2])[0], "staged with pvary")
print("values ok")

# pcast
def pc(L):
    def f(x, y):
        def body(carry, _):
            c1, c2 = carry
            return (c2, c1), ()
        y = L.lax.pcast(y, "i", to="varying")
        print(L.typeof(y))
        (a, b), _ = L.lax.scan(body, (x, y), (), length=3)
        return a, b
    return L.shard_map(f, mesh=L.mesh, in_specs=(L.P("i"), L.P()), out_specs=L.P("i"))
same_print(pc, Y1, J1, (xf, np.arange(2.0, dtype=np.float32)), "pcast scan")
close(printed(yax.jit(pc(Y1)), xf, np.arange(2.0, dtype=np.float32))[1][1],
      pc(J1)(xf, np.arange(2.0, dtype=np.float32))[1], "pcast jit")
def pcg(L):  # pvary's transpose is a psum over the axis
    f = L.shard_map(lambda w, b: L.lax.pcast(w, "i", to="varying") * b, mesh=L.mesh,
                    in_specs=(L.P(), L.P("i")), out_specs=L.P("i"))
    return lambda w, b: (f(w, b) ** 2).sum()
close(yax.grad(pcg(Y1))(np.float32(1.5), xf), jax.grad(pcg(J1))(np.float32(1.5), xf),
      "grad through pcast", 1e-4)
for bad in (lambda L: L.lax.pcast(L.lax.pcast(1.0 * L.lax.axis_index("i"), "i", to="varying"),
                                  "i", to="varying"),
            lambda L: L.lax.pcast(L.jnp.ones(2), "i", to="nowhere")):
    msgs = []
    for L in (Y1, J1):
        try:
            L.shard_map(lambda b: bad(L) + b, mesh=L.mesh, in_specs=L.P("i"),
                        out_specs=L.P("i"))(xf)
            msgs.append(None)
        except ValueError as e:
            msgs.append(str(e).split(":")[0])
    assert msgs[0] is not None and msgs[0] == msgs[1], msgs
print("pcast ok")

# jax's errors: an output replicated by its spec but varying (eager and under jit)
def err(fn, *args):
    try:
        fn(*args)
    except Exception as e:
        return type(e).__mro__, str(e)
    raise SystemExit(f"no error from {fn}")
ey = err(yax.shard_map(lambda b: b, mesh=Y1.mesh, in_specs=P("i"), out_specs=P()), xf)
ej = err(jax.shard_map(lambda b: b, mesh=J1.mesh, in_specs=jax.P("i"), out_specs=jax.P()), xf)
assert ValueError in ey[0] and ey[1] == ej[1], (ey[1], ej[1])
def two(L):
    return L.shard_map(lambda b: (b, b.sum()), mesh=L.mesh, in_specs=L.P("i", "j"),
                       out_specs=(L.P("i"), L.P()))
ey, ej = err(two(Y2), x44), err(two(J2), x44)
assert ey[1] == ej[1], (ey[1], ej[1])
sy = err(yax.jit(yax.shard_map(lambda b: b * 2, mesh=Y1.mesh, in_specs=P("i"),
                               out_specs=P())), xf)[1]
assert "out_specs is P() which implies that the corresponding output value is replicated " \
       "across mesh axis 'i'" in sy and "the function '<lambda>'" in sy, sy
def swap(L):  # a scan whose carry changes its varying axes: jax's TypeError
    def f(x, y):
        def body(carry, _):
            c1, c2 = carry
            return (c2, c1), ()
        return L.lax.scan(body, (x, y), (), length=2)[0]
    return L.shard_map(f, mesh=L.mesh, in_specs=(L.P("i"), L.P()), out_specs=L.P("i"))
def grows(L):
    def g(x):
        c, _ = L.lax.scan(lambda c, _: (c + L.lax.axis_index("i") + x, ()), L.jnp.zeros(1),
                          (), length=2)
        return c
    return L.shard_map(g, mesh=L.mesh, in_specs=L.P(("i", "j")), out_specs=L.P(("i", "j")))
for what, make, L_y, L_j, args in [("swap", swap, Y1, J1, (xf, np.arange(2.0, dtype=np.float32))),
                                   ("grows", grows, Y2, J2, (np.arange(4.0, dtype=np.float32),))]:
    ey, ej = err(make(L_y), *args), err(make(L_j), *args)
    # jax lists the axes to pcast in a set's (hash) order; yax in mesh order
    unordered = lambda m: re.sub(r"pcast\(\.\.\., \([^)]*\)", "pcast(..., AXES", m)
    assert TypeError in ey[0] and unordered(ey[1]) == unordered(ej[1]), (what, ey[1], ej[1])
    assert what != "grows" or "('i', 'j')" in ey[1], ey[1]
print("errors ok")

# in_specs omitted: read from the arguments' types on a mesh of Explicit axes
ym = yax.make_mesh((4,), ("b",), axis_types=(AxisType.Explicit,))
jm = jax.make_mesh((4,), ("b",), axis_types=(jax.sharding.AxisType.Explicit,))
ya = yax.device_put(xf, yax.sharding.NamedSharding(ym, P("b")))
ja = jax.device_put(xf, jax.sharding.NamedSharding(jm, jax.P("b")))
iy = yax.shard_map(lambda a, w: lax.psum(jnp.sum(a * w), "b"), mesh=ym, out_specs=P())
ij = jax.shard_map(lambda a, w: jax.lax.psum(jjnp.sum(a * w), "b"), mesh=jm, out_specs=jax.P())
typed = yax.typeof(ya).sharding.spec  # P('b') once device_put keeps the Explicit axis type
close(iy(ya, np.float32(3)), yax.shard_map(lambda a, w: lax.psum(jnp.sum(a * w), "b"), mesh=ym,
                                          in_specs=(typed, P()), out_specs=P())(ya, 3.0),
      "inferred in_specs are the typed ones")
if tuple(typed) == ("b",):
    close(iy(ya, np.float32(3)), ij(ja, np.float32(3)), "inferred in_specs vs jax")
ey = err(yax.shard_map(lambda a: a, mesh=ym, in_specs=P("b"), out_specs=P("b")), xf)
ej = err(jax.shard_map(lambda a: a, mesh=jm, in_specs=jax.P("b"), out_specs=jax.P("b")), xf)
assert ey[1] == ej[1] and ValueError in ey[0], (ey[1], ej[1])
auto = yax.sharding.Mesh(devs[:4], ("b",))
ey = err(yax.shard_map(lambda a: a, mesh=auto, out_specs=P()), xf)
assert TypeError in ey[0] and "in_specs argument must be a pytree" in ey[1], ey
print("inference ok")

# a collective over one axis of a 2-D mesh says nothing of the other axis: the parallel
# tutorial's matmul (psum_scatter over X; the result stays the same along Y), eager and staged
def scattered(L, mesh, P_):
    x = L.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                     L.sharding.NamedSharding(mesh, P_(None, "X")))
    y = L.device_put(np.arange(64.0, dtype=np.float32).reshape(4, 16),
                     L.sharding.NamedSharding(mesh, P_("X", None)))
    with L.set_mesh(mesh):
        f = L.shard_map(lambda a, b: L.lax.psum_scatter(L.numpy.dot(a, b), "X", tiled=True),
                        out_specs=P_("X", None))
        z = f(x, y)
        return z, str(L.typeof(z)), str(L.make_jaxpr(f)(x, y)).splitlines()[0:2]
zy, ty, jy = scattered(yax, yax.make_mesh((4, 2), ("X", "Y")), P)
zj, tj, jj = scattered(jax, jax.make_mesh((4, 2), ("X", "Y")), jax.P)
close(zy, zj, "psum_scatter over X on a 4x2 mesh")
assert ty == tj == "float32[8@X,16]", (ty, tj)
assert jy == jj, (jy, jj)  # the staged shard_map's result is typed f32[8@X,16] too
print("two axes ok")
'''


def test_eager_shard_map_against_jax_on_8_devices():
    out = run_on_devices(CHILD, n=8, timeout=300)
    for line in ("printing ok", "values ok", "pcast ok", "errors ok", "inference ok",
                 "two axes ok"):
        assert line in out, out
