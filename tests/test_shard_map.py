"""shard_map on 8 CPU devices (a child process): every collective against jax.shard_map on a
1-D and a 2-D mesh, eager == jit, grad/jvp/vmap through shard_map against jax and finite
differences, the check_vma error, and pmap (built on vmap + a sharded jit) against jax.pmap."""

from __future__ import annotations

from tests.multidevice import run_on_devices

CHILD = r'''
import numpy as np, jax, jax.numpy as jjnp
import yax, yax.numpy as jnp
from yax import lax
from yax.sharding import P
from yax.test_util import check_grads

def close(a, b, what, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol, err_msg=what)

# Auto axes, as the jax meshes below (on Explicit ones in_specs must match the inputs' types)
AUTO = yax.sharding.AxisType.Auto
mesh = yax.make_mesh((8,), ("i",), axis_types=(AUTO,))
jmesh = jax.sharding.Mesh(np.array(jax.devices()), ("i",))
mesh2 = yax.make_mesh((4, 2), ("x", "y"), axis_types=(AUTO, AUTO))
jmesh2 = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))

def both(fy, fj, y_mesh, j_mesh, ins, outs, *args, check=True):
    a = yax.shard_map(fy, mesh=y_mesh, in_specs=ins, out_specs=outs, check_vma=check)(*args)
    jins = jax.tree.map(lambda s: jax.P(*s), ins, is_leaf=lambda s: isinstance(s, P))
    jouts = jax.tree.map(lambda s: jax.P(*s), outs, is_leaf=lambda s: isinstance(s, P))
    b = jax.shard_map(fj, mesh=j_mesh, in_specs=jins, out_specs=jouts, check_vma=False)(*args)
    return a, b

x = np.arange(64., dtype=np.float32).reshape(16, 4) / 10
cyc = [(j, (j + 1) % 8) for j in range(8)]
tile = lambda l: (jnp.tile if l is lax else jjnp.tile)
cases = {
    "psum": (lambda l: lambda b: b / l.psum(b.sum(), "i"), P("i")),
    "pmean": (lambda l: lambda b: l.pmean(b, "i"), P()),
    "pmax": (lambda l: lambda b: l.pmax(b, "i"), P()),
    "pmin": (lambda l: lambda b: b - l.pmin(b, "i"), P("i")),
    "all_gather": (lambda l: lambda b: l.all_gather(b, "i"), P()),
    "all_gather_tiled": (lambda l: lambda b: l.all_gather(b, "i", axis=1, tiled=True), P()),
    "axis_index": (lambda l: lambda b: b * l.axis_index("i"), P("i")),
    "ppermute": (lambda l: lambda b: l.ppermute(b, "i", cyc), P("i")),
    "psum_scatter": (lambda l: lambda b: l.psum_scatter(tile(l)(b, (4, 1)), "i",
                                                        scatter_dimension=0, tiled=True), P("i")),
    "all_to_all": (lambda l: lambda b: l.all_to_all(tile(l)(b, (4, 1)), "i", 0, 1, tiled=True),
                   P("i")),
}
for name, (make, out_spec) in cases.items():
    a, b = both(make(lax), make(jax.lax), mesh, jmesh, P("i"), out_spec, x,
                check=name not in ("all_gather", "all_gather_tiled"))
    close(a, b, name)
    f = yax.shard_map(make(lax), mesh=mesh, in_specs=P("i"), out_specs=out_spec, check_vma=False)
    close(yax.jit(f)(x), a, name + " jit")
print("collectives 1-D ok")

# a 2-D mesh: collectives over one axis, both axes, and axis_index of a tuple
y2 = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
two = {
    "psum_y": (lambda l: lambda b: l.psum(b, "y"), P("x")),
    "psum_xy": (lambda l: lambda b: l.psum(b, ("x", "y")), P()),
    "gather_x": (lambda l: lambda b: l.all_gather(b, "x", tiled=True), P(None, "y")),
    "index_xy": (lambda l: lambda b: b + l.axis_index(("x", "y")), P("x", "y")),
    "perm_y": (lambda l: lambda b: l.ppermute(b, "y", [(0, 1), (1, 0)]), P("x", "y")),
}
for name, (make, out_spec) in two.items():
    # as jax's, all_gather's result is typed varying: the replicated out spec needs no check
    a, b = both(make(lax), make(jax.lax), mesh2, jmesh2, P("x", "y"), out_spec, y2,
                check=name != "gather_x")
    close(a, b, name)
print("collectives 2-D ok")

# derivatives through shard_map: against jax, and by finite differences in float64
w = np.full((4, 3), 0.1, np.float32)
def loss_y(v, w):
    f = yax.shard_map(lambda b, w: lax.psum(jnp.sum(jnp.tanh(b @ w) ** 2), "i"), mesh=mesh,
                      in_specs=(P("i"), P()), out_specs=P())
    return f(v, w)
def loss_j(v, w):
    f = jax.shard_map(lambda b, w: jax.lax.psum(jjnp.sum(jjnp.tanh(b @ w) ** 2), "i"),
                      mesh=jmesh, in_specs=(jax.P("i"), jax.P()), out_specs=jax.P())
    return f(v, w)
for g1, g2 in zip(yax.grad(loss_y, argnums=(0, 1))(x, w), jax.grad(loss_j, argnums=(0, 1))(x, w)):
    close(g1, g2, "grad psum", 1e-4)
close(yax.jit(yax.grad(loss_y))(x, w), jax.grad(loss_j)(x, w), "jit grad", 1e-4)
for name in ("psum", "all_gather", "ppermute", "psum_scatter", "all_to_all"):
    make, out_spec = cases[name]
    fy = yax.shard_map(make(lax), mesh=mesh, in_specs=P("i"), out_specs=out_spec, check_vma=False)
    fj = jax.shard_map(make(jax.lax), mesh=jmesh, in_specs=jax.P("i"), out_specs=jax.P(*out_spec),
                       check_vma=False)
    cy = np.cos(np.arange(np.prod(np.shape(fj(x))))).reshape(np.shape(fj(x))).astype(np.float32)
    close(yax.grad(lambda v: jnp.sum(fy(v) * cy))(x), jax.grad(lambda v: jjnp.sum(fj(v) * cy))(x),
          "grad " + name, 1e-4)
    close(yax.jvp(fy, (x,), (x,))[1], jax.jvp(fj, (x,), (x,))[1], "jvp " + name, 1e-4)
    close(yax.vmap(fy)(np.stack([x, 2 * x])), jax.vmap(fj)(np.stack([x, 2 * x])), "vmap " + name)
f2 = lambda l: lambda b: l.ppermute(l.psum(b ** 2, "y"), "x", [(j, (j + 1) % 4) for j in range(4)])
g2 = yax.grad(lambda v: jnp.sum(jnp.sin(yax.shard_map(f2(lax), mesh=mesh2, in_specs=P("x", "y"),
                                                      out_specs=P("x"))(v))))(y2 / 40)
gj2 = jax.grad(lambda v: jjnp.sum(jjnp.sin(jax.shard_map(f2(jax.lax), mesh=jmesh2,
                                                         in_specs=jax.P("x", "y"),
                                                         out_specs=jax.P("x"))(v))))(y2 / 40)
close(g2, gj2, "grad 2-D psum+ppermute", 1e-4)
yax.config.update("enable_x64", True)
x64 = x.astype(np.float64)
check_grads(yax.shard_map(lambda b: jnp.sin(b) * lax.psum(b ** 2, "i"), mesh=mesh,
                          in_specs=P("i"), out_specs=P("i")), (x64,), order=2)
check_grads(yax.shard_map(lambda b: lax.ppermute(b ** 3, "i", cyc) + lax.all_gather(b, "i",
                          tiled=True)[:2], mesh=mesh, in_specs=P("i"), out_specs=P("i"),
                          check_vma=False), (x64,), order=1)
check_grads(yax.shard_map(lambda b: lax.pmax(b, "i") * b, mesh=mesh, in_specs=P("i"),
                          out_specs=P("i")), (x64 + np.arange(16)[:, None] * 0.01,), order=1)
yax.config.update("enable_x64", False)
print("derivatives ok")

# shard_map inside a sharded jit, and the replication check
from yax.sharding import NamedSharding
g = yax.jit(yax.shard_map(lambda b: lax.psum(b, "i"), mesh=mesh, in_specs=P("i"), out_specs=P()),
            in_shardings=NamedSharding(mesh, P("i")))
close(g(x), x.reshape(8, 2, 4).sum(0), "jit in_shardings")
try:
    yax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("i"), out_specs=P())(x)
    raise SystemExit("no check_vma error")
except yax.sharding.ShardingError as e:
    assert "replicated across mesh axis 'i'" in str(e) and "check_vma=False" in str(e), e
try:
    yax.shard_map(lambda b: b, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(np.ones((10, 2)))
    raise SystemExit("no divisibility error")
except yax.sharding.ShardingError as e:
    assert "(10, 2)" in str(e) and "divisible" in str(e), e
print("errors ok")

# pmap: collectives, in_axes, static arguments, grad of and under pmap, against jax.pmap
xs = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
pf = yax.pmap(lambda v: v / lax.psum(v, "i"), axis_name="i")
jpf = jax.pmap(lambda v: v / jax.lax.psum(v, "i"), axis_name="i")
close(pf(xs), jpf(xs), "pmap psum")
assert pf(xs).sharding.spec == P("i"), pf(xs).sharding
close(yax.grad(lambda v: jnp.sum(pf(v) ** 3))(xs), jax.grad(lambda v: jjnp.sum(jpf(v) ** 3))(xs),
      "grad of pmap", 1e-4)
pg = yax.pmap(yax.grad(lambda w, v: jnp.sum(jnp.tanh(w * v))), in_axes=(None, 0))
close(pg(1.5, xs), jax.pmap(jax.grad(lambda w, v: jjnp.sum(jjnp.tanh(w * v))),
                            in_axes=(None, 0))(1.5, xs), "pmap of grad", 1e-5)
ps = yax.pmap(lambda v, n: v * n + lax.axis_index("j"), axis_name="j",
              static_broadcasted_argnums=1)
close(ps(xs, 3), xs * 3 + np.arange(8)[:, None], "pmap static")
po = yax.pmap(lambda v: (v.sum(), v), out_axes=(0, 1))
a, b = po(xs)
close(a, xs.sum(1), "pmap out 0"); close(b, xs.T, "pmap out_axes=1")
try:
    yax.pmap(lambda v: v)(np.ones((9, 2), np.float32))
    raise SystemExit("no device-count error")
except yax.errors.YaxError as e:
    assert "only 8 devices" in str(e) and "xla_force_host_platform_device_count" in str(e)
print("pmap ok")
'''


def test_shard_map_collectives_derivatives_and_pmap_on_8_devices():
    out = run_on_devices(CHILD, n=8, timeout=400)
    for line in ("collectives 1-D ok", "collectives 2-D ok", "derivatives ok", "errors ok",
                 "pmap ok"):
        assert line in out, out
