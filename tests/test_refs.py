"""Mutable array references (yax.new_ref, yax.Ref, yax.ref): each program runs under real jax
and under yax (the same source, given the module as `jx` and its numpy as `np_`), and what it
prints, returns and raises must agree."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as ynp
from tests.harness import JAX_0_10
from yax import errors

# yax follows jax 0.10 here; jax 0.11 (a fresh Python 3.12's)
# prints a Ref without weak_type and stages Refs otherwise
_JAX_0_10_ONLY = pytest.mark.skipif(not JAX_0_10, reason="compared with jax 0.10's behaviour")

BOTH = [(jax, jjnp), (yax, ynp)]


def both(prog):
    """(jax's result, yax's result) of `prog(jx, np_)`."""
    return [prog(jx, np_) for jx, np_ in BOTH]


def same(prog):
    want, got = both(prog)
    assert got == want, f"yax {got!r} != jax {want!r}"
    return got


def message(prog):
    """What `prog` raises, as `print(e)` shows it (None: nothing)."""
    def run(jx, np_):
        try:
            prog(jx, np_)
        except Exception as e:  # noqa: BLE001
            return f"{isinstance(e, ValueError)}:{e}"
        return None
    return run


# --- creating, printing, reading and writing ---------------------------------------------------

@_JAX_0_10_ONLY
def test_repr_dtype_and_weak_type():
    def prog(jx, np_):
        out = [repr(jx.new_ref(0)), repr(jx.new_ref(0.)), str(jx.new_ref(np_.zeros(3))),
               repr(jx.new_ref(np_.arange(6.).reshape(2, 3))),
               repr(jx.new_ref(np_.ones(2, np_.int8))), str(jx.typeof(jx.new_ref(1.)))]
        r = jx.new_ref(0)
        r[...] = 5  # a write stores a strongly typed value
        out.append(repr(r))
        r = jx.new_ref(0.)
        r[...] += 2.
        out.append(repr(r))
        r = jx.new_ref(np_.zeros((2, 3)))
        out += [r.shape, r.ndim, r.size, len(r), str(r.dtype), isinstance(r, jx.Ref)]
        return out
    same(prog)


def test_indexed_get_and_set_follow_numpy():
    def prog(jx, np_):
        x_ref = jx.new_ref(np_.arange(12.).reshape(3, 4))
        row = x_ref[0]
        x_ref[1] = row
        val = x_ref[1, 2]
        x_ref[2, 3] = val
        col = x_ref[:, 1]
        x_ref[0, :3] = col
        vals = x_ref[np_.array([0, 0, 1]), np_.array([1, 2, 3])]
        x_ref[np_.array([1, 2, 1]), np_.array([0, 0, 1])] = vals
        x_ref[..., -1] += 100.
        x_ref[1:, ::2] = x_ref[1:, ::2] * 2
        return [np.asarray(row).tolist(), float(val), np.asarray(vals).tolist(),
                np.asarray(x_ref[...]).tolist()]
    same(prog)


def test_ref_module_functions():
    def prog(jx, np_):
        r = jx.new_ref(np_.zeros(3))
        old = jx.ref.swap(r, 0, 7.)
        jx.ref.addupdate(r, (), np_.ones(3))
        jx.ref.set(r, 2, 9.)
        idx = np_.array([0, 0, 1])  # repeated indices accumulate in one addupdate
        jx.ref.addupdate(r, idx, np_.array([1., 2., 3.]))
        got = jx.ref.get(r, 1)
        frozen = jx.freeze(r)
        return [float(old), float(got), np.asarray(frozen).tolist(), repr(r)]
    same(prog)
    assert set(yax.ref.__all__) >= {"new_ref", "get", "swap", "set", "addupdate", "freeze",
                                    "Ref", "AbstractRef", "empty_ref", "free_ref"}


def test_reads_are_copies_and_init_is_copied():
    x = ynp.arange(3.)
    r = yax.new_ref(x)
    first = r[...]
    y = ynp.ones(3)
    r[...] = y
    yax.jit(lambda r: r.__setitem__(..., r[...] * 3.))(r)  # donates the Ref's own buffer only
    assert np.asarray(y).tolist() == [1., 1., 1.]
    r[...] = x
    r[0] = 5.
    assert np.asarray(x).tolist() == [0., 1., 2.]
    assert np.asarray(first).tolist() == [0., 1., 2.]
    assert np.asarray(r[...]).tolist() == [5., 1., 2.]


def test_empty_ref_has_the_type_and_free_ref_does_nothing():
    r = yax.empty_ref(yax.ShapeDtypeStruct((2, 3), ynp.int32))
    assert (r.shape, r.dtype) == ((2, 3), np.dtype("int32"))
    r[0, 1] = 4
    assert yax.free_ref(r) == () and int(r[0, 1]) == 4
    with pytest.raises(TypeError):
        yax.free_ref(ynp.zeros(2))


def test_dtype_and_shape_errors_are_jax_s():
    for bad in (lambda jx, np_, r: r.__setitem__(..., np_.ones(3, np_.int32)),
                lambda jx, np_, r: r.__setitem__(..., np_.ones(3, np_.float16)),
                lambda jx, np_, r: r.__setitem__(..., np_.ones(2))):
        same(message(lambda jx, np_, bad=bad: bad(jx, np_, jx.new_ref(np_.zeros(3)))))


def test_math_on_a_ref_is_a_type_error():
    for prog in (lambda jx, np_: np_.sin(jx.new_ref(1.)), lambda jx, np_: jx.new_ref(1.) + 1):
        for jx, np_ in BOTH:
            with pytest.raises(TypeError):
                prog(jx, np_)


def test_no_refs_of_refs():
    with pytest.raises(errors.RefError):
        yax.new_ref(yax.new_ref(0.))


# --- jit ---------------------------------------------------------------------------------------

def test_jit_updates_a_closed_over_ref_each_call():
    def prog(jx, np_):
        x_ref = jx.new_ref(np_.zeros(3))

        @jx.jit
        def f():
            x_ref[1] += 1.
        out = [repr(x_ref)]
        f()
        f()
        out.append(repr(x_ref))
        x_ref[...] = np_.ones(3)  # an eager write between calls is seen by the next call
        f()
        out.append(repr(x_ref))
        return out
    same(prog)


def test_jit_ref_arguments_eager_equals_jit_and_in_place():
    def prog(jx, np_):
        def step(x, acc_ref, count_ref):
            acc_ref[...] += np_.sin(x)
            count_ref[...] += 1
            return acc_ref[...] * 2
        outs = []
        for fun in (step, jx.jit(step)):
            acc, count = jx.new_ref(np_.zeros(3)), jx.new_ref(0)
            for k in range(2):
                outs.append(np.asarray(fun(np_.arange(3.) + k, acc, count)).round(5).tolist())
            outs += [repr(acc), repr(count)]
        return outs
    want, got = both(prog)
    assert got == want
    assert got[:4] == got[4:]  # eager == jit

    @yax.jit
    def sin_inplace(x_ref):
        x_ref[...] = ynp.sin(x_ref[...])
    x_ref = yax.new_ref(ynp.arange(3.))
    before = x_ref.unsafe_buffer_pointer()
    sin_inplace(x_ref)
    sin_inplace(x_ref)
    assert x_ref.unsafe_buffer_pointer() == before  # the Ref's buffer is donated and reused
    np.testing.assert_allclose(np.asarray(x_ref[...]), np.sin(np.sin(np.arange(3.))), rtol=1e-6)


@_JAX_0_10_ONLY
def test_jit_and_loops_reading_a_ref_leave_it_as_it_is():
    def prog(jx, np_):
        r, s = jx.new_ref(0.), jx.new_ref(np_.ones(()))
        f = jx.jit(lambda r: r[...] + s[...])
        out = [float(f(r)), float(f(r)), repr(r), repr(s)]
        q = jx.new_ref(2.)
        ys = jx.lax.scan(lambda c, x: (c, x * q[...]), 0., np_.arange(3.))[1]
        z = jx.lax.cond(True, lambda: q[...], lambda: -q[...])
        w = jx.lax.while_loop(lambda i: i < q[...], lambda i: i + 1., 0.)
        return out + [np.asarray(ys).tolist(), float(z), float(w), repr(q)]
    same(prog)


def test_jit_inside_jit_threads_refs_to_the_outer_caller():
    def prog(jx, np_):
        r = jx.new_ref(np_.zeros(2))

        @jx.jit
        def inner(x):
            r[0] += x

        @jx.jit
        def outer(x):
            inner(x)
            inner(2 * x)
            local = jx.new_ref(x)
            local[...] *= 3.
            return local[...]
        y = outer(1.)
        return [float(y), repr(r)]
    same(prog)


def test_jit_errors_are_jax_s():
    def prog(jx, np_):
        x_ref = jx.new_ref(0.)

        @jx.jit
        def err1(x_ref):
            x_ref[...] = 5.
            return x_ref

        @jx.jit
        def err2(x_ref, y_ref):
            ...

        @jx.jit
        def err3(y_ref):
            y_ref[...] = x_ref[...]
        return [message(lambda *_: err1(x_ref))(jx, np_),
                message(lambda *_: err2(x_ref, x_ref))(jx, np_),
                message(lambda *_: err3(x_ref))(jx, np_)]
    same(prog)


def test_returning_a_ref_made_inside_jit():
    def prog(jx, np_):
        @jx.jit
        def mk(x):
            r = jx.new_ref(x)
            return r
        return message(lambda *_: mk(1.))(jx, np_)
    want, got = both(prog)
    prefix = want.split(" on line ")[0]
    assert got.startswith(prefix) and "was created on line" in got


def test_a_ref_made_inside_jit_cannot_be_used_after():
    box = []

    @yax.jit
    def f(x):
        box.append(yax.new_ref(x))
        return x
    f(1.)
    with pytest.raises(errors.RefError, match="finished"):
        box[0][...]


# --- vmap --------------------------------------------------------------------------------------

def test_vmap_of_ref_arguments():
    def prog(jx, np_):
        def dist(x, y, out_ref):
            assert x.ndim == y.ndim == 1
            assert out_ref.ndim == 0
            out_ref[...] = np_.sum((x - y) ** 2)
        vecs = np_.arange(12.).reshape(3, 4)
        out_ref = jx.new_ref(np_.zeros((3, 3)))
        jx.vmap(jx.vmap(dist, (0, None, 0)), (None, 0, 0))(vecs, vecs, out_ref)
        r = jx.new_ref(np_.zeros((2, 3)))
        jx.vmap(jx.jit(lambda x, r: r.__setitem__(0, x)), (0, 1))(np_.arange(3.), r)
        return [repr(out_ref), repr(r)]
    same(prog)


def test_vmap_refuses_one_ref_twice_as_jax():
    def prog(jx, np_):
        r = jx.new_ref(np_.zeros(3))

        def f(a, b):
            a[...] += 1.
        return message(lambda *_: jx.vmap(f)(r, r))(jx, np_)
    assert "appeared at both a and b" in same(prog)


def test_vmap_loop_equivalence():
    def body(x, r):
        r[...] += x * 2
        return r[...] + 1
    r = yax.new_ref(ynp.ones(4))
    out = yax.vmap(body)(ynp.arange(4.), r)
    np.testing.assert_allclose(np.asarray(out), [2., 4., 6., 8.])
    np.testing.assert_allclose(np.asarray(r[...]), [1., 3., 5., 7.])


def test_vmapped_write_to_a_closed_over_ref_is_jax_s_error():
    def prog(jx, np_):
        x_ref = jx.new_ref(0.)

        def err5(x):
            x_ref[...] = x
        return message(lambda *_: jx.vmap(err5)(np_.arange(3.)))(jx, np_)
    assert "vmapped value on an unbatched array reference" in same(prog)


def test_vmap_reads_a_closed_over_ref():
    def prog(jx, np_):
        r = jx.new_ref(np_.array(10.))
        return np.asarray(jx.vmap(lambda x: x + r[...])(np_.arange(3.))).tolist()
    same(prog)


# --- autodiff ----------------------------------------------------------------------------------

def test_grad_through_internal_refs():
    def prog(jx, np_):
        def g(x):
            x_ref = jx.new_ref(0.)
            x_ref[...] = np_.sin(x)
            return x_ref[...]

        @jx.jit
        def pure1(x):
            ref = jx.new_ref(x)
            ref[...] = ref[...] + ref[...]
            return ref[...]

        def h(x):
            ref = jx.new_ref(np_.zeros(3))
            ref[1:] = x[:2] * x[1:]
            ref[0] += np_.sum(x)
            return np_.sum(ref[...] ** 2)
        x = np_.array([0.5, -1.0, 2.0])
        return [round(float(jx.grad(g)(1.0)), 6), float(jx.grad(pure1)(3.0)),
                np.asarray(jx.grad(h)(x)).round(4).tolist(),
                np.asarray(jx.jit(jx.grad(h))(x)).round(4).tolist(),
                [round(float(v), 5) for v in jx.jvp(g, (1.0,), (2.0,))]]
    same(prog)


def test_grad_against_finite_differences():
    def h(x):
        ref = yax.new_ref(ynp.zeros(3))
        ref[ynp.array([0, 2])] = x[:2] * x[2]
        ref[1] += ynp.sin(x[0])
        return ynp.sum(ref[...] ** 2)
    yax.test_util.check_grads(h, (ynp.array([0.3, -0.7, 1.1]),), order=1, modes=["rev"])


def test_plumbing_refs_under_grad():
    def prog(jx, np_):
        def foo(x, ref):
            y = x + x
            ref[...] += jx.lax.stop_gradient(y)
            return y

        def err6(x, ref):
            y = x + x
            ref[...] += y
            return y
        rr = jx.new_ref(0.)
        g = float(jx.grad(foo)(1., rr))
        g2 = float(jx.jit(jx.grad(foo))(1., rr))
        r3 = jx.new_ref(np_.zeros(3))
        g3 = np.asarray(jx.vmap(jx.grad(foo))(np_.arange(3.), r3)).tolist()
        return [g, g2, repr(rr), g3, repr(r3),
                message(lambda *_: jx.grad(err6)(1., jx.new_ref(0.)))(jx, np_)]
    same(prog)


@_JAX_0_10_ONLY
def test_custom_vjp_stash_grads():
    def prog(jx, np_):
        @jx.custom_vjp
        def stash_grads(grads_ref, x):
            return x

        def stash_grads_fwd(grads_ref, x):
            return x, grads_ref

        def stash_grads_bwd(grads_ref, g):
            grads_ref[...] = g
            return None, g
        stash_grads.defvjp(stash_grads_fwd, stash_grads_bwd)

        def f(x, grads_ref):
            x = np_.sin(x)
            x = stash_grads(grads_ref, x)
            return 3. * x
        grads_ref = jx.new_ref(0.)
        out = [float(f(1., grads_ref)), repr(grads_ref)]
        out += [round(float(jx.grad(f)(1., grads_ref)), 5), repr(grads_ref)]
        grads_ref[...] = 0.
        out += [round(float(jx.jit(jx.grad(f))(1., grads_ref)), 5), repr(grads_ref)]
        return out
    same(prog)


# --- loops and make_jaxpr ----------------------------------------------------------------------

def test_scan_with_a_closed_over_ref_foreach():
    def prog(jx, np_):
        def foreach(*args):
            def decorator(body):
                return jx.lax.scan(lambda _, elts: (None, body(*elts)), None, args)[1]
            return decorator
        r = jx.new_ref(0)
        xs = np_.arange(10)

        @foreach(xs)
        def ys(x):
            r[...] += x
            return x * 2
        hist = jx.new_ref(np_.zeros(3))

        @foreach(np_.array([0, 2, 2, 1]))
        def _(i):
            hist[i] += 1.
        return [repr(r), str(ys), repr(hist)]
    same(prog)


def test_scan_and_fori_loop_with_refs_under_jit_and_grad():
    def prog(jx, np_):
        def f(xs):
            r = jx.new_ref(0.)

            def body(c, x):
                r[...] += x * c
                return c + 1., None
            jx.lax.scan(body, 1., xs)
            s = jx.new_ref(r[...])
            jx.lax.fori_loop(0, 3, lambda i, _: s.__setitem__(..., s[...] * 2.), None)
            return s[...]
        xs = np_.arange(3.)
        return [float(f(xs)), float(jx.jit(f)(xs)), np.asarray(jx.grad(f)(xs)).tolist(),
                np.asarray(jx.jit(jx.grad(f))(xs)).tolist()]
    same(prog)


def test_cond_switch_and_while_loop_thread_closed_over_refs():
    def prog(jx, np_):
        r, s, n = jx.new_ref(0.), jx.new_ref(np_.zeros(2)), jx.new_ref(3)

        def f(x):
            jx.lax.cond(x > 0, lambda: r.__setitem__(..., r[...] + x),
                        lambda: s.__setitem__(0, x))
            jx.lax.switch(1, [lambda: None, lambda: s.__setitem__(1, s[1] + 1.)])

            def body(i):
                r[...] += x * i
                return i + 1
            return jx.lax.while_loop(lambda i: i < n[...], body, 0)
        out = [int(f(1.)), repr(r), repr(s), int(jx.jit(f)(-2.)), repr(r), repr(s)]
        n[...] = 5
        out += [int(jx.jit(f)(1.)), repr(r)]

        def g(x):
            q = jx.new_ref(0.)
            jx.lax.cond(x > 0, lambda: q.__setitem__(..., np_.sin(x)), lambda: None)
            return q[...]
        out.append(round(float(jx.grad(g)(1.)), 6))
        return out
    same(prog)


def test_refs_written_where_yax_cannot_thread_them():
    r = yax.new_ref(0.)
    with pytest.raises(errors.EffectInWhileCondError, match="writes a Ref"):
        yax.lax.while_loop(lambda i: (r.__setitem__(..., 1.), i < 3)[1], lambda i: i + 1, 0)
    with pytest.raises(errors.RefError, match="checkpoint"):
        yax.jit(yax.checkpoint(lambda x: r.__setitem__(..., x)))(1.)
    assert float(yax.jit(yax.checkpoint(lambda x: x * r[...]))(2.)) == 0.  # reads are fine


@_JAX_0_10_ONLY
def test_make_jaxpr_stages_refs_as_jax_prints_them():
    def prog(jx, np_):
        r = jx.new_ref(np_.zeros(3))

        def f(x):
            r[1] += x
            r[np_.array([0, 2])] = np_.ones(2) * x
            return r[...]

        def g(x):
            ref = jx.new_ref(x)
            ref[...] = ref[...] + ref[...]
            return jx.freeze(ref)

        def h(x, s):
            s[...] = x
        out = [str(jx.make_jaxpr(f)(1.)), str(jx.make_jaxpr(g)(1.)),
               str(jx.make_jaxpr(h)(1., jx.new_ref(0.))),
               str(jx.make_jaxpr(lambda s: s[1:3, 0])(jx.new_ref(np_.zeros((4, 4))))),
               str(jx.make_jaxpr(lambda s: jx.ref.swap(s, 0, 1.))(jx.new_ref(np_.zeros(4)))),
               str(jx.make_jaxpr(lambda s: jx.ref.addupdate(s, ..., np_.ones(4)))(
                   jx.new_ref(np_.zeros(4)))),
               repr(r)]  # tracing does not write
        return out
    same(prog)


def test_make_jaxpr_of_jit_and_scan_with_refs_reads_and_writes_the_ref():
    r = yax.new_ref(ynp.zeros(3))

    @yax.jit
    def inner(x):
        r[0] += x

    def f(x):
        inner(x)
        yax.lax.scan(lambda c, i: (r.__setitem__(1, r[1] + i), None), None, ynp.arange(2.))
    text = str(yax.make_jaxpr(f)(1.))
    assert text.startswith("{ lambda a:Ref{f32[3]} ")
    assert text.count("<- a[...]") == 2 and text.count("a[...] <- ") == 2, text
    assert np.asarray(r[...]).tolist() == [0., 0., 0.]


def test_a_staged_program_runs_eagerly_on_the_refs():
    from yax.interpreters.eval_jaxpr import eval_jaxpr
    r = yax.new_ref(ynp.zeros(3))

    def f(x):
        r[1] += x
        r[ynp.array([0, 2])] = ynp.ones(2) * x
        s = yax.new_ref(x)
        s[...] = s[...] * 2
        return yax.freeze(s)
    closed = yax.make_jaxpr(f)(2.)
    out = eval_jaxpr(closed.jaxpr, closed.consts, [ynp.float32(3.)])
    assert float(out[0]) == 6. and np.asarray(r[...]).tolist() == [3., 3., 3.]
