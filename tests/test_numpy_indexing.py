"""NumPy indexing (`getitem`, `.at[]`, take, take_along_axis) against NumPy and jax.numpy,
eagerly and under jit, plus the lowering shape, bounds checks and error messages."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import yax
from tests.harness import assert_close, check_eager_and_jit
from tests.suiteb_util import JaxTable
from yax import errors
from yax.numpy.indexing import (
    IndexUpdateHelper,
    NonConcreteBooleanIndexError,
    getitem,
    take,
    take_along_axis,
)

# NumPy's int64 index arrays become int32 on the way in (x64 is off); that warning is expected
pytestmark = pytest.mark.filterwarnings("ignore:a int64 input was truncated")

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
MASK = A > 31

# Static index expressions on a (3, 4, 5) array.
INDICES = [
    0, -1, 2, (1, 2), (-1, -2, -3), slice(1, 3), slice(None, None, -1), slice(None, None, 2),
    (slice(None), slice(3, 0, -2)), (Ellipsis, 1), (Ellipsis, slice(1, None), None),
    (None, 0, slice(None, None, 2)), (0, None, None, -1), Ellipsis, (), (slice(5, 1),),
    (slice(-100, 100, 3), slice(None), slice(4, None, -3)),
    ([0, 2],), ([[0], [2]],), (slice(None), [0, 2, 3], slice(1, None)),
    ([0, 1], slice(None), [1, 2]),  # advanced separated by a slice: broadcast dims go first
    (0, slice(None), [1, 2]),  # an int counts as advanced next to arrays
    (slice(None), 1, [0, 4]),  # adjacent: broadcast dims stay in place
    (np.array([[0], [1]]), np.array([0, 2, 1])), ([0, 0, 2, -1],), (Ellipsis, [-1, 0]),
    (1, [0, 1], None, [1, 2]), ([0, 2], None, [1, 3]), (None, [1, 2], Ellipsis, slice(None, 2)),
    (MASK,), (MASK[:, :, 0],), (slice(None), MASK[0, :, 0]), (MASK[:, 0, 0], 1), (True,),
    (False, 0),
    (np.array([], np.int32),),
]


def _for_jax(idx):
    """jax.numpy wants arrays, not lists, inside an index tuple."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    return tuple(np.asarray(i) if isinstance(i, list) else i for i in idx)


# jax's indexing of A for the whole table in one jitted program (tests/suiteb_util.py) rather
# than eager jax's compiles per case (the indices are static, as they are eagerly)
def _jax_getitem(idx):
    idx = _for_jax(idx)
    return lambda x: x[idx]


_GETITEM_ORACLE = JaxTable(lambda: {i: (_jax_getitem(idx), [A]) for i, idx in enumerate(INDICES)})


@pytest.mark.parametrize("i", range(len(INDICES)), ids=[str(i)[:40] for i in INDICES])
def test_getitem_static_index(i):
    idx = INDICES[i]
    want = A[_for_jax(idx)]
    np.testing.assert_array_equal(_GETITEM_ORACLE()[i], want)
    check_eager_and_jit(lambda x: getitem(x, idx), [A], want)


TRACED = [  # (index builder from traced arrays, concrete index arrays)
    (lambda i: (i,), [np.array([2, 0, -1])]),
    (lambda i: (slice(None), i), [np.array([[3, 0], [1, 1]])]),
    (lambda i, j: (i, slice(None), j), [np.array([0, 1]), np.array([4, 0])]),
    (lambda i, j: (i, j), [np.array([[0], [2]]), np.array([1, 3])]),
    (lambda i: (Ellipsis, None, i), [np.array([-5, 4])]),
    (lambda i: (i, 1, slice(None, None, -2)), [np.array(2)]),
    (lambda i: (slice(1, None), i), [np.array(-1)]),
    (lambda i, j: (j, None, i), [np.array(1), np.array(2)]),
]


@pytest.mark.parametrize("case", range(len(TRACED)))
def test_getitem_traced_indices(case):
    make, idx = TRACED[case]
    idx = [i.astype(np.int32) for i in idx]
    want = A[make(*idx)]
    check_eager_and_jit(lambda x, *i: getitem(x, make(*i)), [A, *idx], want)


def test_getitem_dtypes_and_scalar():
    for dt in (np.int8, np.uint32, np.bool_, np.float16):
        x = (np.arange(12) % 3).astype(dt).reshape(3, 4)
        check_eager_and_jit(lambda x: getitem(x, (slice(None), [3, 0])), [x], x[:, [3, 0]])
        check_eager_and_jit(lambda x: getitem(x, (1, 2)), [x], x[1, 2])


def test_basic_indexing_lowers_without_gather():
    x = yax.device_put(A)
    jaxpr = yax.make_jaxpr(lambda x: getitem(x, slice(1, 3)))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["slice"]
    jaxpr = yax.make_jaxpr(lambda x: getitem(x, 0))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["slice", "squeeze"]
    jaxpr = yax.make_jaxpr(lambda x: getitem(x, (Ellipsis, slice(None, None, -1))))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["rev"]
    jaxpr = yax.make_jaxpr(lambda x: getitem(x, (slice(None), None)))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["reshape"]
    assert not yax.make_jaxpr(lambda x: getitem(x, Ellipsis))(x).eqns
    names = [e.primitive.name for e in yax.make_jaxpr(lambda x, i: getitem(x, i))(x, 1).eqns]
    assert "dynamic_slice" in names and "gather" not in names
    names = [e.primitive.name for e in yax.make_jaxpr(
        lambda x: getitem(x, np.array([0, 1])))(x).eqns]
    assert names == ["gather"]


@pytest.mark.parametrize("idx", [3, (0, 4), (0, 0, -6), (np.array([0, 3]),),
                                 (slice(None), [0, -5]),
                                 (yax.device_put(np.array([1, 7], np.int32)),)])
def test_concrete_out_of_bounds_follows_jax(idx):
    """As in JAX (and as under jit): reads clamp, updates drop; no eager IndexError."""
    jidx = tuple(np.asarray(i) if isinstance(i, yax.Array) else i for i in
                 (idx if isinstance(idx, tuple) else (idx,)))
    assert_close(getitem(yax.device_put(A), idx), np.asarray(jnp.asarray(A)[jidx]))
    assert_close(IndexUpdateHelper(yax.device_put(A))[idx].set(0.0),
                 np.asarray(jnp.asarray(A).at[jidx].set(0.0)))


def test_concrete_out_of_bounds_message_with_check_indices():
    yax.config.update("check_indices", True)
    try:
        with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 4"):
            getitem(yax.device_put(A), (0, 7))
    finally:
        yax.config.update("check_indices", False)


def test_traced_out_of_bounds_clamps_like_jax():
    x = np.arange(5.0, dtype=np.float32)
    f, jf = yax.jit(lambda x, i: getitem(x, i)), jax.jit(lambda x, i: x[i])
    for i in (7, -7, -1, 4, 100):
        assert_close(f(yax.device_put(x), i), jf(x, i))
    idx = np.array([9, -9, 2])
    g, jg = yax.jit(lambda x, i: getitem(x, i)), jax.jit(lambda x, i: x[i])
    assert_close(g(yax.device_put(x), idx), jg(x, idx))


def test_traced_out_of_bounds_update_is_dropped():
    x = np.arange(5.0, dtype=np.float32)
    f = yax.jit(lambda x, i: IndexUpdateHelper(x)[i].set(100.0))
    jf = jax.jit(lambda x, i: x.at[i].set(100.0))
    for i in (7, -7, -1, 0):
        assert_close(f(yax.device_put(x), i), jf(x, i))
    idx = np.array([9, -1, 1, -6])
    g = yax.jit(lambda x, i: IndexUpdateHelper(x)[i].add(1.0))
    assert_close(g(yax.device_put(x), idx), jax.jit(lambda x, i: x.at[i].add(1.0))(x, idx))


def test_traced_boolean_mask_raises():
    with pytest.raises(NonConcreteBooleanIndexError, match=r"jnp.where\(mask, x, 0\)") as info:
        yax.jit(lambda x, m: getitem(x, m))(yax.device_put(A), yax.device_put(MASK))
    assert isinstance(info.value, errors.YaxError)
    assert "size" in str(info.value)


def test_bad_indices():
    x = yax.device_put(A)
    with pytest.raises(IndexError, match="too many indices"):
        getitem(x, (0, 0, 0, 0))
    with pytest.raises(IndexError, match="single ellipsis"):
        getitem(x, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="boolean index"):
        getitem(x, np.ones((2, 2), bool))
    with pytest.raises(TypeError, match="integers"):
        getitem(x, np.array([0.5]))
    with pytest.raises(TypeError):
        getitem(x, "a")
    with pytest.raises(errors.ConcretizationError):
        yax.jit(lambda x, i: getitem(x, slice(i, None)))(x, 1)


# --- .at[] --------------------------------------------------------------------------------------

UPDATE_INDICES = [
    0, -1, (1, 2), slice(1, 3), slice(None, None, -1), (slice(None), slice(4, 0, -2)),
    (Ellipsis, 1), (None, 0), ([0, 2],), ([0, 0, 2, 0],), (slice(None), [1, 1, 3], 0),
    ([0, 1], slice(None), [1, 2]), (np.array([[0], [2]]), np.array([1, 1, 3])), (MASK,),
    (slice(None, None, 2), [0, -1]), (Ellipsis, slice(None, None, 3)),
]
OPS = ["set", "add", "multiply", "min", "max", "subtract"]


def _has_duplicates(idx) -> bool:
    idx = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype != bool
               and np.asarray(i).size != np.unique(np.asarray(i)).size for i in idx)


def _update_values(idx):
    shape = A[_for_jax(idx)].shape
    rng = np.random.default_rng(0)
    return rng.integers(-5, 60, shape).astype(np.float32)


def _jax_update(i, op, scalar):
    idx = _for_jax(UPDATE_INDICES[i])
    if scalar:
        return lambda x: getattr(x.at[idx], op)(7.0)
    return lambda x, v: getattr(x.at[idx], op)(v)


# jax's values for the whole table in one jitted program (tests/suiteb_util.py) rather than
# eager jax's compiles per case; yax's side of each case is unchanged
_AT_UPDATE_ORACLE = JaxTable(lambda: {
    (i, op, scalar): (_jax_update(i, op, scalar),
                      [A] if scalar else [A, _update_values(UPDATE_INDICES[i])])
    for i in range(len(UPDATE_INDICES)) for op in OPS for scalar in (False, True)})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("i", range(len(UPDATE_INDICES)),
                         ids=[str(i)[:30] for i in UPDATE_INDICES])
def test_at_update(i, op):
    idx = UPDATE_INDICES[i]
    if op == "set" and _has_duplicates(idx):
        pytest.skip("set with repeated indices keeps an unspecified one")
    v = _update_values(idx)
    want = _AT_UPDATE_ORACLE()[i, op, False]
    check_eager_and_jit(lambda x, v: getattr(IndexUpdateHelper(x)[idx], op)(v), [A, v], want)
    # a scalar update broadcasts to the indexed shape
    want = _AT_UPDATE_ORACLE()[i, op, True]
    check_eager_and_jit(lambda x: getattr(IndexUpdateHelper(x)[idx], op)(7.0), [A], want)


def test_at_add_repeated_indices_accumulate():
    x = np.zeros(4, np.float32)
    idx = np.array([1, 1, 3, 1])
    want = np.zeros(4, np.float32)
    np.add.at(want, idx, np.array([1, 2, 3, 4], np.float32))
    check_eager_and_jit(lambda x, i, v: IndexUpdateHelper(x)[i].add(v),
                        [x, idx, np.array([1, 2, 3, 4], np.float32)], want)
    check_eager_and_jit(lambda x, i: IndexUpdateHelper(x)[i].multiply(2.0),
                        [x + 1, idx], np.array([1, 8, 1, 2], np.float32))


def test_at_traced_scalar_and_arrays():
    idx = np.array([2, 0])
    want = jnp.asarray(A).at[:, idx].set(-1.0)
    check_eager_and_jit(lambda x, i: IndexUpdateHelper(x)[:, i].set(-1.0), [A, idx], want)
    want = jnp.asarray(A).at[1, 2].add(5.0)
    check_eager_and_jit(lambda x, i, j: IndexUpdateHelper(x)[i, j].add(5.0),
                        [A, np.int32(1), np.int32(2)], want)


@pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")
def test_at_casts_update_to_dtype():
    x = np.arange(6, dtype=np.int32)
    want = jnp.asarray(x).at[1:3].set(jnp.array([2.7, -1.2], jnp.float32))
    check_eager_and_jit(lambda x, v: IndexUpdateHelper(x)[1:3].set(v),
                        [x, np.array([2.7, -1.2], np.float32)], want)
    out = IndexUpdateHelper(yax.device_put(x))[0].set(True)
    assert out.dtype == np.int32


def test_at_update_shape_error():
    with pytest.raises(errors.ShapeError):
        IndexUpdateHelper(yax.device_put(A))[0].set(np.ones((3, 5), np.float32))


def test_at_get_modes():
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([1, 7, -1, -8])
    for mode, fill in (("fill", None), ("fill", -3.0), ("clip", None)):
        want = jnp.asarray(x).at[idx].get(mode=mode, fill_value=fill)
        check_eager_and_jit(lambda x, i: IndexUpdateHelper(x)[i].get(mode=mode, fill_value=fill),
                            [x, idx], want)
    # an explicit mode switches off the eager bounds check
    assert np.isnan(float(IndexUpdateHelper(yax.device_put(x))[9].get(mode="fill")))
    want = jnp.asarray(x).at[idx].set(9.0, mode="clip")
    assert_close(IndexUpdateHelper(yax.device_put(x))[idx].set(9.0, mode="clip"), want)
    want = jnp.asarray(x).at[idx].add(9.0, mode="drop")
    assert_close(IndexUpdateHelper(yax.device_put(x))[idx].add(9.0, mode="drop"), want)


def test_at_divide_power_apply():
    x = np.arange(1.0, 7.0, dtype=np.float32)
    want = jnp.asarray(x).at[np.array([1, 1, 4])].divide(2.0)
    check_eager_and_jit(lambda x: IndexUpdateHelper(x)[np.array([1, 1, 4])].divide(2.0), [x],
                        want)
    xi = np.arange(6, dtype=np.int32)
    assert_close(IndexUpdateHelper(yax.device_put(xi))[2].divide(4),
                 jnp.asarray(xi).at[2].divide(4))
    want = jnp.asarray(x).at[2:4].power(2.0)
    check_eager_and_jit(lambda x: IndexUpdateHelper(x)[2:4].power(2.0), [x], want)
    want = x.copy()
    want[[0, 3]] = -want[[0, 3]]
    check_eager_and_jit(lambda x: IndexUpdateHelper(x)[np.array([0, 3])].apply(yax.lax.neg),
                        [x], want)


def test_update_lowerings():
    x = yax.device_put(A)
    names = [e.primitive.name for e in yax.make_jaxpr(
        lambda x: IndexUpdateHelper(x)[1:3].set(0.0))(x).eqns]
    assert names[-1] == "dynamic_update_slice" and "scatter" not in names
    names = [e.primitive.name for e in yax.make_jaxpr(
        lambda x, i: IndexUpdateHelper(x)[i].add(1.0))(x, np.array([0, 0])).eqns]
    assert names[-1] == "scatter_add"


# --- take / take_along_axis --------------------------------------------------------------------

TAKE_AXES, TAKE_MODES = [None, 0, 1, -1], [None, "clip", "wrap", "fill"]


def _take_indices(mode):
    if mode in ("clip", "wrap"):
        return np.array([[0, 7], [-1, -9]])
    return np.array([[0, 2], [-1, 3]])


_TAKE_ORACLE = JaxTable(lambda: {
    (axis, mode): (lambda x, i, axis=axis, mode=mode: jnp.take(x, i, axis=axis, mode=mode),
                   [A, _take_indices(mode)]) for axis in TAKE_AXES for mode in TAKE_MODES})


@pytest.mark.parametrize("axis", TAKE_AXES)
@pytest.mark.parametrize("mode", TAKE_MODES)
def test_take(axis, mode):
    idx = _take_indices(mode)
    want = _TAKE_ORACLE()[axis, mode]
    check_eager_and_jit(lambda x, i: take(x, i, axis=axis, mode=mode), [A, idx], want)


def test_take_fill_out_of_bounds_and_raise_mode():
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([0, 9, -9])
    check_eager_and_jit(lambda x, i: take(x, i), [x, idx], jnp.take(x, idx))
    check_eager_and_jit(lambda x, i: take(x, i, fill_value=-1.0), [x, idx],
                        jnp.take(x, idx, fill_value=-1.0))
    with pytest.raises(IndexError):
        take(yax.device_put(x), idx, mode="raise")
    assert_close(take(yax.device_put(x), [4, 0], mode="raise"), np.take(x, [4, 0]))
    assert_close(take(yax.device_put(x), 2), np.take(x, 2))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_along_axis(axis):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    idx = np.argsort(x, axis=axis) if axis is not None else np.argsort(x, axis=None)
    want = np.take_along_axis(x, idx, axis)
    check_eager_and_jit(lambda x, i: take_along_axis(x, i, axis), [x, idx], want)
    if axis == 1:  # size-1 axes of the indices broadcast
        idx = np.array([[[0]], [[3]], [[-1]]])
        want = np.asarray(jnp.take_along_axis(jnp.asarray(x), idx, axis))
        check_eager_and_jit(lambda x, i: take_along_axis(x, i, axis), [x, idx], want)


# --- drawn basic indices -----------------------------------------------------------------------

@st.composite
def _basic_index(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    parts = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "full", "none"]))
        if kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            step = draw(st.sampled_from([1, 2, -1, -2, 3]))
            parts.append(slice(draw(st.integers(-n - 1, n + 1) | st.none()),
                               draw(st.integers(-n - 1, n + 1) | st.none()), step))
        elif kind == "full":
            parts.append(slice(None))
        else:
            parts.extend([None, slice(None)])
    if draw(st.booleans()) and len(parts) > 1:
        parts[draw(st.integers(0, len(parts) - 1))] = Ellipsis
        if parts.count(Ellipsis) > 1:
            parts = [p for p in parts if p is not Ellipsis]
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), draw(st.lists(
            st.integers(-1, 0), min_size=1, max_size=3)))
    return shape, tuple(parts)


@settings(max_examples=25, deadline=None)
@given(_basic_index())
@example(((1, 2, 1), (Ellipsis, 1, [0], 0)))  # out of bounds: NumPy raises, JAX clamps
def test_drawn_indices_match_numpy(case):
    shape, idx = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        want = x[idx]
    except IndexError:  # NumPy refuses; JAX refuses malformed indices but clamps out-of-bounds
        try:
            jax_want = np.asarray(jnp.asarray(x)[_for_jax(idx)])
        except IndexError:
            with pytest.raises(IndexError):
                getitem(yax.device_put(x), idx)
            return
        assert_close(getitem(yax.device_put(x), idx), jax_want)
        return
    assert_close(getitem(yax.device_put(x), idx), want)
    if want.size:
        upd = IndexUpdateHelper(yax.device_put(x))[idx].add(1.0)
        assert_close(upd, np.asarray(jnp.asarray(x).at[_for_jax(idx)].add(1.0)))


def test_x64_indices(x64):
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([2, -1, 0], np.int64)
    check_eager_and_jit(lambda x, i: getitem(x, (i, slice(None, None, -1))), [x, idx],
                        x[idx, ::-1])
    check_eager_and_jit(lambda x, i: IndexUpdateHelper(x)[i, 1].add(1.0), [x, idx],
                        np.asarray(jnp.asarray(x).at[idx, 1].add(1.0)))
    check_eager_and_jit(lambda x, i: getitem(x, i), [x, np.int64(-2)], x[-2])
