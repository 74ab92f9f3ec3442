"""jnp construction, rearranging and padding (construction.py, rearrange.py, padding.py) against
jax.numpy as the oracle: values and dtypes eagerly and under jit, derivatives in float64, vmap
against a Python loop, and the static-shape errors."""

from __future__ import annotations

import jax.numpy as jnp_ref
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests.harness import assert_close, check_against_jax_numpy
from tests.suiteb_util import batched_checks, check_yax_numpy, jax_numpy_table
from yax import errors
from yax.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4)).astype(np.float32)
XI = (np.arange(12).reshape(3, 4) * 3).astype(np.int32)


check = check_against_jax_numpy
# Tests of several checks run them under `batched_checks` (tests/suiteb_util.py): jax's values
# for all of a test's checks come from one jitted program rather than eager jax's compile per
# primitive per check; yax's side of each check is unchanged.


def check_vmap(f, *xs):
    got = yax.jit(yax.vmap(f))(*xs)
    fj = yax.jit(f)  # one compile for the whole loop of reference calls
    want = [fj(*(x[i] for x in xs)) for i in range(xs[0].shape[0])]
    for g, w in zip(yax.tree_util.tree_leaves(got),
                    [np.stack(ws) for ws in zip(*[yax.tree_util.tree_leaves(w) for w in want])],
                    strict=True):
        assert_close(g, w)


CASES = {
    "tril": lambda m, x: m.tril(x, 1),
    "triu": lambda m, x: m.triu(x, -1),
    "diag_of_2d": lambda m, x: m.diag(x, 1),
    "diag_of_1d": lambda m, x: m.diag(x[0], -2),
    "diagflat": lambda m, x: m.diagflat(x[:2, :2], 1),
    "diagonal": lambda m, x: m.diagonal(x, -1),
    "trace": lambda m, x: m.trace(x, 1),
    "tile": lambda m, x: m.tile(x, (2, 1, 2)),
    "repeat_scalar": lambda m, x: m.repeat(x, 2, axis=1),
    "repeat_array": lambda m, x: m.repeat(x, np.array([1, 0, 2]), axis=0),
    "repeat_flat": lambda m, x: m.repeat(x, 2),
    "roll_multi": lambda m, x: m.roll(x, (1, -1), (0, 1)),
    "roll_flat": lambda m, x: m.roll(x, 5),
    "rot90_1": lambda m, x: m.rot90(x),
    "rot90_2": lambda m, x: m.rot90(x, 2),
    "rot90_3": lambda m, x: m.rot90(x, 3, axes=(1, 0)),
    "append": lambda m, x: m.append(x, x[:1], axis=0),
    "append_flat": lambda m, x: m.append(x, np.ones(2, np.float32)),
    "delete": lambda m, x: m.delete(x, np.array([0, 2]), axis=1),
    "delete_slice": lambda m, x: m.delete(x, slice(1, None, 2)),
    "insert_scalar": lambda m, x: m.insert(x, 1, np.float32(7), axis=1),
    "insert_block": lambda m, x: m.insert(x, 2, np.arange(3, dtype=np.float32), axis=1),
    "insert_many": lambda m, x: m.insert(x, np.array([1, 3, 1]), np.float32(5), axis=1),
    "resize": lambda m, x: m.resize(x, (5, 5)),
    "select": lambda m, x: m.select([x > 0, x < -1], [x, -x], 1.5),
    "piecewise": lambda m, x: m.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: 2 * v,
                                                              0.5]),
    "fill_diagonal": lambda m, x: m.fill_diagonal(x, np.float32(9), inplace=False),
    "block": lambda m, x: m.block([[x, x[:, :1]], [x[:1], x[:1, :1]]]),
    "vander": lambda m, x: m.vander(x[0], 3),
    "kron": lambda m, x: m.kron(x[:2, :2], x[1:, 1:3]),
    "choose": lambda m, x: m.choose(np.array([[0, 2, 1], [1, 0, 2]], np.int32),
                                    [x[0, :3], x[1, :3], 5.0]),
    "choose_clip": lambda m, x: m.choose(np.array([[0, 3, 1]], np.int32), [x[0, :3], 1.0],
                                         mode="clip"),
    "put_along_axis": lambda m, x: m.put_along_axis(
        x, np.array([[0, 2], [1, 1], [3, 0]], np.int32), -1.0, 1, inplace=False),
    "hsplit": lambda m, x: m.hsplit(x, [1, 3]),
    "vsplit": lambda m, x: m.vsplit(x[:2], 2),
    "apply_along_axis": lambda m, x: m.apply_along_axis(lambda v: m.stack([v.sum(), v.max()]),
                                                        0, x),
    "apply_along_axis_2d_out": lambda m, x: m.apply_along_axis(m.diag, 1, x[:2, :3]),
    "apply_over_axes": lambda m, x: m.apply_over_axes(m.sum, x, (0, 1)),
    "vectorize": lambda m, x: m.vectorize(lambda a, b: a * b + 1)(x, x[0]),
    "vectorize_signature": lambda m, x: m.vectorize(lambda a, b: m.sum(a * b),
                                                    signature="(n),(n)->()")(x, x[0]),
    "vectorize_excluded": lambda m, x: m.vectorize(lambda a, k: m.roll(a, k), excluded={1},
                                                   signature="(n)->(n)")(x, 2),
    "r_": lambda m, x: m.r_[x[0], 0.5, 1:3],
    "r_directive": lambda m, x: m.r_["0,2,0", x[0], x[1]],
    "c_": lambda m, x: m.c_[x, x[:, :1]],
}


EAGER_SAMPLE = {"tril", "diag_of_1d", "diagonal", "tile", "repeat_array", "roll_multi",
                "rot90_3", "insert_many", "delete", "resize", "select", "piecewise",
                "fill_diagonal", "block", "choose", "put_along_axis", "vectorize_signature",
                "apply_along_axis", "r_"}


# The jax oracle of the tables (CASES on X and on XI, the pad modes) is computed for all their
# cases in one jitted jax program each (tests/suiteb_util.py) instead of eager jax's compile
# per primitive per case; yax's side of each case is unchanged.
_CASES_ORACLE = jax_numpy_table(lambda: {name: (f, [X]) for name, f in CASES.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    check_yax_numpy(CASES[name], [X], _CASES_ORACLE()[name], eager=name in EAGER_SAMPLE)


INTEGER_CASES = ["tril", "trace", "tile", "repeat_array", "roll_multi", "rot90_1", "delete",
                 "insert_many", "resize"]


def _integer_case(name):
    f = CASES[name]
    return lambda m, x: f(m, x) if "insert" not in name else m.insert(x, np.array([1, 3]), 5,
                                                                      axis=1)


_INTEGER_ORACLE = jax_numpy_table(lambda: {name: (_integer_case(name), [XI])
                                            for name in INTEGER_CASES})


@pytest.mark.parametrize("name", INTEGER_CASES)
def test_integer_inputs(name):
    check_yax_numpy(_integer_case(name), [XI], _INTEGER_ORACLE()[name], eager=False)


def test_index_helpers_match_jax():
    with batched_checks() as check:
        check(lambda m: m.tril_indices(4, 1, 5))
        check(lambda m: m.triu_indices(4, -1))
        check(lambda m: m.diag_indices(3, 3))
        check(lambda m: m.triu_indices_from(np.ones((3, 5))))
        check(lambda m: m.indices((2, 3)))
        check(lambda m: m.indices((2, 3), sparse=True))
        i3, i4 = np.arange(3, dtype=np.int32), np.arange(4, dtype=np.int32)
        check(lambda m, a, b: m.meshgrid(a, b, a), i3, np.arange(4.0, dtype=np.float32))
        check(lambda m, a, b: m.meshgrid(a, b, indexing="ij", sparse=True), i3, i4)
        idx = jnp.ix_(np.array([0, 2]), np.array([1, 3]))
        ref_idx = jnp_ref.ix_(np.array([0, 2]), np.array([1, 3]))
        assert_close(jnp.asarray(X)[idx], np.asarray(X)[tuple(np.asarray(i) for i in ref_idx)])


def test_vectorize_multiple_outputs_grad_and_errors(x64):
    x = RNG.normal(size=(4, 5))
    f = jnp.vectorize(lambda v: (jnp.sum(v), jnp.max(v)), signature="(n)->(),()")
    total, top = f(x)
    assert_close(total, x.sum(1))
    assert_close(top, x.max(1))
    dot2 = jnp.vectorize(lambda v, w: jnp.dot(v, w) ** 2, signature="(n),(n)->()")
    check_grads(lambda a: dot2(a, a[0]), (x,), order=1)
    with pytest.raises(ValueError, match="signature"):
        jnp.vectorize(jnp.sum, signature="(n)->")(x)
    with pytest.raises(NotImplementedError, match="directives"):
        jnp.r_["r", x[0]]


def test_grids_and_index_expressions():
    with batched_checks() as check:
        check(lambda m: m.mgrid[0:3, 0:4])
        check(lambda m: m.mgrid[0:1:5j, -1:1:0.5])
        check(lambda m: m.ogrid[0:3, 0:4])
        check(lambda m: m.fromfunction(lambda i, j: i + 2 * j, (3, 4)))
        check(lambda m: m.fromfunction(lambda i, j: i * j, (3, 4), dtype=int))
        assert jnp.s_[1:2, ::2] == np.s_[1:2, ::2] and jnp.index_exp[3] == np.index_exp[3]


def test_logspace_geomspace():
    with batched_checks() as check:
        check(lambda m: m.logspace(0, 2, 5), rtol=1e-5)
        check(lambda m: m.logspace(1, 3, 4, base=2.0, endpoint=False), rtol=1e-5)
        check(lambda m: m.geomspace(1, 1000, 4), rtol=1e-5)
        check(lambda m: m.geomspace(-1, -1000, 4), rtol=1e-5)


def test_ravel_unravel():
    with batched_checks() as check:
        i, j = np.array([1, 2, 0], np.int32), np.array([3, 0, 2], np.int32)
        assert_close(jnp.ravel_multi_index((i, j), (3, 4)),
                     jnp_ref.ravel_multi_index((i, j), (3, 4)))
        check(lambda m, a, b: m.ravel_multi_index((a, b), (3, 4), "clip", order="F"), i, j)
        check(lambda m, a, b: m.ravel_multi_index((a + 5, b), (3, 4), mode="clip"), i, j)
        check(lambda m, a, b: m.ravel_multi_index((a - 4, b), (3, 4), mode="wrap"), i, j)
        flat = np.array([1, 7, -1, 20, -30, 11], np.int32)
        check(lambda m, f: m.unravel_index(f, (3, 4)), flat)
        with pytest.raises(ValueError, match="invalid entry"):
            jnp.ravel_multi_index((np.array([3]), np.array([0])), (3, 4))
        with pytest.raises(errors.ConcretizationError, match="mode='clip'"):
            yax.jit(lambda a: jnp.ravel_multi_index((a, a), (3, 4)))(np.array([1], np.int32))


def test_fill_diagonal_wrap_and_values_against_numpy():
    want = np.zeros((5, 3), np.float32)
    np.fill_diagonal(want, np.array([1.0, 2.0]), wrap=True)
    got = jnp.fill_diagonal(np.zeros((5, 3), np.float32), np.array([1.0, 2.0], np.float32),
                            wrap=True, inplace=False)
    assert_close(got, want)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(X, 1.0)


def test_traced_repeat_roll_delete():
    f = yax.jit(lambda r: jnp.repeat(X, r, axis=0, total_repeat_length=5))
    assert_close(f(np.array([1, 0, 2], np.int32)),
                 jnp_ref.repeat(X, np.array([1, 0, 2]), axis=0, total_repeat_length=5))
    assert_close(f(np.array([1, 1, 1], np.int32)),  # fewer than 5: the last row repeats
                 jnp_ref.repeat(X, np.array([1, 1, 1]), axis=0, total_repeat_length=5))
    g = yax.jit(lambda s: jnp.roll(X, s, 1))
    for s in (-5, 0, 3, 9):
        assert_close(g(np.int32(s)), np.roll(X, s, 1))
    h = yax.jit(lambda i: jnp.delete(X, i, axis=1, assume_unique_indices=True))
    assert_close(h(np.array([0, 2], np.int32)), np.delete(X, [0, 2], axis=1))
    with pytest.raises(errors.ConcretizationError, match="total_repeat_length"):
        yax.jit(lambda r: jnp.repeat(X, r, axis=0))(np.array([1, 0, 2], np.int32))


PAD_MODES = [("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}),
             ("edge", {}), ("reflect", {}), ("symmetric", {}), ("wrap", {}),
             ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
             ("linear_ramp", {}), ("linear_ramp", {"end_values": (5, -3)}), ("maximum", {}),
             ("minimum", {"stat_length": 2}), ("mean", {}),
             ("mean", {"stat_length": ((1, 2), (2, 3))}), ("median", {})]


PAD_WIDTHS = {"w2": 2, "wbig": ((0, 7), (2, 9))}
PAD_INTEGER_MODES = ["constant", "edge", "reflect", "wrap", "maximum", "mean"]


def _pad_cases():
    cases = {}
    for i, (mode, kw) in enumerate(PAD_MODES):
        for wid, width in PAD_WIDTHS.items():
            cases[i, wid] = (lambda m, x, mode=mode, kw=kw, width=width:
                             m.pad(x, width, mode, **kw), [X])
    for mode in PAD_INTEGER_MODES:
        cases["int", mode] = (lambda m, x, mode=mode: m.pad(x, ((1, 2), (3, 0)), mode), [XI])
    return cases


_PAD_ORACLE = jax_numpy_table(_pad_cases)


@pytest.mark.parametrize("i", range(len(PAD_MODES)),
                         ids=[f"{m}-{i}" for i, (m, _) in enumerate(PAD_MODES)])
@pytest.mark.parametrize("wid", list(PAD_WIDTHS))
def test_pad_matches_jax(i, wid):
    mode, kw = PAD_MODES[i]
    width = PAD_WIDTHS[wid]
    check_yax_numpy(lambda m, x: m.pad(x, width, mode, **kw), [X], _PAD_ORACLE()[i, wid],
                    eager=width == 2)


@pytest.mark.parametrize("mode", PAD_INTEGER_MODES)
def test_pad_integers(mode):
    check_yax_numpy(lambda m, x: m.pad(x, ((1, 2), (3, 0)), mode), [XI],
                    _PAD_ORACLE()["int", mode], eager=False)


def test_pad_errors():
    with pytest.raises(ValueError, match="unknown mode"):
        jnp.pad(X, 1, "bogus")
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(X, 1, "edge", constant_values=3)
    with pytest.raises(errors.ConcretizationError, match="pad_width"):
        yax.jit(lambda w: jnp.pad(X, w))(np.int32(1))


def test_grads(x64):
    x = RNG.normal(size=(3, 4))
    for f in [lambda a: jnp.tril(a, 1), lambda a: jnp.trace(a), lambda a: jnp.diag(a[0]),
              lambda a: jnp.repeat(a, np.array([2, 0, 1]), 0), lambda a: jnp.roll(a, 2, 1),
              lambda a: jnp.insert(a, 1, a[:, 0], axis=1), lambda a: jnp.delete(a, 1, 0),
              lambda a: jnp.pad(a, 2, "reflect"), lambda a: jnp.pad(a, 2, "linear_ramp"),
              lambda a: jnp.pad(a, (1, 2), "mean"), lambda a: jnp.pad(a, 1, "maximum"),
              lambda a: jnp.pad(a, 3, "symmetric", reflect_type="odd"),
              lambda a: jnp.select([a > 0], [a * a], -a),
              lambda a: jnp.fill_diagonal(a, a[0, :3], inplace=False),
              lambda a: jnp.kron(a[:2, :2], a[1:, 2:])]:
        check_grads(yax.jit(f), (x,), order=1, modes=("fwd", "rev"))


def test_vmap_matches_loop():
    xs = RNG.normal(size=(3, 4, 4)).astype(np.float32)
    check_vmap(lambda a: jnp.triu(a, 1), xs)
    check_vmap(lambda a: jnp.trace(a), xs)
    check_vmap(lambda a: jnp.diagonal(a, 1), xs)
    check_vmap(lambda a: jnp.roll(a, 1, 0), xs)
    check_vmap(lambda a: jnp.pad(a, 2, "reflect"), xs)
    check_vmap(lambda a: jnp.pad(a, 1, "median"), xs)
    check_vmap(lambda a: jnp.insert(a, 2, 0.0, axis=0), xs)
    check_vmap(lambda a, s: jnp.roll(a, s, 1), xs, np.array([0, 1, -3], np.int32))
    check_vmap(lambda a, r: jnp.repeat(a[0], r, total_repeat_length=6),
               xs, np.array([[1, 2, 3, 0], [0, 0, 0, 6], [2, 2, 2, 2]], np.int32))


def test_less_common_helpers_match_jax():
    with batched_checks() as check:
        mask = X > 0
        check(lambda m, x: m.place(x, x > 0, np.array([7.0, 8.0], np.float32), inplace=False), X,
              eager=False)
        check(lambda m, x: m.put(x, np.array([0, 5, 11], np.int32), np.float32(3.0),
                                 inplace=False), X, eager=False)
        check(lambda m, x: m.extract(x > 0, x, size=6, fill_value=-1.0), X, eager=False)
        check(lambda m, x: m.compress(np.array([True, False, True]), x, axis=0), X, eager=False)
        check(lambda m, x: m.rollaxis(x[None], 2, 0), X, eager=False)
        for g, w in zip(jnp.mask_indices(3, jnp.triu, 1), jnp_ref.mask_indices(3, jnp_ref.triu, 1),
                        strict=True):  # eager only: the mask must be concrete (in jax too)
            assert_close(g, np.asarray(w))
        check(lambda m: m.diag_indices_from(np.ones((3, 3, 3))), eager=False)
        check(lambda m: m.tril_indices_from(np.ones((3, 5)), -1), eager=False)
        assert_close(jnp.extract(mask, X), X[mask])
        with pytest.raises(NotImplementedError, match="inplace=False"):
            jnp.place(X, mask, 1.0)
