"""JVP and transpose rules of the shape and slicing primitives.

Each primitive is checked to second order with `check_grads` (forward mode against central finite
differences, reverse mode through the transposition identity) on hypothesis-drawn shapes and
params, in float64. Gather and scatter gradients are also compared with real jax.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yax
import yax.numpy as jnp
from yax import lax
from yax.test_util import check_grads

pytestmark = pytest.mark.usefixtures("x64")

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _rand(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def _check(f, *args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


# --- shape primitives -----------------------------------------------------------------------------

@SETTINGS
@given(st.data())
def test_broadcast_in_dim(data):
    shape = data.draw(shapes)
    sizes = [data.draw(st.sampled_from([1, d])) for d in shape]  # size-1 axes get stretched
    n_new = data.draw(st.integers(0, 2))
    out_rank = len(shape) + n_new
    dims = tuple(sorted(data.draw(st.permutations(range(out_rank)))[:len(shape)]))
    out = [2] * out_rank
    for d, size in zip(dims, shape):
        out[d] = size
    x = _rand(sizes)
    _check(lambda x: lax.broadcast_in_dim(x, tuple(out), dims), x)


@SETTINGS
@given(shapes, st.data())
def test_reshape_and_transpose(shape, data):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = _rand(shape)
    _check(lambda x: lax.transpose(x, perm), x)
    _check(lambda x: lax.reshape(x, (int(np.prod(shape)),), perm), x)
    _check(lambda x: lax.reshape(x, shape[::-1] + (1,)), x)


@SETTINGS
@given(shapes, st.data())
def test_squeeze_expand_dims_rev(shape, data):
    out_rank = len(shape) + 2
    new = tuple(sorted(data.draw(st.permutations(range(out_rank)))[:2]))
    x = _rand(shape)
    _check(lambda x: lax.expand_dims(x, new), x)
    _check(lambda x: lax.squeeze(lax.expand_dims(x, new), new), x)
    axes = tuple(a for a in range(len(shape)) if data.draw(st.booleans()))
    _check(lambda x: lax.rev(x, axes), x)


@SETTINGS
@given(shapes, st.data())
def test_concatenate(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=3))
    args = []
    for k, s in enumerate(sizes):
        sh = list(shape)
        sh[dim] = s
        args.append(_rand(sh, k))
    _check(lambda *xs: lax.concatenate(xs, dim), *args)


@SETTINGS
@given(shapes, st.data())
def test_pad(shape, data):
    config = []
    for d in shape:
        interior = data.draw(st.integers(0, 2))
        full = d + (d - 1) * interior
        lo = data.draw(st.integers(-min(full, 2), 2))
        hi = data.draw(st.integers(-min(full + lo, 2), 2))
        config.append((lo, hi, interior))
    x, value = _rand(shape), np.float64(0.7)
    _check(lambda x, v: lax.pad(x, v, config), x, value)


def test_pad_rank0_and_iota():
    _check(lambda x, v: lax.pad(x, v, ()), np.float64(1.5), np.float64(0.5))
    # iota carries no tangent; the product rule only sees x's
    _check(lambda x: x * lax.iota(np.float64, 4), _rand((4,)))


# --- slicing primitives ---------------------------------------------------------------------------

@SETTINGS
@given(shapes, st.data())
def test_slice(shape, data):
    start, limit, strides = [], [], []
    for d in shape:
        s = data.draw(st.integers(0, d))
        start.append(s)
        limit.append(data.draw(st.integers(s, d)))
        strides.append(data.draw(st.integers(1, 3)))
    _check(lambda x: lax.slice(x, start, limit, strides), _rand(shape))


@SETTINGS
@given(shapes, st.data())
def test_dynamic_slice_and_update(shape, data):
    sizes = [data.draw(st.integers(0, d)) for d in shape]
    # out-of-range starts are clamped; the rules must clamp the same way
    starts = [np.int32(data.draw(st.integers(-1, d + 1))) for d in shape]
    x, update = _rand(shape), _rand(sizes, 1)
    _check(lambda x: lax.dynamic_slice(x, starts, sizes, allow_negative_indices=False), x)
    _check(lambda x, u: lax.dynamic_update_slice(x, u, starts, allow_negative_indices=False),
           x, update)


@SETTINGS
@given(shapes, st.data())
def test_gather_indexing(shape, data):
    n = shape[0]
    idx = np.array(data.draw(st.lists(st.integers(-n - 1, n), min_size=1, max_size=5)), np.int32)
    x = _rand(shape)
    _check(lambda x: jnp.asarray(x)[idx % n], x)
    _check(lambda x: jnp.asarray(x).at[idx].get(mode="clip"), x)
    _check(lambda x: jnp.asarray(x).at[idx].get(mode="fill", fill_value=0.0), x)
    _check(lambda x: jnp.take(x, idx, axis=-1, mode="clip"), x)


def _gather_cases():
    x = _rand((3, 4, 5))
    # windows of (2, 3) from a (4, 5) slab per batch entry of axis 0, operand_batching_dims
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(1, 2), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    idx = np.array([[0, 1], [2, 3], [1, 0]], np.int32)
    yield x, idx, dn, (1, 2, 3), "clip"
    dn2 = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 2),
                                     start_index_map=(0, 2))
    idx2 = np.array([[0, 4], [2, 1], [2, 1], [5, 0]], np.int32)
    yield x, idx2, dn2, (1, 3, 1), "fill"


@pytest.mark.parametrize("case", range(2))
def test_gather_general_against_jax(case):
    import jax
    x, idx, dn, sizes, mode = list(_gather_cases())[case]

    def f(gather, x):
        return gather(x, idx, dn, sizes, mode=mode, fill_value=0.0)

    _check(lambda x: f(lax.gather, x), x)
    ct = _rand(np.shape(f(lax.gather, x)), 2)
    got = yax.vjp(lambda x: f(lax.gather, x), x)[1](ct)[0]
    # the oracle jitted: eager jax compiles a program per primitive
    want = jax.jit(lambda x, ct: jax.vjp(lambda x: f(jax.lax.gather, x), x)[1](ct)[0])(x, ct)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


@SETTINGS
@given(shapes, st.data())
def test_scatter_add_and_set(shape, data):
    n = shape[0]
    idx = np.array(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=4)), np.int32)
    x, upd = _rand(shape), _rand((len(idx),) + shape[1:], 1)
    # index n is out of bounds: updates there are dropped
    _check(lambda x, u: jnp.asarray(x).at[idx].add(u, mode="drop"), x, upd)
    # duplicates: one update wins
    _check(lambda x, u: jnp.asarray(x).at[idx].set(u, mode="drop"), x, upd)


@settings(SETTINGS, max_examples=4)  # the duplicate-index scatter_mul rule is costly at order 2
@given(shapes, st.data())
def test_scatter_mul_min_max(shape, data):
    n = shape[0]
    idx = np.array(data.draw(st.permutations(range(n))), np.int32)  # unique indices
    dup = np.concatenate([idx, idx[:1]])
    x = _rand(shape)
    _check(lambda x, u: jnp.asarray(x).at[idx].multiply(u, unique_indices=True), x,
           _rand(shape, 1))
    _check(lambda x, u: jnp.asarray(x).at[dup].multiply(u), x, _rand((n + 1,) + shape[1:], 2))
    for op in ("min", "max"):  # distinct random values: no ties
        _check(lambda x, u, op=op: getattr(jnp.asarray(x).at[dup], op)(u), x,
               _rand((n + 1,) + shape[1:], 3))


def test_scatter_min_ties_share_the_derivative():
    x, u = np.array([1.0, 5.0]), np.array([1.0, 1.0, 7.0])
    idx = np.array([0, 0, 1], np.int32)
    grads = yax.grad(lambda x, u: jnp.asarray(x).at[idx].min(u)[0], argnums=(0, 1))(x, u)
    np.testing.assert_allclose(np.asarray(grads[0]), [1 / 3, 0])
    np.testing.assert_allclose(np.asarray(grads[1]), [1 / 3, 1 / 3, 0])


def test_scatter_mul_duplicates_with_zeros():
    # each update's derivative is x times the product of the other updates at its entry
    x, u = np.array([2.0, 7.0, 1.0]), np.array([0.0, 3.0, 5.0, 0.0, 0.0, 0.0])
    idx = np.array([0, 0, 0, 1, 2, 2], np.int32)
    got = yax.grad(lambda u: jnp.asarray(x).at[idx].multiply(u).sum())(u)
    np.testing.assert_allclose(np.asarray(got), [30.0, 0.0, 0.0, 7.0, 0.0, 0.0])


def test_scatter_overlapping_windows():
    # windows of size 2 starting at 0 and 1 overlap in one entry: the later one wins it
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0,))
    idx = np.array([[0], [1], [3]], np.int32)
    x, upd = _rand((5,)), _rand((3, 2), 1)
    for mode in ("clip", "drop"):
        _check(lambda x, u, mode=mode: lax.scatter(x, idx, u, dn, mode=mode), x, upd)
        _check(lambda x, u, mode=mode: lax.scatter_add(x, idx, u, dn, mode=mode), x, upd)


@pytest.mark.parametrize("op", ["add", "set", "mul", "min", "max"])
def test_scatter_grads_against_jax(op):
    import jax
    import jax.numpy as jjnp
    idx = np.array([2, 0, 2, 1], np.int32)
    unique = np.array([2, 0, 1], np.int32)
    i = unique if op == "mul" else idx
    x, upd = _rand((4, 3)), _rand((len(i), 3), 1)

    def f(np_, x, u):
        update = getattr(np_.asarray(x).at[i], {"mul": "multiply"}.get(op, op))
        # jax differentiates scatter_mul's updates only with unique indices
        ref = update(u, unique_indices=True) if op == "mul" else update(u)
        return np_.sum(np_.sin(ref) * np_.arange(12.0).reshape(4, 3))

    got = yax.grad(lambda x, u: f(jnp, x, u), argnums=(0, 1))(x, upd)
    want = jax.jit(jax.grad(lambda x, u: f(jjnp, x, u), argnums=(0, 1)))(x, upd)  # one compile
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def test_linear_transpose_of_dynamic_update_slice():
    start = np.int32(1)

    def f(x, u):
        return lax.dynamic_update_slice(x, u, (start,))
    ct = np.arange(4.0)
    ct_x, ct_u = yax.linear_transpose(f, np.zeros(4), np.zeros(2))(ct)
    np.testing.assert_allclose(np.asarray(ct_x), [0.0, 0.0, 0.0, 3.0])
    np.testing.assert_allclose(np.asarray(ct_u), [1.0, 2.0])
