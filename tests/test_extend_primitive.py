"""A primitive defined the JAX way (jax.extend.core.Primitive + the jax.interpreters
registries) works in yax under eager, jit, grad (to second order), vmap and scan."""

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import lax
from yax._jax_names import core as jax_core
from yax._jax_names.interpreters import ad, batching, mlir
from yax.extend import core
from yax.test_util import check_grads

# --- multiply_add(x, y, z) = x * y + z, with every rule written as JAX's tutorial does -------

multiply_add_p = core.Primitive("test_multiply_add")


def multiply_add(x, y, z):
    return multiply_add_p.bind(x, y, z)


@multiply_add_p.def_impl
def _ma_impl(x, y, z):
    return jnp.add(jnp.multiply(x, y), z)


@multiply_add_p.def_abstract_eval
def _ma_abstract_eval(x, y, z):
    assert x.shape == y.shape == z.shape
    return jax_core.ShapedArray(x.shape, x.dtype)


mlir.register_lowering(multiply_add_p, mlir.lower_fun(
    lambda x, y, z: x * y + z, multiple_results=False))


def _ma_jvp(primals, tangents):
    x, y, z = primals
    xt, yt, zt = (ad.instantiate_zeros(t) for t in tangents)
    # d(x*y+z) = xt*y + x*yt + zt, written with the primitive itself so that its transpose
    # rule is what reverse mode needs
    return multiply_add(x, y, z), multiply_add(xt, y, multiply_add(x, yt, zt))


def _ma_transpose(ct, x, y, z):
    # linear in exactly one of x, y (the other is a known primal) and in z
    if ad.is_undefined_primal(x):
        ct_x = None if type(ct) is ad.Zero else multiply_add(ct, y, jnp.zeros_like(y))
        return ct_x, None, ct
    ct_y = None if type(ct) is ad.Zero else multiply_add(x, ct, jnp.zeros_like(x))
    return None, ct_y, ct


def _ma_batch(args, dims):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not batching.not_mapped)
    moved = [batching.moveaxis(a, d, 0, size) for a, d in zip(args, dims)]
    return multiply_add(*moved), 0


ad.primitive_jvps[multiply_add_p] = _ma_jvp
ad.primitive_transposes[multiply_add_p] = _ma_transpose
batching.primitive_batchers[multiply_add_p] = _ma_batch


def square_add(a, b):
    return multiply_add(a, a, b)


# --- my_sin: jvp through ad.defjvp; vmap through defvectorized ------------------------------

my_sin_p = core.Primitive("test_my_sin")
my_sin_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
# returns None, as jax's (a notebook cell ending with it shows nothing)
assert mlir.register_lowering(my_sin_p, mlir.lower_fun(jnp.sin, multiple_results=False)) is None
ad.defjvp(my_sin_p, lambda t, x: t * jnp.cos(x))
batching.defvectorized(my_sin_p)


def my_sin(x):
    return my_sin_p.bind(x)


# --- sincos: a multiple_results primitive, its rules set after construction -----------------

sincos_p = core.Primitive("test_sincos")
sincos_p.multiple_results = True
sincos_p.def_impl(lambda x: (jnp.sin(x), jnp.cos(x)))
sincos_p.def_abstract_eval(lambda x: [core.ShapedArray(x.shape, x.dtype)] * 2)
mlir.register_lowering(sincos_p, mlir.lower_fun(lambda x: (jnp.sin(x), jnp.cos(x)),
                                                multiple_results=True))
ad.primitive_jvps[sincos_p] = lambda p, t: (
    sincos_p.bind(p[0]), [t[0] * jnp.cos(p[0]), -t[0] * jnp.sin(p[0])])
batching.primitive_batchers[sincos_p] = lambda args, dims: (sincos_p.bind(args[0]),
                                                            [dims[0], dims[0]])

# --- double: linear (ad.deflinear2); floor_: zero derivative (ad.defjvp_zero) ---------------

double_p = core.Primitive("test_double")
double_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(double_p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))
ad.deflinear2(double_p, lambda ct, x: [double_p.bind(ct)])
batching.defvectorized(double_p)

floor_p = core.Primitive("test_floor")
floor_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(floor_p, mlir.lower_fun(jnp.floor, multiple_results=False))
ad.defjvp_zero(floor_p)

X = np.array([0.3, -1.2, 2.5], np.float32)
Y = np.array([1.5, 0.7, -0.4], np.float32)


def test_eager_and_jit_compute_the_value():
    np.testing.assert_allclose(multiply_add(X, Y, X), X * Y + X, rtol=1e-6)
    np.testing.assert_allclose(yax.jit(multiply_add)(X, Y, X), X * Y + X, rtol=1e-6)
    assert float(square_add(2.0, 10.0)) == 14.0
    np.testing.assert_allclose(my_sin(X), np.sin(X), rtol=1e-6)  # eager through the lowering
    s, c = sincos_p.bind(X)
    np.testing.assert_allclose(s, np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(c, np.cos(X), rtol=1e-6)


def test_jaxpr_names_the_primitive():
    closed = yax.make_jaxpr(square_add)(2.0, 10.0)
    assert [e.primitive for e in closed.jaxpr.eqns] == [multiply_add_p]
    assert isinstance(closed.jaxpr.eqns[0].primitive, core.Primitive)
    assert isinstance(lax.exp_p, core.Primitive)  # yax's own primitives are Primitives too


def test_grads_of_the_tutorial_primitive():
    assert float(yax.grad(square_add)(2.0, 10.0)) == 4.0
    assert float(yax.jit(yax.grad(square_add))(2.0, 10.0)) == 4.0
    out, tan = yax.jvp(square_add, (2.0, 10.0), (1.0, 1.0))
    assert (float(out), float(tan)) == (14.0, 5.0)


@pytest.mark.parametrize("wrap", ["plain", "jit", "vmap"])
def test_check_grads_second_order(wrap):
    def f(x, y):
        return jnp.sum(multiply_add(x, y, my_sin(x)) + double_p.bind(y) * sincos_p.bind(x)[1])

    if wrap == "jit":
        g = yax.jit(f)
        args = (X, Y)
    elif wrap == "vmap":
        g = yax.vmap(f)
        args = (np.stack([X, X + 1]), np.stack([Y, Y - 1]))
    else:
        g, args = f, (X, Y)
    check_grads(g, args, order=2, modes=("fwd", "rev"))


def test_grad_matches_the_same_function_in_jax():
    jax = pytest.importorskip("jax")
    jjnp = jax.numpy

    def ours(x, y):
        return jnp.sum(multiply_add(x, y, my_sin(x)) * sincos_p.bind(y)[0])

    def theirs(x, y):
        return jjnp.sum((x * y + jjnp.sin(x)) * jjnp.sin(y))

    for argnum in (0, 1):
        np.testing.assert_allclose(yax.grad(ours, argnum)(X, Y),
                                   jax.grad(theirs, argnum)(X, Y), rtol=1e-5)
    np.testing.assert_allclose(yax.jit(yax.hessian(ours))(X, Y),
                               jax.hessian(theirs)(X, Y), rtol=1e-5, atol=1e-6)


def test_vmap_uses_the_batching_rules():
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(yax.vmap(multiply_add, in_axes=(0, None, 0))(xs, Y, xs),
                               xs * Y + xs, rtol=1e-6)
    np.testing.assert_allclose(yax.jit(yax.vmap(my_sin, in_axes=1))(xs), np.sin(xs).T,
                               rtol=1e-6)
    s, c = yax.vmap(lambda x: sincos_p.bind(x))(xs)
    np.testing.assert_allclose(c, np.cos(xs), rtol=1e-6)


def test_zero_and_linear_rules():
    assert float(yax.grad(lambda x: floor_p.bind(x) * x)(2.5)) == 2.0  # floor's tangent is zero
    np.testing.assert_allclose(yax.grad(lambda x: jnp.sum(double_p.bind(x)))(X), 2 * np.ones(3))
    np.testing.assert_allclose(yax.vjp(double_p.bind, X)[1](Y)[0], 2 * Y)


def test_in_scan_with_grad_and_vmap():
    def loop(c, xs):
        def body(carry, x):
            new = multiply_add(carry, x, my_sin(carry))
            return new, double_p.bind(new)
        return lax.scan(body, c, xs)

    def reference(c, xs):
        ys = []
        for x in xs:
            c = c * x + np.sin(c)
            ys.append(2 * c)
        return c, np.stack(ys)

    c0, xs = np.float32(0.5), np.array([1.1, 0.9, 1.3, 0.8], np.float32)
    c, ys = yax.jit(loop)(c0, xs)
    rc, rys = reference(c0, xs)
    np.testing.assert_allclose(c, rc, rtol=1e-5)
    np.testing.assert_allclose(ys, rys, rtol=1e-5)
    check_grads(lambda c, xs: loop(c, xs)[0], (c0, xs), order=2, modes=("fwd", "rev"))
    batched = yax.vmap(loop, in_axes=(0, None))(np.array([0.5, 0.2], np.float32), xs)[0]
    np.testing.assert_allclose(batched, [reference(np.float32(c), xs)[0] for c in (0.5, 0.2)],
                               rtol=1e-5)


def test_missing_rules_raise_jax_s_not_implemented_error():
    p = core.Primitive("test_bare")
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'test_bare'"):
        p.bind(1.0)
    with pytest.raises(NotImplementedError, match="Abstract evaluation for 'test_bare'"):
        yax.jit(p.bind)(1.0)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="MLIR translation rule for primitive"):
        yax.jit(p.bind)(1.0)
    p.def_impl(lambda x: x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'test_bare'"):
        yax.jvp(p.bind, (1.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="Batching rule for 'test_bare'"):
        yax.vmap(p.bind)(np.ones(2, np.float32))
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    with pytest.raises(NotImplementedError, match="Transpose rule"):
        yax.grad(p.bind)(1.0)


def test_registries_read_back_what_was_registered():
    assert ad.primitive_jvps[multiply_add_p] is _ma_jvp
    assert batching.primitive_batchers[multiply_add_p] is _ma_batch
    assert multiply_add_p in ad.primitive_transposes
    assert lax.sin_p in ad.primitive_jvps  # yax's own rules are visible too
