"""Batching rules of the shape and slicing primitives.

`yax.vmap(f, in_axes, out_axes)` must equal stacking `f` applied to each example, for
hypothesis-drawn shapes and in_axes/out_axes (None and negative axes included), with batched
operands, batched indices (gather, scatter, dynamic slices), or both.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
import yax.numpy as jnp
from tests.harness import assert_close
from yax import lax

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True)
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
BATCH = 3


def _floats(shape, seed):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _ints(low, high, shape, seed):
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(np.int32)


def _check_vmap(data, f, make_arg_examples):
    """make_arg_examples[k](seed) makes argument k of one example. Draws in_axes (None or any
    axis, negative too, at least one batched) and out_axes, then compares with a loop."""
    examples = [[make(b) for make in make_arg_examples] for b in range(BATCH)]
    n = len(make_arg_examples)
    in_axes = []
    for k in range(n):
        rank = np.ndim(examples[0][k])
        in_axes.append(data.draw(st.one_of(st.none(), st.integers(-rank - 1, rank)),
                                 label=f"in_axes[{k}]"))
    if all(a is None for a in in_axes):
        in_axes[data.draw(st.integers(0, n - 1))] = 0
    args = [examples[0][k] if a is None else np.stack([e[k] for e in examples], axis=a)
            for k, a in enumerate(in_axes)]
    per_example = [f(*[examples[0][k] if a is None else e[k] for k, a in enumerate(in_axes)])
                   for e in examples]
    out_rank = np.ndim(per_example[0])
    out_axes = data.draw(st.integers(-out_rank - 1, out_rank), label="out_axes")
    got = yax.vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    assert_close(got, np.stack([np.asarray(y) for y in per_example], axis=out_axes))


# --- shape primitives -----------------------------------------------------------------------------

@SETTINGS
@given(shapes, st.data())
def test_broadcast_reshape_transpose(shape, data):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = lambda s: _floats(shape, s)  # noqa: E731
    _check_vmap(data, lambda x: lax.broadcast_in_dim(x, (2,) + shape, tuple(range(1, len(shape)
                                                                                + 1))), [x])
    _check_vmap(data, lambda x: lax.transpose(x, perm), [x])
    _check_vmap(data, lambda x: lax.reshape(x, (-1,), perm), [x])
    _check_vmap(data, lambda x: lax.reshape(x, shape[::-1]), [x])


@SETTINGS
@given(shapes, st.data())
def test_squeeze_expand_dims_rev(shape, data):
    new = tuple(sorted(data.draw(st.permutations(range(len(shape) + 2)))[:2]))
    axes = tuple(a for a in range(len(shape)) if data.draw(st.booleans()))
    x = lambda s: _floats(shape, s)  # noqa: E731
    _check_vmap(data, lambda x: lax.squeeze(lax.expand_dims(x, new), new[:1]), [x])
    _check_vmap(data, lambda x: lax.rev(x, axes), [x])


@SETTINGS
@given(shapes, st.data())
def test_concatenate(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=3))
    makers = []
    for k, s in enumerate(sizes):
        sh = list(shape)
        sh[dim] = s
        makers.append(lambda seed, sh=tuple(sh), k=k: _floats(sh, 10 * seed + k))
    _check_vmap(data, lambda *xs: lax.concatenate(xs, dim), makers)


@SETTINGS
@given(shapes, st.data())
def test_pad(shape, data):
    config = []
    for d in shape:
        interior = data.draw(st.integers(0, 2))
        full = d + (d - 1) * interior
        lo = data.draw(st.integers(-min(full, 2), 2))
        config.append((lo, data.draw(st.integers(-min(full + lo, 2), 2)), interior))
    _check_vmap(data, lambda x, v: lax.pad(x, v, config),
                [lambda s: _floats(shape, s), lambda s: np.float32(s + 0.5)])


def test_pad_per_example_integer_value():
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    got = yax.vmap(lambda x, v: lax.pad(x, v, [(1, 0, 1)]))(x, np.array([7, 8, 9], np.int32))
    assert_close(got, np.array([[7, 0, 7, 1], [8, 2, 8, 3], [9, 4, 9, 5]], np.int32))


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
    _check_vmap(data, lambda x: lax.slice(x, start, limit, strides),
                [lambda s: _floats(shape, s)])


@SETTINGS
@given(shapes, st.data())
def test_dynamic_slice_batched_starts(shape, data):
    sizes = [data.draw(st.integers(0, d)) for d in shape]
    # one scalar start per axis (out-of-range ones clamp, negative ones wrap in the wrapper)
    starts = [lambda s, d=d, k=k: np.int32(_ints(-d - 1, d + 2, (), 7 * s + k))
              for k, d in enumerate(shape)]
    _check_vmap(data, lambda x, *ss: lax.dynamic_slice(x, ss, sizes),
                [lambda s: _floats(shape, s)] + starts)


@SETTINGS
@given(shapes, st.data())
def test_dynamic_update_slice_batched_starts(shape, data):
    sizes = tuple(data.draw(st.integers(0, d)) for d in shape)
    starts = [lambda s, d=d, k=k: np.int32(_ints(-1, d + 2, (), 5 * s + k))
              for k, d in enumerate(shape)]
    _check_vmap(data, lambda x, u, *ss: lax.dynamic_update_slice(x, u, ss),
                [lambda s: _floats(shape, s), lambda s: _floats(sizes, s + 100)] + starts)


@SETTINGS
@given(shapes, st.data())
def test_gather_indexing(shape, data):
    n = shape[0]
    k = data.draw(st.integers(1, 4))
    x = lambda s: _floats(shape, s)  # noqa: E731
    idx = lambda s: _ints(-n, n, (k,), s + 50)  # noqa: E731
    _check_vmap(data, lambda x, i: jnp.asarray(x)[i], [x, idx])
    _check_vmap(data, lambda x, i: jnp.asarray(x).at[i + 1].get(mode="fill", fill_value=-1.0),
                [x, idx])
    if len(shape) > 1:  # an index array on an inner axis, a whole axis before it
        m = shape[1]
        _check_vmap(data, lambda x, i: jnp.asarray(x)[:, i % m], [x, idx])


@SETTINGS
@given(shapes, st.data(), st.sampled_from(["add", "set", "multiply", "min", "max"]))
def test_scatter_indexing(shape, data, op):
    n = shape[0]
    k = data.draw(st.integers(1, 4))
    makers = [lambda s: _floats(shape, s), lambda s: _ints(-n, n + 1, (k,), s + 50),
              lambda s: _floats((k,) + shape[1:], s + 9)]
    # index n is out of bounds: the update is dropped
    _check_vmap(data, lambda x, i, u: getattr(jnp.asarray(x).at[i], op)(u, mode="drop"), makers)


def test_gather_scatter_with_batching_dims():
    # primitives that already use batching dims get one more pair
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,),
                                      operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(0,))
    x, i = _floats((4, 2, 3, 5), 0), _ints(0, 3, (4, 2, 1), 1)
    u = _floats((4, 2, 5), 2)

    def f(x, i, u):
        g = lax.gather(x, i, dn, (1, 1, 5), mode="clip")
        return lax.scatter_add(x, i, g * u, sdn, mode="clip")
    want = np.stack([f(x[b], i[b], u[b]) for b in range(4)])
    assert_close(yax.vmap(f)(x, i, u), want, rtol=1e-5, atol=1e-5)
    assert_close(yax.vmap(f, (0, None, 1), 2)(x, i[0], np.moveaxis(u, 0, 1)),
                 np.stack([f(x[b], i[0], u[b]) for b in range(4)], axis=2), rtol=1e-5, atol=1e-5)


def test_iota_inside_vmap():
    got = yax.vmap(lambda x: x * lax.iota(np.float32, 3))(np.ones((2, 3), np.float32))
    assert_close(got, np.tile(np.arange(3, dtype=np.float32), (2, 1)))
