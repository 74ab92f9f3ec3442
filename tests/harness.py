"""Shared test helpers: run a yax function eagerly and under jit and compare with a reference."""

from __future__ import annotations

import jax
import numpy as np

import yax
from yax.core import dtypes

FLOAT_DTYPES = [np.float32, np.float64]
INT_DTYPES = [np.int32, np.int64, np.uint8, np.uint32, np.int8]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + [np.bool_, np.float16]


# yax follows jax 0.10 (what Python 3.11 installs); a newer jax (Python 3.12+) prints and
# rounds some things otherwise, and tests comparing those with the live jax say so
JAX_0_10 = jax.__version__.startswith("0.10.")


def only_against_jax_0_10(why: str):
    """Mark a test whose jax side is jax 0.10.2's behaviour, skipped (with `why`) under another
    jax, which differs there: yax follows 0.10.2."""
    import pytest
    return pytest.mark.skipif(not JAX_0_10, reason=f"compared with jax 0.10.2: {why}")


def tol_for(dtype) -> float:
    dtype = np.dtype(dtype)
    return {np.dtype(np.float16): 1e-2, np.dtype(dtypes.bfloat16): 5e-2,
            np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5}.get(dtype, 1e-12)


def to_yax(x):
    """NumPy data (or pytrees of it) to yax Arrays."""
    return yax.device_put(x)


def assert_close(got, want, rtol=None, atol=None, check_dtype=True):
    got_np = np.asarray(got)
    want_np = np.asarray(want)
    assert got_np.shape == want_np.shape, f"shape {got_np.shape} != {want_np.shape}"
    if check_dtype:
        assert got_np.dtype == want_np.dtype, f"dtype {got_np.dtype} != {want_np.dtype}"
    if got_np.dtype.kind in "biu" or got_np.dtype == np.bool_:
        np.testing.assert_array_equal(got_np, want_np)
        return
    tol = tol_for(want_np.dtype)
    np.testing.assert_allclose(got_np.astype(np.float64) if got_np.dtype.kind != "c" else got_np,
                               want_np.astype(np.float64) if want_np.dtype.kind != "c" else want_np,
                               rtol=tol if rtol is None else rtol,
                               atol=tol if atol is None else atol, equal_nan=True)


def check_eager_and_jit(fun, args, want, *, rtol=None, atol=None, check_dtype=True):
    """`fun(*args)` eagerly and under `yax.jit` both match `want`, and each other exactly
    up to floating-point reassociation."""
    yargs = [to_yax(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args]
    eager_out = fun(*yargs)
    jit_out = yax.jit(fun)(*yargs)
    for out in (eager_out, jit_out):
        leaves_got = yax.tree_util.tree_leaves(out)
        leaves_want = yax.tree_util.tree_leaves(want)
        assert len(leaves_got) == len(leaves_want)
        for g, w in zip(leaves_got, leaves_want):
            assert_close(g, w, rtol=rtol, atol=atol, check_dtype=check_dtype)
    return eager_out, jit_out


def random_values(seed: int, shape, dtype) -> np.ndarray:
    """Deterministic test data of any dtype: bools, small ints (non-negative for unsigned),
    normal floats scaled by 10."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind == "u":
        return np.asarray(rng.integers(0, 200, size=shape).astype(dtype))
    if dtype.kind == "i":
        return np.asarray(rng.integers(-50, 50, size=shape).astype(dtype))
    return np.asarray((rng.normal(size=shape) * 10).astype(dtype))


def check_against_jax_numpy(fn, *args, rtol=None, atol=None, eager=True):
    """`fn(module, *args)` with yax.numpy matches it with jax.numpy, under jit and (unless
    eager=False: eager runs compile one program per primitive, so the big tables check
    eager == jit on a representative sample only) eagerly."""
    import jax.numpy as jnp_ref
    want = jax.tree_util.tree_map(np.asarray, fn(jnp_ref, *args))
    return check_yax_numpy(fn, args, want, rtol=rtol, atol=atol, eager=eager)


def check_yax_numpy(fn, args, want, *, rtol=None, atol=None, eager=True):
    """yax's side of `check_against_jax_numpy`, against oracle values `want` computed
    beforehand (tests/suiteb_util.py computes a whole table's in one jitted jax program):
    `fn(yax.numpy, *args)` under jit and, unless eager=False, eagerly, each matching `want`."""
    import yax.numpy as jnp
    if eager:
        return check_eager_and_jit(lambda *a: fn(jnp, *a), list(args), want, rtol=rtol,
                                   atol=atol)
    got = yax.jit(lambda *a: fn(jnp, *a))(*args)
    leaves_got, leaves_want = yax.tree_util.tree_leaves(got), yax.tree_util.tree_leaves(want)
    assert len(leaves_got) == len(leaves_want)
    for g, w in zip(leaves_got, leaves_want, strict=True):
        assert_close(g, w, rtol=rtol, atol=atol)
    return got


def assert_trees_close(got, want, rtol=1e-9, atol=1e-11):
    """Two pytrees (yax or jax) have the same number of leaves, each close in value."""
    got_leaves, want_leaves = yax.tree_util.tree_leaves(got), yax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)
