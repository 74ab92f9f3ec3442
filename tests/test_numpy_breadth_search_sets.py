"""jnp searching and data-dependent-size functions (searching.py, setops.py) against jax.numpy:
searchsorted/digitize/lexsort/partition, nonzero/argwhere/unique/bincount/set operations with
and without a static `size=`, the error that asks for `size=` under tracing, vmap and grads."""

from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
import yax.numpy as jnp
from tests.harness import assert_close, check_eager_and_jit
from yax import errors
from yax.test_util import check_grads

RNG = np.random.default_rng(2)
A = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
V = np.array([[0.0, 2.0, 2.5], [5.0, np.nan, 1.0]], np.float32)
B = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
U = np.array([3.0, 1, np.nan, 3, 2, np.nan, 1], np.float32)
P = np.array([1, 4, 2, 2, 7], np.int32)
Q = np.array([2, 3, 4, 9], np.int32)


def check(fn, *args, eager_only=False):
    """`fn(module, *args)` with yax.numpy matches jax.numpy (eagerly, and under jit)."""
    want = jax.tree_util.tree_map(np.asarray, fn(jnp_ref, *args))
    if eager_only:
        got = fn(jnp, *args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                        strict=True):
            assert_close(g, w)
        return
    check_eager_and_jit(lambda *a: fn(jnp, *a), list(args), want)


@pytest.mark.parametrize("method", ["scan", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_jax(side, method):
    check(lambda m, a, v: m.searchsorted(a, v, side, method=method), A, V)
    ints = np.array([0, 0, 1, 5, 5, 5, 9], np.int32)
    check(lambda m, a, v: m.searchsorted(a, v, side, method=method), ints,
          np.arange(-1, 11, dtype=np.int32))
    perm = np.array([2, 0, 1], np.int32)
    check(lambda m, a, s: m.searchsorted(a, 1.5, side, sorter=s),
          np.array([2.0, 3.0, 1.0], np.float32), perm)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9])
def test_searchsorted_sizes(n):
    a = np.sort(RNG.integers(0, 5, n)).astype(np.float32)
    v = np.arange(-1, 6, 0.5, dtype=np.float32)
    for side in ("left", "right"):
        assert_close(yax.jit(lambda a, v: jnp.searchsorted(a, v, side))(a, v),
                     np.searchsorted(a, v, side).astype(np.int32))


def test_digitize_lexsort_partition():
    x = np.array([0.0, 2.0, 2.5, 5.0, 1.0], np.float32)
    for right in (False, True):
        check(lambda m, x, b: m.digitize(x, b, right=right), x,
              np.array([1.0, 2.0, 3.0], np.float32))
        check(lambda m, x, b: m.digitize(x, b, right=right), x,
              np.array([3.0, 2.0, 1.0], np.float32))
    k1, k2 = np.array([1, 1, 0, 0, 2], np.int32), np.array([3, 1, 2, 1, 0], np.int32)
    check(lambda m, a, b: m.lexsort((a, b)), k1, k2)
    check(lambda m, a, b: m.lexsort(m.stack([a, b])), k1, k2)
    x = RNG.normal(size=(3, 6)).astype(np.float32)
    for kth in (0, 2, -1):
        got = np.asarray(jnp.partition(x, kth, axis=1))
        srt = np.sort(x, axis=1)
        np.testing.assert_array_equal(got[:, kth], srt[:, kth])
        assert np.all(got[:, :kth % 6] <= got[:, kth % 6:kth % 6 + 1])
        idx = np.asarray(jnp.argpartition(x, kth, axis=1))
        np.testing.assert_array_equal(np.take_along_axis(x, idx, 1)[:, kth], srt[:, kth])
    check(lambda m, a: m.sort_complex(a), np.array([3.0, 1.0, 2.0], np.float32))


def test_nonzero_family_matches_jax():
    check(lambda m, b: m.nonzero(b), B, eager_only=True)
    check(lambda m, b: m.nonzero(b, size=5, fill_value=-1), B)
    check(lambda m, b: m.nonzero(b, size=2), B)
    check(lambda m, b: m.nonzero(b, size=4, fill_value=(7, 8)), B)
    check(lambda m, b: m.argwhere(b, size=5), B)
    check(lambda m, b: m.argwhere(b), B, eager_only=True)
    check(lambda m, b: m.flatnonzero(b, size=6, fill_value=9), B)
    check(lambda m, b: m.where(b, size=3), B)
    check(lambda m, b: m.where(b > 0, b, -b), B)
    check(lambda m, b: m.bincount(b[1]), B, eager_only=True)
    check(lambda m, x: m.bincount(x, length=4), np.array([0, 1, 1, 5, -1], np.int32))
    check(lambda m, x, w: m.bincount(x, w, length=7), np.array([0, 1, 1, 5], np.int32),
          np.array([0.5, 1, 2, 3], np.float32))
    check(lambda m, x: m.bincount(x, minlength=8), np.array([0, 1, 1, 5], np.int32),
          eager_only=True)


@pytest.mark.parametrize("size,fill", [(None, None), (6, None), (6, -1.0), (2, None)])
def test_unique_matches_jax(size, fill):
    fn = (lambda m, u: m.unique(u, True, True, True, size=size, fill_value=fill))
    check(fn, U, eager_only=size is None)
    fn = (lambda m, u: m.unique(u, size=size, fill_value=fill))
    check(fn, np.array([5, 1, 5, 2, 2, 9], np.int32), eager_only=size is None)


def test_unique_axis_and_array_api():
    mat = np.array([[1, 2], [0, 5], [1, 2], [0, 1]], np.int32)
    check(lambda m, a: m.unique(a, True, True, True, axis=0), mat, eager_only=True)
    check(lambda m, a: m.unique(a, axis=1), mat.T, eager_only=True)
    check(lambda m, a: m.unique(a, axis=0, size=5, return_counts=True), mat)
    check(lambda m, a: tuple(m.unique_all(a)), P, eager_only=True)
    check(lambda m, a: tuple(m.unique_counts(a, size=4)), P)
    check(lambda m, a: tuple(m.unique_inverse(a.reshape(1, 5))), P, eager_only=True)
    check(lambda m, a: m.unique_values(a), P, eager_only=True)


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_operations_match_jax(name):
    check(lambda m, p, q: getattr(m, name)(p, q), P, Q, eager_only=True)
    check(lambda m, p, q: getattr(m, name)(p, q, size=7), P, Q)
    check(lambda m, p, q: getattr(m, name)(p, q, size=2, fill_value=-3), P, Q)
    check(lambda m, p, q: getattr(m, name)(p, q, size=7, fill_value=-3), P, Q)


def test_intersect_indices_and_isin():
    check(lambda m, p, q: m.intersect1d(p, q, return_indices=True), P, Q, eager_only=True)
    check(lambda m, p, q: m.intersect1d(p, q, return_indices=True, size=4), P, Q)
    for method in ("compare_all", "sort"):
        check(lambda m, b: m.isin(b, np.array([0, 3], np.int32), method=method), B)
        check(lambda m, b: m.isin(b, np.array([0, 3], np.int32), invert=True,
                                  method=method), B)
    check(lambda m, x, t: m.isin(x, t), V, A)
    assert_close(jnp.in1d(B, np.array([2, 3], np.int32)),
                 np.isin(B.ravel(), [2, 3]))


_CALLS = [
    lambda x: jnp.nonzero(x), lambda x: jnp.argwhere(x), lambda x: jnp.flatnonzero(x),
    lambda x: jnp.where(x), lambda x: jnp.unique(x), lambda x: jnp.bincount(x),
    lambda x: jnp.union1d(x, x), lambda x: jnp.setdiff1d(x, x),
    lambda x: jnp.intersect1d(x, x)]


_NAMES = ["nonzero", "argwhere", "flatnonzero", "where", "unique", "bincount", "union1d",
          "setdiff1d", "intersect1d"]


@pytest.mark.parametrize("call", _CALLS, ids=_NAMES)
@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
def test_traced_without_size_raises_clear_error(call, transform):
    x = np.array([1, 0, 2], np.int32)
    if transform == "jit":
        f = yax.jit(call)
    elif transform == "vmap":
        f, x = yax.vmap(call), x[None]
    else:
        if call is _CALLS[5]:
            pytest.skip("bincount takes integers, which grad does not differentiate")
        f, x = yax.grad(lambda v: jnp.sum(call(v)[0] * 1.0)), x.astype(np.float32)
    with pytest.raises(errors.ConcretizationError) as info:
        f(x)
    name = next(n for n, c in zip(_NAMES, _CALLS, strict=True) if c is call)
    assert f"jnp.{name}" in str(info.value) and "size=" in str(info.value)


def test_vmap_matches_loop():
    xs = RNG.integers(0, 4, size=(3, 6)).astype(np.int32)
    sorted_rows = np.sort(RNG.normal(size=(3, 5)).astype(np.float32), axis=1)
    qs = RNG.normal(size=(3, 4)).astype(np.float32)
    cases = [
        (lambda a, v: jnp.searchsorted(a, v), (sorted_rows, qs)),
        (lambda a, v: jnp.searchsorted(a, v, "right", method="compare_all"),
         (sorted_rows, qs)),
        (lambda x: jnp.nonzero(x, size=4, fill_value=-1)[0], (xs,)),
        (lambda x: jnp.unique(x, size=5, return_counts=True), (xs,)),
        (lambda x: jnp.bincount(x, length=5), (xs,)),
        (lambda x: jnp.isin(x, np.array([1, 3], np.int32)), (xs,)),
        (lambda x: jnp.setdiff1d(x, np.array([1], np.int32), size=4), (xs,)),
    ]
    for f, args in cases:
        got, fj = yax.jit(yax.vmap(f))(*args), yax.jit(f)
        for i in range(3):
            want = fj(*(a[i] for a in args))
            for g, w in zip(yax.tree_util.tree_leaves(got), yax.tree_util.tree_leaves(want),
                            strict=True):
                assert_close(np.asarray(g)[i], w)


def test_grads_through_data_dependent_selection(x64):
    x = RNG.normal(size=(6,))
    edges = np.array([-1.0, 0.0, 1.0])
    # values picked by a static-size nonzero/unique are differentiable in the data
    check_grads(lambda a: a[jnp.nonzero(a > 0, size=3)[0]], (x,), order=1)
    check_grads(lambda a: jnp.unique(a, size=6), (x,), order=1)
    check_grads(lambda a: a * jnp.digitize(a, edges), (x,), order=1)


def test_x64_result_dtypes_match_jax(x64):
    x = RNG.normal(size=(4, 5))
    a = np.sort(x[0])
    xi = np.arange(12).reshape(3, 4)
    cases = [lambda m: m.searchsorted(a, x), lambda m: m.digitize(x, a),
             lambda m: m.lexsort((x[0], x[1])), lambda m: m.argpartition(x, 2),
             lambda m: m.nonzero(xi, size=3), lambda m: m.bincount(xi.ravel(), length=4),
             lambda m: m.unique(xi, return_index=True, return_inverse=True,
                                return_counts=True, size=4),
             lambda m: m.isin(xi, np.array([1, 5]))]
    for f in cases:
        # jitted: one compile per case instead of one per primitive in a new dtype; jax's
        # result dtypes are those of its trace, which eval_shape gives without compiling
        got = jax.tree_util.tree_leaves(yax.jit(lambda f=f: f(jnp))())
        want = jax.tree_util.tree_leaves(jax.eval_shape(lambda f=f: f(jnp_ref)))
        assert [np.asarray(g).dtype for g in got] == [np.dtype(w.dtype) for w in want]


_FLOATS = st.lists(st.sampled_from([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0, np.nan]), min_size=8,
                   max_size=8)
_SEARCH = yax.jit(lambda a, v: (jnp.searchsorted(a, v), jnp.searchsorted(a, v, "right")))
_UNIQUE = yax.jit(lambda x: jnp.unique(x, return_counts=True, size=8, fill_value=-9.0))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(_FLOATS, _FLOATS)
def test_searchsorted_and_unique_properties(a, v):
    a = np.sort(np.array(a, np.float32))
    v = np.array(v, np.float32)
    left, right = _SEARCH(a, v)
    assert_close(left, np.searchsorted(a, v, "left").astype(np.int32))
    assert_close(right, np.searchsorted(a, v, "right").astype(np.int32))
    vals, counts = _UNIQUE(v)
    want_vals, want_counts = np.unique(v, return_counts=True)  # NumPy >= 1.21: one NaN
    k = want_vals.shape[0]
    assert_close(np.asarray(vals)[:k], want_vals)
    assert_close(np.asarray(counts)[:k], want_counts.astype(np.int32))
    assert np.all(np.asarray(vals)[k:] == -9.0) and np.all(np.asarray(counts)[k:] == 0)


def test_edge_cases_match_jax():
    c = np.array([1 + 1j, 1 - 1j, np.nan, 1 + 1j, 0j, -1 + 5j], np.complex64)
    b = np.array([True, False, True, True])
    check(lambda m, c: m.unique(c, return_counts=True), c, eager_only=True)
    check(lambda m, c: m.union1d(c, c[:2] * 2, size=8), c)
    check(lambda m, c: m.isin(c, c[:2]), c)
    check(lambda m, b: m.unique(b, return_counts=True), b, eager_only=True)
    check(lambda m, b: m.bincount(b), b, eager_only=True)
    check(lambda m: m.unique(np.zeros((0,), np.float32), size=2, fill_value=5.0))
    with pytest.raises(ValueError, match="fill_value"):
        jnp.unique(np.zeros((0,), np.float32), size=2)
    check(lambda m: m.unique(np.array([3, -1, 3], np.int8), size=3))
    check(lambda m: m.nonzero(b, size=0))
    check(lambda m: m.searchsorted(np.array([1, 2, 3], np.int32),
                                   np.array([1.5, 2.0], np.float32)))
