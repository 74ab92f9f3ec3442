"""yax.lax extras against jax.lax: associative_scan, conv_transpose and patches, reduce with a
user computation, cumlogsumexp, the barrier primitives, small helpers.
"""

from __future__ import annotations

import jax
import jax.lax as jlax
import numpy as np
import pytest

import yax
from yax import errors, lax
from yax.test_util import check_grads


def _linear_recurrence(a, b):
    return a[0] * b[0], a[1] * b[0] + b[1]


def test_associative_scan_matches_jax(x64):
    # Lengths 1, 7 and 8 take the trivial, the odd and the even paths of the recursion.
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(3, n)) for n in (1, 7, 8)]

    def everything(xs, module):
        outs = []
        for x in xs:
            pair = (x, x + 1.0)
            outs += [module.associative_scan(module.add, x, axis=1),
                     module.associative_scan(module.add, x, reverse=True, axis=1),
                     module.associative_scan(_linear_recurrence, pair, axis=1),
                     module.associative_scan(_linear_recurrence, pair, reverse=True, axis=1)]
        return outs

    got = yax.jit(lambda xs: everything(xs, lax))(xs)
    want = jax.jit(lambda xs: everything(xs, jlax))(xs)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)


def test_associative_scan_grad_vmap_and_errors(x64):
    x = np.linspace(0.5, 2.0, 6)
    check_grads(yax.jit(lambda v: lax.associative_scan(lax.mul, v).sum()), (x,), order=1)
    xs = np.stack([x, 2 * x])
    got, back = yax.jit(lambda xs: (
        yax.vmap(lambda v: lax.associative_scan(lax.add, v))(xs),
        lax.associative_scan(lax.add, xs, reverse=True, axis=-1)))(xs)  # jax.lax rejects -1
    np.testing.assert_allclose(np.asarray(got), np.cumsum(xs, axis=1))
    np.testing.assert_allclose(np.asarray(back), np.cumsum(xs[:, ::-1], axis=1)[:, ::-1])
    with pytest.raises(errors.YaxError, match="differ in the size"):
        lax.associative_scan(lambda a, b: a, (np.ones(3), np.ones(4)))


def test_conv_transpose_and_patches_match_jax():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
    w = rng.normal(size=(3, 2, 3, 4)).astype(np.float32)
    x2 = rng.normal(size=(2, 3, 5, 6)).astype(np.float32)
    wl = rng.normal(size=(4, 12, 4, 5)).astype(np.float32)  # O, C * 2 * 2, output H, W
    configs = [("SAME", (2, 2), False), ("VALID", (3, 1), False), ("SAME", (1, 1), True),
               (((1, 2), (0, 1)), (2, 1), False)]

    def everything(module, x, w, x2):
        outs = [module.conv_transpose(x, w if not tk else w.transpose(0, 1, 3, 2), s, p,
                                      transpose_kernel=tk) for p, s, tk in configs]
        outs += [module.conv_general_dilated_local(x2, wl, (1, 1), "VALID", (2, 2)),
                 module.conv_general_dilated_patches(x2, (2, 3), (1, 2), "SAME"),
                 module.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                                     dimension_numbers=("NHWC", "OIHW", "NHWC"))]
        return outs

    got = yax.jit(lambda *a: everything(lax, *a))(x, w, x2)
    want = jax.jit(lambda *a: everything(jlax, *a))(x, w, x2)
    for g, wnt in zip(got, want, strict=True):
        assert g.shape == wnt.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(wnt), rtol=1e-4, atol=1e-4)
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_transpose_shape_tuple(x.shape, w.shape, (2, 2), "SAME", dn) == (2, 10, 12, 4)
    assert lax.conv_general_shape_tuple(x.shape, w.shape, (2, 1), "SAME", dn) == tuple(
        jlax.conv_general_shape_tuple(x.shape, w.shape, (2, 1), "SAME", dn))


def test_reduce_and_cumlogsumexp(x64):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5))
    idx = np.broadcast_to(np.arange(5), (3, 5))

    def argmax_step(a, b):
        return lax.max(a[0], b[0]), lax.select(a[0] >= b[0], a[1], b[1])

    def everything(x):
        return (lax.reduce(x, 0.0, lax.add, (1,)),
                lax.reduce(x, 1.0, lambda a, b: a * b, (0, 1)),
                lax.reduce((x, idx), (-np.inf, 0), argmax_step, (1,))[1],
                lax.cumlogsumexp(x, axis=1), lax.cumlogsumexp(x, reverse=True),
                lax.cumlogsumexp(edge))

    edge = np.array([-np.inf, 0.0, -np.inf, np.inf])
    s, p, am, c1, c2, c3 = yax.jit(everything)(x)
    np.testing.assert_allclose(np.asarray(s), x.sum(1))
    np.testing.assert_allclose(float(p), x.prod())
    np.testing.assert_array_equal(np.asarray(am), x.argmax(1))
    np.testing.assert_allclose(np.asarray(c1), np.asarray(jlax.cumlogsumexp(x, axis=1)))
    np.testing.assert_allclose(np.asarray(c2), np.asarray(jlax.cumlogsumexp(x, reverse=True)))
    check_grads(yax.jit(lambda v: lax.cumlogsumexp(v, axis=1).sum()
                        + lax.reduce(v, 1.0, lambda a, b: a * b, (1,)).sum()), (x,), order=1,
                modes=("rev",))
    np.testing.assert_array_equal(np.asarray(c3), np.asarray(jlax.cumlogsumexp(edge)))


def test_barrier_primitives():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    y, s = lax.optimization_barrier((x, 2.0))
    np.testing.assert_array_equal(np.asarray(y), x)
    assert "optimization_barrier" in str(yax.make_jaxpr(lax.optimization_barrier)(x))
    g = yax.grad(lambda v: (lax.optimization_barrier(v * v) ** 2).sum())(x)
    np.testing.assert_allclose(np.asarray(g), 4 * x ** 3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(yax.vmap(lax.optimization_barrier)(x)), x)
    value = np.float32(1.2345678)
    rounded = yax.jit(lambda v: lax.reduce_precision(v, 8, 7))(value)
    assert float(rounded) == float(jlax.reduce_precision(value, 8, 7))
    grad = yax.grad(lambda v: lax.reduce_precision(v * 3.0, 5, 10))(value)
    assert float(grad) == float(jax.grad(lambda v: jlax.reduce_precision(v * 3.0, 5, 10))(value))
    with pytest.raises(errors.YaxError):
        lax.reduce_precision(np.int32(1), 8, 7)


def test_small_helpers():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    pieces = lax.split(x, (1, 3), axis=1)
    assert [p.shape for p in pieces] == [(3, 1), (3, 3)]
    assert lax.stack([x, x], axis=1).shape == (3, 2, 4) and len(lax.unstack(x, axis=1)) == 4
    np.testing.assert_array_equal(np.asarray(lax.tile(x, (2, 1))), np.tile(x, (2, 1)))
    assert lax.collapse(np.ones((2, 3, 4)), 1).shape == (2, 12)
    assert lax.full((2, 3), 1.5).dtype == np.float32 and lax.full_like(x, 2, np.int32).dtype \
        == np.int32
    np.testing.assert_array_equal(np.asarray(lax.complex(x, -x)), x - 1j * x)
    assert lax.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    assert lax.broadcast_like(np.ones(4), x).shape == (3, 4)
    np.testing.assert_array_equal(
        np.asarray(yax.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(np.ones(3))), 3.0)
    np.testing.assert_allclose(np.asarray(lax.batch_matmul(np.ones((2, 3, 4)),
                                                           np.ones((2, 4, 5)))), 4.0)
    assert int(lax.reduce_xor(np.array([1, 2, 4, 3], np.int32), (0,))) == 4
    with pytest.raises(errors.YaxError, match="sum to"):
        lax.split(x, (1, 1), axis=1)
    src = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    idx = np.array([[0, 1], [1, 2]], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.index_take(src, idx, (0, 2))),
                                  np.asarray(jlax.index_take(src, idx, (0, 2))))
    bits = np.array([1, 255, 1 << 20, 0], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.clz(bits)), np.asarray(jlax.clz(bits)))
    values, indices = lax.approx_min_k(np.array([3.0, 1.0, 2.0, 5.0], np.float32), 2)
    assert values.tolist() == [1.0, 2.0] and indices.tolist() == [1, 2]
    assert lax.platform_dependent(2.0, cpu=lambda v: v + 1, default=lambda v: v) == 3.0
    layouts = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_permutations(layouts) == jlax.conv_general_permutations(layouts)


def test_docs_section_runs():
    """The ```py block of docs/lax_extras.md (this file's section), after the page's blocks."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "lax_extras.md").read_text()
    mine = re.findall(r"```py\n(.*?)```", text, re.S)
    assert len(mine) == 1
    namespace: dict = {}
    exec("import numpy as np\nimport yax\nimport yax.numpy as jnp\nfrom yax import lax\n",
         namespace)
    exec(compile(mine[0], "docs/lax_extras.md", "exec"), namespace)
