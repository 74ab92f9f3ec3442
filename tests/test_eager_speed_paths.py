"""The eager fast paths of issue 11 give what the general paths give.

Covers: yax.numpy ufuncs/sum binding directly (values, dtypes, weak types, errors), eager linear
algebra as one compiled program per argument structure, and eager vjp/grad through a recorded
tape compiled per recorded structure (branches on values, aux, argnums, nesting, compile counts).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import yax
import yax.numpy as jnp
import yax.scipy.linalg as sla
from yax.runtime import executable


def _same(got, want):
    """Values, dtype and weak type as jax's."""
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type


# --- ufuncs and sum -----------------------------------------------------------------------------

def test_fast_ufuncs_match_jax_dtypes_and_weak_types():
    xs = {
        "f32": np.arange(1, 5, dtype=np.float32),
        "i32": np.arange(1, 5, dtype=np.int32),
        "u8": np.arange(1, 5, dtype=np.uint8),
    }
    for name, x in xs.items():
        y, j = jnp.asarray(x), jnp_ref.asarray(x)
        _same(jnp.add(y, y), jnp_ref.add(j, j))
        _same(y * 2, j * 2)
        _same(3 - y, 3 - j)
        _same(y * 2.0, j * 2.0)  # ints go to float: the general path
        _same(2.0 / y, 2.0 / j)
        _same(jnp.sin(y), jnp_ref.sin(j))
        _same(jnp.sum(y), jnp_ref.sum(j))
        assert bool(jnp.equal(y, y).all()), name
    weak = jnp.asarray(2.0) + jnp.zeros(())  # a weakly typed 0-d array
    weak_ref = jnp_ref.asarray(2.0) + jnp_ref.zeros(())
    _same(weak * 2.0, weak_ref * 2.0)
    _same(jnp.sin(weak), jnp_ref.sin(weak_ref))
    _same(jnp.sum(weak), jnp_ref.sum(weak_ref))


def test_fast_scalar_constants_keep_sign_nan_and_range_errors():
    y = jnp.asarray(np.ones(3, np.float32))
    assert np.all(np.signbit(np.asarray(y * -0.0)))
    assert not np.any(np.signbit(np.asarray(y * 0.0)))
    assert np.all(np.isnan(np.asarray(y * float("nan"))))
    np.testing.assert_array_equal(np.asarray(y * 2 + y * 2.0), np.full(3, 4.0, np.float32))
    with pytest.raises(OverflowError):
        _ = jnp.asarray(np.ones(3, np.int8)) + 300


def test_fast_paths_are_bypassed_under_transformations():
    def f(x):
        return jnp.sum(jnp.sin(x) * 2.0 + x * x)
    x = np.linspace(0.1, 1.0, 5, dtype=np.float32)
    want = jax.grad(lambda x: jnp_ref.sum(jnp_ref.sin(x) * 2.0 + x * x))(x)
    np.testing.assert_allclose(np.asarray(yax.jit(yax.grad(f))(x)), np.asarray(want), rtol=1e-6)
    assert "sin" in str(yax.make_jaxpr(f)(x))


# --- linear algebra -----------------------------------------------------------------------------

def _spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n)).astype(np.float32)
    return a @ a.T + n * np.eye(n, dtype=np.float32)


def test_eager_linalg_compiles_once_per_shape_and_matches_jax():
    a, b = _spd(6), np.arange(6, dtype=np.float32)
    ya, yb = jnp.asarray(a), jnp.asarray(b)
    checks = [
        (lambda: jnp.linalg.solve(ya, yb), lambda: jnp_ref.linalg.solve(a, b)),
        (lambda: jnp.linalg.slogdet(ya)[1], lambda: jnp_ref.linalg.slogdet(a)[1]),
        (lambda: jnp.linalg.norm(ya, 2), lambda: jnp_ref.linalg.norm(a, 2)),
        (lambda: sla.cho_solve(sla.cho_factor(ya), yb),
         lambda: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b)),
    ]
    for run, ref in checks:
        np.testing.assert_allclose(np.asarray(run()), np.asarray(ref()), rtol=2e-4, atol=2e-4)
        before = executable.stats["compiles"]
        run()
        assert executable.stats["compiles"] == before  # the second call compiles nothing
    # one variant per static value
    jnp.linalg.pinv(ya, rtol=1e-3)
    jnp.linalg.pinv(ya, rtol=1e-2)
    assert len(jnp.linalg.pinv.eager_variants) >= 2


def test_eager_linalg_errors_and_transformations_unchanged():
    ya = jnp.asarray(_spd(3))
    with pytest.raises(yax.errors.ShapeError, match="do not fit"):
        jnp.linalg.solve(ya, jnp.ones(4))
    with pytest.raises(yax.errors.DTypeError):
        jnp.linalg.inv(jnp.ones((2, 2), jnp.int32))
    a = _spd(3, seed=1)
    got = yax.grad(lambda m: jnp.linalg.det(m))(a)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.grad(jnp_ref.linalg.det)(a)),
                               rtol=1e-3)
    batched = yax.vmap(jnp.linalg.inv)(jnp.stack([ya, ya]))
    np.testing.assert_allclose(np.asarray(batched[1]), np.linalg.inv(np.asarray(ya)), rtol=1e-4)


# --- eager grad through the recorded tape -------------------------------------------------------

def _mlp(np_mod):
    def loss(params, x, y):
        for w, b in params[:-1]:
            x = np_mod.tanh(x @ w + b)
        w, b = params[-1]
        return np_mod.mean((x @ w + b - y) ** 2)
    return loss


def _mlp_args(lib):
    rng = np.random.default_rng(0)
    sizes = (4, 8, 8, 2)
    params = [(lib.asarray(rng.normal(size=(m, n)).astype(np.float32)),
               lib.asarray(rng.normal(size=(n,)).astype(np.float32)))
              for m, n in zip(sizes[:-1], sizes[1:])]
    return params, lib.asarray(rng.normal(size=(5, 4)).astype(np.float32)), lib.asarray(
        rng.normal(size=(5, 2)).astype(np.float32))


def _close_trees(got, want, rtol=1e-5):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)


def test_eager_grad_of_mlp_matches_jax_and_second_call_compiles_nothing():
    gy = yax.grad(_mlp(jnp))
    args_y, args_j = _mlp_args(jnp), _mlp_args(jnp_ref)
    want = jax.grad(_mlp(jnp_ref))(*args_j)
    _close_trees(gy(*args_y), want)
    before = executable.stats["compiles"]
    _close_trees(gy(*args_y), want)
    assert executable.stats["compiles"] == before
    value, grads = yax.value_and_grad(_mlp(jnp), argnums=(0, 1))(*args_y)
    want_v, want_g = jax.value_and_grad(_mlp(jnp_ref), argnums=(0, 1))(*args_j)
    _close_trees((value, grads), (want_v, want_g))


def test_eager_grad_follows_data_dependent_branches():
    def f(x):
        if jnp.sum(x) > 0:  # Python branch on a concrete value
            return jnp.sum(jnp.sin(x) * 2.0)
        if x[0] < -5:
            return jnp.sum(x * 3.0)
        return jnp.sum(jnp.cos(x) * x)

    def f_ref(x):
        if jnp_ref.sum(x) > 0:
            return jnp_ref.sum(jnp_ref.sin(x) * 2.0)
        if x[0] < -5:
            return jnp_ref.sum(x * 3.0)
        return jnp_ref.sum(jnp_ref.cos(x) * x)
    g = yax.grad(f)
    for x in ([0.5, 1.0, 2.0], [-1.0, -2.0, 0.5], [-6.0, 1.0, 1.0], [0.3, 0.2, 0.1]):
        x = np.asarray(x, np.float32)
        np.testing.assert_allclose(np.asarray(g(jnp.asarray(x))), np.asarray(jax.grad(f_ref)(x)),
                                   rtol=1e-6)


def test_eager_vjp_aux_argnums_and_cotangents():
    def f(x, y):
        z = jnp.sin(x) * y
        return z, {"norm": jnp.sum(z * z)}

    def f_ref(x, y):
        z = jnp_ref.sin(x) * y
        return z, {"norm": jnp_ref.sum(z * z)}
    x, y = np.linspace(0, 1, 4, dtype=np.float32), np.float32(3.0)
    out, f_vjp, aux = yax.vjp(f, jnp.asarray(x), jnp.asarray(y), has_aux=True)
    out_r, f_vjp_r, aux_r = jax.vjp(f_ref, x, y, has_aux=True)
    ct = np.arange(4, dtype=np.float32)
    _close_trees((out, aux, f_vjp(jnp.asarray(ct))), (out_r, aux_r, f_vjp_r(ct)))
    _close_trees(f_vjp(jnp.asarray(ct * 2)), f_vjp_r(ct * 2))  # the pullback reused

    def scalar(x, y):
        return jnp.sum(f(x, y)[0]), f(x, y)[1]
    grads, aux2 = yax.grad(scalar, argnums=(0, 1), has_aux=True)(jnp.asarray(x), jnp.asarray(y))
    want, aux2_r = jax.grad(lambda a, b: (jnp_ref.sum(f_ref(a, b)[0]), f_ref(a, b)[1]),
                            argnums=(0, 1), has_aux=True)(x, y)
    _close_trees((grads, aux2), (want, aux2_r))


def test_eager_grad_of_jit_nested_grad_constants_and_ints():
    x = jnp.asarray(np.float32(0.7))
    inner = yax.jit(lambda v: jnp.sin(v) * v)
    np.testing.assert_allclose(float(yax.grad(inner)(x)),
                               float(jax.grad(lambda v: jnp_ref.sin(v) * v)(0.7)), rtol=1e-6)
    second = yax.grad(yax.grad(lambda v: v ** 3))(x)
    np.testing.assert_allclose(float(second), 6 * 0.7, rtol=1e-6)
    np.testing.assert_allclose(float(yax.grad(lambda v: jnp.float32(2.0))(x)), 0.0)
    g_int = yax.grad(lambda v, n: v * n, argnums=(0, 1), allow_int=True)(x, jnp.asarray(3))
    assert float(g_int[0]) == 3.0 and str(g_int[1].dtype) == str(jax.dtypes.float0)
    with pytest.raises(yax.errors.ShapeError, match="scalar output"):
        yax.grad(lambda v: v * jnp.ones(2))(x)
