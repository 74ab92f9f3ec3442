"""Out-of-bounds indices: eager and jit agree with jax (clamped reads, dropped updates, `mode=`
honoured); with check_indices on they raise IndexError naming index, axis, size and line."""

from __future__ import annotations

import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp

X = np.arange(5.0, dtype=np.float32)
M = np.arange(12.0, dtype=np.float32).reshape(3, 4)

# each case: (x, i) -> result, written once for any jax-like numpy module `np_`
CASES = {
    "int": lambda np_, x, m, i: x[7],
    "negative int": lambda np_, x, m, i: x[-7],
    "traced scalar": lambda np_, x, m, i: x[i[1]],
    "int array": lambda np_, x, m, i: x[i],
    "2-d int": lambda np_, x, m, i: m[1, 9],
    "2-d array": lambda np_, x, m, i: m[:, i],
    "row": lambda np_, x, m, i: m[5],
    "slice": lambda np_, x, m, i: x[5:9],
    "set int": lambda np_, x, m, i: x.at[7].set(1.0),
    "set negative": lambda np_, x, m, i: x.at[-7].set(1.0),
    "set array": lambda np_, x, m, i: x.at[i].set(9.0),
    "add array": lambda np_, x, m, i: x.at[i].add(1.0),
    "set traced scalar": lambda np_, x, m, i: x.at[i[1]].set(9.0),
    "get": lambda np_, x, m, i: x.at[7].get(),
    "get fill": lambda np_, x, m, i: x.at[i].get(mode="fill"),
    "get fill value": lambda np_, x, m, i: x.at[i].get(mode="fill", fill_value=-1.0),
    "set clip": lambda np_, x, m, i: x.at[i].set(9.0, mode="clip"),
    "get clip": lambda np_, x, m, i: x.at[i].get(mode="clip"),
    "take": lambda np_, x, m, i: np_.take(x, i),
    "take clip": lambda np_, x, m, i: np_.take(x, i, mode="clip"),
    "take wrap": lambda np_, x, m, i: np_.take(x, i, mode="wrap"),
    "take_along_axis": lambda np_, x, m, i: np_.take_along_axis(m, np_.asarray(
        [[0], [9], [-9]]), axis=1),
    "rows scatter add": lambda np_, x, m, i: m.at[i].add(1.0),
}
IDX = np.array([1, 7, -9], dtype=np.int32)


def test_out_of_bounds_table_eager_jit_and_jax_agree():
    got_eager, got_jit, want = {}, {}, {}
    for name, case in CASES.items():
        want[name] = np.asarray(case(jjnp, jjnp.asarray(X), jjnp.asarray(M), jjnp.asarray(IDX)))
        got_eager[name] = np.asarray(case(jnp, jnp.asarray(X), jnp.asarray(M), jnp.asarray(IDX)))

    @yax.jit
    def all_cases(x, m, i):  # one compile for the whole table
        return {name: case(jnp, x, m, i) for name, case in CASES.items()}
    got_jit = {k: np.asarray(v) for k, v in all_cases(X, M, IDX).items()}
    for name in CASES:
        np.testing.assert_array_equal(got_eager[name], want[name], err_msg=f"eager {name}")
        np.testing.assert_array_equal(got_jit[name], want[name], err_msg=f"jit {name}")


@pytest.fixture
def check_indices():
    yax.config.update("check_indices", True)
    try:
        yield
    finally:
        yax.config.update("check_indices", False)


def test_check_indices_eager(check_indices):
    x = jnp.asarray(M)
    with pytest.raises(IndexError, match=r"index 9 is out of bounds for axis 1 with size 4"
                                         r"(.|\n)*test_oob_indices.py"):
        x[1, 9]
    with pytest.raises(yax.errors.OutOfBoundsIndexError, match="index -9 .* axis 0 with size 3"):
        x.at[np.array([0, -9])].set(0.0)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        jnp.take(jnp.asarray(X), np.array([7]))
    assert float(x[2, -1]) == 11.0  # in bounds: unchanged behaviour
    np.testing.assert_array_equal(x.at[0, 9].set(1.0, mode="drop"), M)  # an explicit mode


def test_check_indices_jit_and_vmap(check_indices):
    def f(x, i):
        return x[i] + x.at[i].add(1.0)[0]

    x = jnp.asarray(X)
    assert float(yax.jit(f)(x, 2)) == 2.0 + 0.0
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for axis 0 with size 5"
                                         r"(.|\n)*return x\[i\]"):
        yax.jit(f)(x, 5)
    ok = yax.vmap(f, in_axes=(None, 0))(x, jnp.array([0, 4, -5]))
    np.testing.assert_allclose(ok, [1.0, 4.0, 1.0])
    with pytest.raises(IndexError, match="index -6 is out of bounds for axis 0 with size 5"):
        yax.jit(yax.vmap(f, in_axes=(None, 0)))(x, jnp.array([0, -6]))
