"""Second-order table, part 3: collectives (per lane of a vmapped axis named "i"), control flow,
calls, custom derivatives, callbacks and the other primitives that hold or mark a program."""

from __future__ import annotations

import numpy as np

import yax
import yax.numpy as jnp
from tests.primitive_cases import Case, X, Y, pts, smooth
from yax import export as yexport
from yax import lax
from yax.experimental import checkify
from yax.interpreters.ad_util import add_any_p, zeros_like_p
from yax.sharding import NamedSharding, P

sin, cos = jnp.sin, jnp.cos
LANES = pts(-1.3, 1.5, (4, 3))          # 4 lanes of a (3,) value
LANES_4 = pts(-1.3, 1.5, (4, 4))        # 4 lanes of a (4,) value (one block per lane)
CYCLE = [(j, (j + 1) % 4) for j in range(4)]


def named(fn, *args, **kw):
    return smooth(fn, *args, named=True, **kw)


COLLECTIVES = {
    "psum": named(lambda x: x * lax.psum(sin(x), "i"), LANES),
    "pmax": named(lambda x: x * lax.pmax(x * x, "i"), LANES),
    "pmin": named(lambda x: x * lax.pmin(sin(x), "i"), LANES),
    "all_gather": named(lambda x: x * sin(lax.all_gather(x, "i")).sum(0), LANES),
    "all_gather:tiled": named(lambda x: sin(lax.all_gather(x * x, "i", tiled=True)), LANES),
    "ppermute": named(lambda x: x * lax.ppermute(sin(x), "i", CYCLE), LANES),
    "psum_scatter": named(lambda x: x * lax.psum_scatter(sin(x), "i", scatter_dimension=0,
                                                         tiled=True), LANES_4),
    "all_to_all": named(lambda x: x * sin(lax.all_to_all(x, "i", 0, 0, tiled=True)), LANES_4),
    "pvary": named(lambda x: x * lax.pcast(lax.psum(sin(x), "i"), "i", to="varying"), LANES),
}

_EXPORTED: dict = {}


def _exported_call(x, y):
    """`sin(x) * y` through `yax.export` (exported once per argument type, as a user would)."""
    key = (x.shape, x.dtype, y.shape, y.dtype)
    if key not in _EXPORTED:
        structs = [yax.ShapeDtypeStruct(v.shape, v.dtype) for v in (x, y)]
        _EXPORTED[key] = yexport.export(yax.jit(lambda a, b: sin(a) * b))(*structs)
    return _EXPORTED[key].call(x, y)


FORWARD_EXPORTED = dict.fromkeys(
    ("jvp_jvp", "jvp_vjp", "linearize", "vmap"),
    "forward mode of an exported call is refused, as in jax.export: its derivative is a VJP")


REVERSE_WHILE = "reverse mode of while_loop is an error, as in jax (max_steps= is the scan form)"
WHILE_SKIP = {"jvp_vjp": REVERSE_WHILE, "vjp_vjp": REVERSE_WHILE, "linearize": REVERSE_WHILE}


def _while(x):
    def body(c):
        i, y = c
        return i + 1, sin(y) * x + y
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def _bounded_while(x):
    def body(c):
        i, y = c
        return i + 1, sin(y) * x + y
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x), max_steps=5)[1]


def _scan(c0, xs):
    def step(c, x):
        return sin(c) * x + c, c * x
    return lax.scan(step, c0, xs)


def _while_batched_predicate(x):
    # the trip count depends on x: under vmap the predicate is batched
    return lax.while_loop(lambda y: jnp.sum(y * y) < 20.0, lambda y: y * 1.5 + sin(y), x)


def _fori(x):
    return lax.fori_loop(0, 3, lambda i, y: sin(y) * x + y * i, x)


def _scan_reverse(c0, xs):
    return lax.scan(lambda c, x: (c * cos(x) + x, sin(c) * x), c0, xs, reverse=True)


def _switch(x):
    index = lax.convert_element_type(jnp.sum(x) > 0, np.int32) + 1
    return lax.switch(index, [cos, lambda v: v * v, lambda v: sin(v) * v], x)


@yax.custom_vjp
def _cv_scan(c, x):
    return c * sin(x)


_cv_scan.defvjp(lambda c, x: (c * sin(x), (c, x)),
                lambda res, ct: (sin(res[1]) * ct, res[0] * cos(res[1]) * ct))


def _custom_vjp_in_scan(c0, xs):
    return lax.scan(lambda c, x: (_cv_scan(c, x) + c, c * x), c0, xs)


def _cond(x):
    return lax.cond(jnp.sum(x) > 0, lambda v: sin(v) * v, lambda v: cos(v), x)


@yax.custom_jvp
def _cj(x):
    return sin(x) * x


@_cj.defjvp
def _cj_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return _cj(x), (cos(x) * x + sin(x)) * t


@yax.custom_batching.custom_vmap
def _cvm(x):
    return sin(x) * x


@_cvm.def_vmap
def _cvm_rule(axis_size, in_batched, x):
    # the batched value computed as a whole (a real rule would call a batched kernel)
    return sin(x) * x, in_batched[0]


@yax.custom_vjp
def _cv(x, y):
    return sin(x) * y


def _cv_fwd(x, y):
    return sin(x) * y, (x, y)


def _cv_bwd(res, ct):
    x, y = res
    return cos(x) * y * ct, sin(x) * ct


_cv.defvjp(_cv_fwd, _cv_bwd)

# Auto (Explicit axes would ask the unplaced inputs to be typed as in_specs say)
_MESH = yax.make_mesh((1,), ("d",), axis_types=(yax.sharding.AxisType.Auto,))


def _shard_map(x):
    body = lambda b: sin(b) * lax.psum(jnp.sum(b * b), "d")  # noqa: E731
    return yax.shard_map(body, mesh=_MESH, in_specs=P("d"), out_specs=P("d"))(x)


def _psum_invariant(x):
    # psum of an invariant value in a checked body: psum_invariant (pvary first); P() in and out
    body = lambda b: lax.psum(sin(b) * b, "d")  # noqa: E731
    return x * yax.shard_map(body, mesh=_MESH, in_specs=P(), out_specs=P())(x)


def _axis_index(x):
    body = lambda b: sin(b * (lax.axis_index("d") + 1.5))  # noqa: E731
    return yax.shard_map(body, mesh=_MESH, in_specs=P("d"), out_specs=P("d"))(x)


def _callback(x):
    yax.debug.callback(lambda *a: None, x)
    return sin(x) * x


def _check(x):
    checkify.check(jnp.all(x > -10.0), "x is too small")
    return sin(x) * x


def _linear_solve(x, y):
    a = jnp.diag(2.0 + sin(x)) + 0.3 * jnp.outer(y, cos(x))       # not symmetric
    solve = lambda mv, b: jnp.linalg.solve(a, b)  # noqa: E731
    transpose_solve = lambda vm, b: jnp.linalg.solve(a.T, b)  # noqa: E731
    return lax.custom_linear_solve(lambda v: a @ v, sin(y) * x, solve, transpose_solve)


def _ref_local(x, y):
    # a Ref made, read, written and added to inside the function (`+=` is a get and a swap;
    # addupdate adds in place): the value flows through
    # new_ref, get, swap, addupdate and freeze, and the derivatives through all of them
    r = yax.new_ref(sin(x))
    r[...] = r[...] * y
    r[...] += cos(x) * y
    yax.ref.addupdate(r, ..., x * y)
    return yax.freeze(r) * x


CALLS = {
    "new_ref": smooth(_ref_local, X, Y),
    "get": smooth(lambda x, y: _ref_local(x * y, y), X, Y),
    "swap": smooth(lambda x, y: _ref_local(sin(x), y * y), X, Y),
    "addupdate": smooth(lambda x, y: _ref_local(x, cos(y)), X, Y),
    "freeze": smooth(lambda x, y: _ref_local(y, x), X, Y),
    "while": smooth(_while, X, skip=WHILE_SKIP),
    "scan": smooth(_scan, X[0], Y),
    "scan:bounded_while": smooth(_bounded_while, X),
    "while:batched_predicate": smooth(_while_batched_predicate, X * 0.5, skip=WHILE_SKIP),
    "scan:fori_loop": smooth(_fori, X),
    "scan:reverse": smooth(_scan_reverse, X[0], Y),
    "scan:custom_vjp_inside": smooth(_custom_vjp_in_scan, X[0], Y),
    "cond": smooth(_cond, X),
    "cond:switch": smooth(_switch, X),
    "cond:false_branch": smooth(_cond, -Y),
    "call_exported": smooth(_exported_call, X, Y, skip=FORWARD_EXPORTED),
    "pjit": smooth(lambda x, y: yax.jit(lambda a, b: sin(a) * b)(x, y * y), X, Y),
    "remat": smooth(yax.checkpoint(lambda x, y: sin(sin(x) * y)), X, Y),
    "remat:dots_saveable": smooth(yax.checkpoint(
        lambda a, b: sin(jnp.dot(sin(a), b)), policy=yax.checkpoint_policies.dots_saveable),
        pts(-1, 1, (2, 3)), pts(-1, 1, (3, 2))),
    "pjit:grad_inside": smooth(lambda x: yax.jit(yax.grad(lambda v: jnp.sum(sin(v) * v)))(x), X),
    "name": smooth(yax.checkpoint(
        lambda x: sin(yax.ad_checkpoint.checkpoint_name(sin(x) * x, "h")),
        policy=yax.checkpoint_policies.save_only_these_names("h")), X),
    "custom_jvp_call": smooth(lambda x: sin(_cj(x)), X),
    "custom_vjp_call": smooth(lambda x, y: sin(_cv(x, y)), X, Y),
    # derivatives through the function as written; vmap through the rule
    "custom_vmap_call": smooth(lambda x: sin(_cvm(x)), X),
    # the linear map that `bwd` transposes, staged under reverse mode
    "custom_vjp_lin": smooth(lambda x, y: _cv(x * x, y), X, Y),
    "shard_map": smooth(_shard_map, X),
    "psum_invariant": smooth(_psum_invariant, X),
    # under vmap the axis index is a constant of the batching; shard_map binds the primitive
    "axis_index": smooth(_axis_index, X),
    "callback": smooth(_callback, X),
    # pure_callback has no derivative (as in jax): a clear error naming it
    "callback:pure": Case(lambda x: yax.pure_callback(np.sin, x, x), (X,), kind="no_rule"),
    "check": smooth(_check, X),
    "sharding_constraint": smooth(lambda x: sin(lax.with_sharding_constraint(
        x * x, NamedSharding(_MESH, P()))), X),
    "optimization_barrier": smooth(
        lambda x, y: (lambda a, b: sin(a) * b)(*lax.optimization_barrier((x, y * y))), X, Y),
    "add_any": smooth(lambda x, y: sin(add_any_p.bind(x * y, sin(y))), X, Y),
    "custom_linear_solve": smooth(_linear_solve, X, Y),
    "zeros": smooth(lambda x: sin(x) + zeros_like_p.bind(shape=(3,), dtype=np.float64), X),
}
