"""The programs of tests/test_shard_map_ad_vs_jax.py: derivatives through shard_map collectives.

Each case is `build(m, cv) -> (fun, args)` for `m` either `jax` or `yax` (same spelling for
both) and `cv` the check_vma flag; the test runs `fun(*args)` eagerly and under `m.jit` with
each module and compares values (or, where jax raises, that yax raises too). Meshes: "i" of 4
devices, and ("i", "j") of 2 x 2. Nothing here imports jax or yax: the parent process only
reads the case names.
"""

from __future__ import annotations

from functools import partial

import numpy as np

W = np.float32(2.0)
X = np.arange(8, dtype=np.float32) / 4 + 0.5             # split over "i": blocks of 2
X2 = np.arange(16, dtype=np.float32).reshape(4, 4) / 8 + 0.25
CYCLE = [(0, 1), (1, 2), (2, 3), (3, 0)]


def _mesh1(m):
    return m.make_mesh((4,), ("i",), axis_types=(m.sharding.AxisType.Auto,))


def _mesh2(m):
    auto = m.sharding.AxisType.Auto
    return m.make_mesh((2, 2), ("i", "j"), axis_types=(auto, auto))


def _sm(m, cv, ins, outs, mesh=None):
    return partial(m.shard_map, mesh=mesh or _mesh1(m), in_specs=ins, out_specs=outs,
                   check_vma=cv)


CASES: dict = {}


def case(name, cvs=(True, False)):
    def register(build):
        for cv in cvs:
            CASES[f"{name}[cv={cv}]"] = partial(build, cv=cv)
        return build
    return register


# --- grad inside the body ----------------------------------------------------------------------

def _grad_in(loss_of, out_spec="P()", wrt=0):
    """The body takes (w invariant, x split over i) and returns grad(loss)(w, x) wrt `wrt`."""
    def build(m, cv):
        P = m.sharding.PartitionSpec
        out = P() if out_spec == "P()" else P("i")

        @_sm(m, cv, (P(), P("i")), out)
        def g(w, x):
            d = m.grad(lambda w, x: loss_of(m, w, x), argnums=wrt)(w, x)
            return d if out_spec == "P()" or wrt == 1 else d[None]
        return g, (W, X)
    return build


def _psum_loss(m, w, x):
    return m.lax.psum(m.numpy.sum((w * x) ** 2), "i")


case("grad_in/psum_loss")(_grad_in(_psum_loss))
case("grad_in/psum_loss_wrt_x")(_grad_in(_psum_loss, "P(i)", wrt=1))
case("grad_in/varying_loss")(_grad_in(lambda m, w, x: m.numpy.sum((w * x) ** 2), "P(i)"))
case("grad_in/pmean_loss")(_grad_in(lambda m, w, x: m.lax.pmean(m.numpy.sum(w * x * x), "i")))
case("grad_in/psum_of_invariant")(_grad_in(lambda m, w, x: m.lax.psum(w * w, "i")))
case("grad_in/invariant_only")(_grad_in(lambda m, w, x: w * w * 3.0))
case("grad_in/pcast_varying")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(m.lax.pcast(w, "i", to="varying") * x), "i")))
case("grad_in/all_gather")(_grad_in(
    lambda m, w, x: m.numpy.sum(m.lax.all_gather(w * x, "i") ** 2), "P(i)"))
case("grad_in/all_gather_tiled_psum")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(m.lax.all_gather(w * x, "i", tiled=True) * x[0]),
                               "i")))
case("grad_in/all_gather_of_invariant")(_grad_in(
    lambda m, w, x: m.numpy.sum(m.lax.all_gather(w * w, "i") * x[0]), "P(i)"))
case("grad_in/ppermute")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(m.lax.ppermute(w * x, "i", CYCLE) * x), "i")))
case("grad_in/ppermute_of_invariant")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(m.lax.ppermute(w * w, "i", CYCLE) * x), "i")))
case("grad_in/psum_scatter")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(
        m.lax.psum_scatter(m.numpy.tile(w * x, 2), "i", tiled=True) ** 2), "i")))
case("grad_in/all_to_all")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(
        m.lax.all_to_all(m.numpy.tile(w * x, (4, 1)), "i", 0, 1, tiled=True) * x[0]), "i")))
case("grad_in/axis_index")(_grad_in(
    lambda m, w, x: m.lax.psum(m.numpy.sum(w * x * m.lax.axis_index("i")), "i")))
case("grad_in/pmax", cvs=(True,))(_grad_in(lambda m, w, x: m.lax.pmax(m.numpy.sum(w * x), "i")))
case("grad_in/pmin", cvs=(True,))(_grad_in(
    lambda m, w, x: m.lax.pmin(m.numpy.sum(w * w * x), "i")))


@case("grad_in/value_and_grad_2d")
def _value_and_grad_2d(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i", "j")), (P(), P()), _mesh2(m))
    def g(w, x):
        loss = lambda w: m.lax.psum(m.numpy.sum(m.numpy.sin(w * x)), ("i", "j"))
        return m.value_and_grad(loss)(w)
    return g, (W, X2)


@case("grad_in/partial_spec_2d")
def _partial_spec_2d(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(None, "j"), P("i", "j")), P(None, "j"), _mesh2(m))
    def g(w, x):  # w varies along j only; the loss is summed over i
        loss = lambda w: m.numpy.sum(m.lax.psum(w * x, "i") ** 2)
        return m.grad(loss)(w)
    return g, (X2[:1].copy(), X2)


@case("grad_in/vjp")
def _vjp_in(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), (P(), P("i")))
    def g(w, x):
        y, pull = m.vjp(lambda w, x: m.lax.psum(m.numpy.sum(w * x * x), "i"), w, x)
        dw, dx = pull(m.numpy.float32(1.5))
        return dw, dx
    return g, (W, X)


@case("grad_in/jvp")
def _jvp_in(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), (P(), P()))
    def g(w, x):
        return m.jvp(lambda w: m.lax.psum(m.numpy.sum(w * x * x), "i"), (w,),
                     (m.numpy.ones_like(w),))
    return g, (W, X)


@case("grad_in/linearize_transpose")
def _linearize_in(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), (P(), P()))
    def g(w, x):
        f = lambda w: m.lax.psum(m.numpy.sum(m.numpy.cos(w * x)), "i")
        y, lin = m.linearize(f, w)
        ct, = m.linear_transpose(lin, w)(m.numpy.float32(1.0))
        return lin(m.numpy.float32(1.0)), ct
    return g, (W, X)


@case("grad_in/second_order")
def _second_in(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P())
    def g(w, x):
        loss = lambda w: m.lax.psum(m.numpy.sum(m.numpy.sin(w * x)), "i")
        return m.grad(m.grad(loss))(w)
    return g, (W, X)


# --- grad outside the shard_map ------------------------------------------------------------------

def _grad_out(body, ins, out, args, argnums=(0, 1), mesh2=False, scalar=True):
    def build(m, cv):
        P = m.sharding.PartitionSpec
        spec = lambda s: P(*s) if isinstance(s, tuple) else P(s) if s else P()
        f = _sm(m, cv, tuple(spec(s) for s in ins), spec(out),
                _mesh2(m) if mesh2 else None)(partial(body, m))
        loss = (lambda *a: m.numpy.sum(f(*a) ** 2)) if not scalar else f
        return m.grad(loss, argnums=argnums), args
    return build


case("grad_out/psum")(_grad_out(lambda m, w, x: m.lax.psum(m.numpy.sum((w * x) ** 2), "i"),
                                (None, "i"), None, (W, X)))
case("grad_out/pmean")(_grad_out(lambda m, w, x: m.lax.pmean(m.numpy.sum(w * x), "i"),
                                 (None, "i"), None, (W, X)))
case("grad_out/psum_of_invariant")(_grad_out(lambda m, w, x: m.lax.psum(w * w, "i"),
                                             (None, "i"), None, (W, X), argnums=0))
case("grad_out/invariant_output")(_grad_out(lambda m, w, x: w * w, (None, "i"), None, (W, X),
                                            argnums=0))
case("grad_out/varying_output")(_grad_out(lambda m, w, x: w * x, (None, "i"), "i", (W, X),
                                          scalar=False))
case("grad_out/unchecked_replicated_out", cvs=(True, False))(_grad_out(
    lambda m, w, x: w * x[0], (None, "i"), None, (W, X)))
case("grad_out/all_gather")(_grad_out(lambda m, w, x: m.lax.all_gather(w * x, "i"),
                                      (None, "i"), "i", (W, X), scalar=False))
case("grad_out/all_gather_tiled")(_grad_out(
    lambda m, w, x: m.lax.all_gather(w * x, "i", tiled=True), (None, "i"), "i", (W, X),
    scalar=False))
case("grad_out/psum_scatter")(_grad_out(
    lambda m, w, x: m.lax.psum_scatter(m.numpy.tile(w * x, 4), "i", tiled=True),
    (None, "i"), "i", (W, X), scalar=False))
case("grad_out/ppermute")(_grad_out(lambda m, w, x: m.lax.ppermute(w * x, "i", CYCLE) * x,
                                    (None, "i"), "i", (W, X), scalar=False))
case("grad_out/all_to_all")(_grad_out(
    lambda m, w, x: m.lax.all_to_all(m.numpy.tile(w * x, (4, 1)), "i", 0, 1, tiled=True),
    (None, "i"), "i", (W, X), scalar=False))
case("grad_out/axis_index")(_grad_out(
    lambda m, w, x: w * x * m.lax.axis_index("i"), (None, "i"), "i", (W, X), scalar=False))
case("grad_out/pmax")(_grad_out(lambda m, w, x: m.lax.pmax(w * x, "i"), (None, "i"), None,
                                (W, X), scalar=False))
case("grad_out/pmin")(_grad_out(lambda m, w, x: m.lax.pmin(w * x, "i"), (None, "i"), None,
                                (W, X), scalar=False))


def _chooser_grads(lo: int):
    """d/d(w, x) of sum(p(w * x)**2), p the pmax (block 3) or pmin (block 0) of w*x blocks."""
    sel = X[lo:lo + 2]
    dx = np.zeros_like(X)
    dx[lo:lo + 2] = 2 * W * W * sel
    return [np.float32(2 * W * np.sum(sel ** 2)), dx]


# jax 0.10 has no derivative of pmax/pmin (NotImplementedError); yax has one (the chosen
# device's tangent, shared among ties): these rows check it against the derivative by hand
EXPECTED = {
    "grad_in/pmax[cv=True]": lambda: [np.float32(X[6] + X[7])],
    "grad_in/pmin[cv=True]": lambda: [np.float32(2 * W * (X[0] + X[1]))],
    "grad_out/pmax[cv=True]": lambda: _chooser_grads(6),
    "grad_out/pmax[cv=False]": lambda: _chooser_grads(6),
    "grad_out/pmin[cv=True]": lambda: _chooser_grads(0),
    "grad_out/pmin[cv=False]": lambda: _chooser_grads(0),
}
case("grad_out/pcast")(_grad_out(lambda m, w, x: m.lax.pcast(w, "i", to="varying") * x,
                                 (None, "i"), "i", (W, X), scalar=False))
case("grad_out/2d_psum_j")(_grad_out(
    lambda m, w, x: m.lax.psum(w * x, "j"), (None, ("i", "j")), ("i",), (W, X2), mesh2=True,
    scalar=False))
case("grad_out/2d_psum_both")(_grad_out(
    lambda m, w, x: m.lax.psum(m.numpy.sum(w * x ** 2), ("i", "j")), (None, ("i", "j")), None,
    (W, X2), mesh2=True))
case("grad_out/2d_partial_in")(_grad_out(
    lambda m, w, x: m.lax.psum(w * x, "i"), ((None, "j"), ("i", "j")), (None, "j"),
    (X2[:1].copy(), X2), mesh2=True, scalar=False))
case("grad_out/2d_replicated_j_out")(_grad_out(
    lambda m, w, x: m.lax.pmean(m.numpy.sin(x) * w, "j"), (None, "i"), "i", (W, X2),
    mesh2=True, scalar=False))


@case("grad_out/second_order")
def _second_out(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), P())(
        lambda w, x: m.lax.psum(m.numpy.sum(m.numpy.sin(w * x)), "i"))
    return m.grad(m.grad(f)), (W, X)


@case("grad_out/jvp")
def _jvp_out(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), (P(), P("i")))(
        lambda w, x: (m.lax.psum(m.numpy.sum(w * x * x), "i"), m.lax.all_gather(w * x, "i",
                                                                                 tiled=True)))
    return (lambda w, x: m.jvp(f, (w, x), (m.numpy.ones_like(w), m.numpy.ones_like(x)))), (W, X)


@case("grad_out/vjp")
def _vjp_out(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), (P(), P("i")))(
        lambda w, x: (m.lax.psum(m.numpy.sum(w * x * x), "i"), w * m.lax.ppermute(x, "i", CYCLE)))

    def run(w, x):
        y, pull = m.vjp(f, w, x)
        return pull((m.numpy.float32(1.0), m.numpy.ones_like(x)))
    return run, (W, X)


@case("grad_out/linearize")
def _linearize_out(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), P())(
        lambda w, x: m.lax.psum(m.numpy.sum(m.numpy.cos(w * x)), "i"))

    def run(w, x):
        y, lin = m.linearize(f, w, x)
        return y, lin(m.numpy.ones_like(w), m.numpy.ones_like(x))
    return run, (W, X)


# --- vmap of a shard_map'd function ------------------------------------------------------------

@case("vmap/grad_of_vmap")
def _grad_vmap(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), P())(
        lambda w, x: m.lax.psum(m.numpy.sum((w * x) ** 2), "i"))
    ws = np.array([1.0, 2.0, 3.0], np.float32)
    return m.grad(lambda ws, x: m.numpy.sum(m.vmap(f, in_axes=(0, None))(ws, x))), (ws, X)


@case("vmap/vmap_of_grad_in")
def _vmap_grad_in(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P())
    def g(w, x):
        return m.grad(lambda w: m.lax.psum(m.numpy.sum((w * x) ** 2), "i"))(w)
    ws = np.array([1.0, 2.0, 3.0], np.float32)
    return m.vmap(g, in_axes=(0, None)), (ws, X)


@case("vmap/vmap_inside_body")
def _vmap_inside(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P())
    def g(ws, x):
        loss = lambda w: m.lax.psum(m.numpy.sum(m.numpy.sin(w * x)), "i")
        return m.vmap(m.grad(loss))(ws)
    return g, (np.array([1.0, 2.0, 3.0], np.float32), X)


# --- jit inside the body --------------------------------------------------------------------

@case("grad_in/jit_inside")
def _jit_inside(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P())
    def g(w, x):
        loss = m.jit(lambda w, x: m.lax.psum(m.numpy.sum((w * x) ** 2), "i"))
        return m.grad(loss)(w, x)
    return g, (W, X)


# --- errors jax raises ------------------------------------------------------------------------

@case("error/varying_out_replicated_spec", cvs=(True,))
def _err_out_spec(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), P())(lambda w, x: w * x)
    return m.grad(lambda w, x: m.numpy.sum(f(w, x))), (W, X)


@case("error/grad_in_varying_loss_replicated_out", cvs=(True,))
def _err_grad_in(m, cv):
    P = m.sharding.PartitionSpec
    # the cotangent of x is varying: a P() out spec cannot hold it
    f = _sm(m, cv, (P(), P("i")), P())(lambda w, x: m.grad(lambda x: m.numpy.sum(w * x))(x))
    return f, (W, X)


@case("error/cond_branches_vary_otherwise", cvs=(True,))
def _err_cond(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P())
    def g(w, x):  # one branch varies along i, the other does not: jax's type error
        loss = lambda w: m.lax.psum(m.lax.cond(x[0] > 1, lambda: w * x[1], lambda: w * w), "i")
        return m.grad(loss)(w)
    return g, (W, X)


@case("grad_in/scan_varying_carry")
def _scan_in(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P())
    def g(w, x):
        def loss(w):
            c0 = m.lax.pcast(w, "i", to="varying") if cv else w
            c, _ = m.lax.scan(lambda c, xi: (c * w + xi, None), c0, x)
            return m.lax.psum(c, "i")
        return m.grad(loss)(w)
    return g, (W, X)


@case("grad_in/jit_reused_for_other_types")
def _jit_reused(m, cv):
    P = m.sharding.PartitionSpec
    mul = m.jit(lambda a, b: a * b)

    @_sm(m, cv, (P(), P("i")), P())
    def g(w, x):
        first = mul(w, m.numpy.stack([w, w]))  # traced with both operands invariant
        loss = lambda w: m.lax.psum(m.numpy.sum(mul(w, x)), "i")  # then with x varying
        return m.grad(loss)(w) + 0.0 * m.numpy.sum(first)
    return g, (W, X)


def _while(pcast: bool):
    def build(m, cv):
        P = m.sharding.PartitionSpec

        @_sm(m, cv, (P(), P("i")), P())
        def g(w, x):
            def loss(w):
                c0 = m.lax.pcast(w, "i", to="varying") if pcast else w
                c = m.lax.fori_loop(0, 3, lambda k, c: c * (x[0] + 2.0) + w, c0)
                return m.lax.psum(c, "i")
            return m.grad(loss)(w)
        return g, (W, X)
    return build


case("grad_in/fori_loop_varying_carry", cvs=(True,))(_while(True))
case("error/fori_loop_carry_changes_type", cvs=(True,))(_while(False))


@case("error/while_loop_carry_changes_type", cvs=(True,))
def _err_while(m, cv):
    P = m.sharding.PartitionSpec

    @_sm(m, cv, (P(), P("i")), P("i"))
    def g(w, x):
        return m.lax.while_loop(lambda c: c < 100, lambda c: c * (x[0] + 2.0) + 1, w)[None]
    return g, (W, X)


@case("error/unknown_axis")
def _err_axis(m, cv):
    P = m.sharding.PartitionSpec
    f = _sm(m, cv, (P(), P("i")), P())(lambda w, x: m.lax.psum(m.numpy.sum(w * x), "k"))
    return m.grad(f), (W, X)


# --- programs whose make_jaxpr shows the casts and sums (pvary, psum_invariant) --------------

def _forward(body, ins=(None, "i"), out=None, mesh2=False, cv=True):
    def build(m):
        P = m.sharding.PartitionSpec
        spec = lambda s: P(*s) if isinstance(s, tuple) else P(s) if s else P()
        f = _sm(m, cv, tuple(spec(s) for s in ins), spec(out), _mesh2(m) if mesh2 else None)
        return f(partial(body, m)), ((W, X2) if mesh2 else (W, X))
    return build


JAXPR_PROGRAMS = {
    "psum_of_varying_and_invariant": _forward(
        lambda m, w, x: m.lax.psum(m.numpy.sum(w * x), "i") + m.lax.psum(w, "i")),
    "literal_meets_varying": _forward(lambda m, w, x: x * 2.0 + 1.0, out="i"),
    "collectives_of_invariant": _forward(
        lambda m, w, x: m.lax.all_gather(w, "i") * x[0] + m.lax.ppermute(w, "i", CYCLE),
        out="i"),
    "pcast": _forward(lambda m, w, x: m.lax.pcast(w, "i", to="varying") * x, out="i"),
    "two_axes": _forward(
        lambda m, w, x: m.lax.psum(w * x, ("i", "j")) + m.lax.psum(m.lax.psum(x, "j"), "i"),
        ins=(None, ("i", "j")), out=None, mesh2=True),
    "unchecked_has_none": _forward(
        lambda m, w, x: m.lax.pcast(w, "i", to="varying") * x, cv=False, out="i"),
}
