"""yax.ops.segment_{sum,max,min,prod} against jax.ops: values (empty segments, dropped and
clipped ids, buckets, several dtypes), eager and jit, derivatives, vmap against a loop, errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import yax
from tests.harness import assert_close, check_eager_and_jit
from yax import ops
from yax.test_util import check_grads

NAMES = ["segment_sum", "segment_max", "segment_min", "segment_prod"]
IDS = np.array([0, 0, 3, 3, 3, 1, 0], np.int32)  # segment 2 and 4 are empty


def _data(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("rest", [(), (2, 3)])
def test_values_match_jax(name, dtype, rest):
    data = _data(0, (len(IDS),) + rest, dtype)
    want = getattr(jax.ops, name)(data, IDS, num_segments=5)
    ours = getattr(ops, name)
    check_eager_and_jit(lambda d, i: ours(d, i, num_segments=5), [data, IDS], np.asarray(want))


@pytest.mark.parametrize("name", ["segment_max", "segment_min"])
def test_bool_and_empty_segment_identities(name):
    data = _data(1, (len(IDS),), np.bool_)
    want = getattr(jax.ops, name)(data, IDS, num_segments=5)
    assert_close(getattr(ops, name)(data, IDS, num_segments=5), np.asarray(want))
    floats = getattr(ops, name)(np.ones(2, np.float32), np.array([0, 0]), num_segments=2)
    assert np.asarray(floats)[1] == (-np.inf if name == "segment_max" else np.inf)


@pytest.mark.parametrize("name", NAMES)
def test_out_of_range_ids_dropped_or_clipped(name):
    data = _data(2, (6, 2), np.float32)
    ids = np.array([0, -1, 2, 7, 1, 3], np.int32)
    for mode in (None, "clip"):
        want = getattr(jax.ops, name)(data, ids, num_segments=4, mode=mode)
        got = getattr(ops, name)(data, ids, num_segments=4, mode=mode)
        assert_close(got, np.asarray(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_bucket_size(name):
    data = _data(3, (len(IDS), 2), np.float32)
    want = getattr(jax.ops, name)(data, IDS, num_segments=5, bucket_size=3)
    got = yax.jit(lambda d, i: getattr(ops, name)(d, i, num_segments=5, bucket_size=3))(data, IDS)
    assert_close(got, np.asarray(want), rtol=1e-6, atol=1e-6)


def test_num_segments_inferred_from_concrete_ids():
    data = _data(4, (len(IDS),), np.float32)
    got = ops.segment_sum(data, IDS)
    assert got.shape == (4,)
    assert_close(got, np.asarray(jax.ops.segment_sum(data, IDS)), rtol=1e-6, atol=1e-6)
    # sorted/unique promises change nothing when they hold
    ids = np.arange(len(IDS), dtype=np.int32)
    got = ops.segment_max(data, ids, indices_are_sorted=True, unique_indices=True)
    assert_close(got, data)


@pytest.mark.parametrize("name", NAMES)
def test_grads_finite_differences(x64, name):
    # distinct values: no ties in max/min
    data = (np.random.default_rng(5).permutation(14).reshape(7, 2) / 5.0 + 0.3)
    f = lambda d: getattr(ops, name)(d, IDS, num_segments=5)  # noqa: E731
    # empty segments of max/min are +-inf; keep them out of the finite differences
    g = (lambda d: f(d)[np.array([0, 1, 3])]) if name in ("segment_max", "segment_min") else f
    check_grads(g, (data,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", NAMES)
def test_vjp_with_ties_matches_jax(name):
    data = np.array([1.0, 2.0, 2.0, 0.5, 0.5, 3.0, 0.0], np.float32)
    ct = np.array([1.0, -2.0, 0.0, 4.0, 5.0], np.float32)
    if name == "segment_prod":  # jax has no reverse mode here: the product of the others
        want = np.array([ct[s] * np.prod(data[(IDS == s) & (np.arange(7) != i)])
                         for i, s in enumerate(IDS)], np.float32)
    else:
        want = jax.vjp(lambda d: getattr(jax.ops, name)(d, IDS, num_segments=5), data)[1](ct)[0]
    got = yax.vjp(lambda d: getattr(ops, name)(d, IDS, num_segments=5), data)[1](
        yax.device_put(ct))[0]
    assert_close(got, np.asarray(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_loop(name):
    data = _data(6, (3, len(IDS), 2), np.float32)
    ids = np.stack([IDS, IDS[::-1], np.roll(IDS, 2)])
    f = lambda d, i: getattr(ops, name)(d, i, num_segments=5)  # noqa: E731
    loop = np.stack([np.asarray(f(d, i)) for d, i in zip(data, ids)])
    assert_close(yax.vmap(f)(data, ids), loop)
    # batched data with shared ids, batch axis not first
    loop = np.stack([np.asarray(f(d, IDS)) for d in data])
    assert_close(yax.vmap(f, in_axes=(1, None), out_axes=0)(np.moveaxis(data, 0, 1), IDS), loop)


def test_grad_of_vmap():
    data = _data(7, (3, len(IDS)), np.float32)
    f = lambda d: (ops.segment_max(d, IDS, num_segments=5)[:4] ** 2).sum()  # noqa: E731
    got = yax.grad(lambda d: yax.vmap(f)(d).sum())(data)
    want = jax.grad(lambda d: jax.vmap(
        lambda r: (jax.ops.segment_max(r, IDS, num_segments=5)[:4] ** 2).sum())(d).sum())(data)
    assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-6)


def test_errors():
    data = np.ones((4, 2), np.float32)
    with pytest.raises(yax.errors.ConcretizationError, match="num_segments"):
        yax.jit(lambda d, i: ops.segment_sum(d, i))(data, np.array([0, 1, 1, 0], np.int32))
    with pytest.raises(yax.errors.ShapeError, match=r"\(4, 2\).*\(3,\)"):
        ops.segment_sum(data, np.array([0, 1, 1]), num_segments=2)
    with pytest.raises(yax.errors.DTypeError, match="integers"):
        ops.segment_sum(data, np.array([0.0, 1.0, 1.0, 0.0]), num_segments=2)
    with pytest.raises(yax.errors.ShapeError, match="non-negative"):
        ops.segment_sum(data, np.array([0, 1, 1, 0]), num_segments=-1)
    with pytest.raises(yax.errors.ConcretizationError, match="static"):
        yax.jit(lambda d, n: ops.segment_sum(d, np.array([0, 1, 1, 0]), num_segments=n))(
            data, 3)
