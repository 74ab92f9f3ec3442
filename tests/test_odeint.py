"""experimental.ode.odeint: values and adjoint gradients compared with jax's odeint."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
from jax.experimental.ode import odeint as jax_odeint

import yax
import yax.numpy as jnp
from yax._jax_names.ode import odeint

T = np.linspace(0.0, 2.0, 5).astype(np.float32)
Y0 = np.array([1.0, 2.0], np.float32)
K = np.float32(0.7)


def ours_f(y, t, k):
    return -k * y + jnp.sin(t)


def theirs_f(y, t, k):
    return -k * y + jjnp.sin(t)


def test_values_and_jit():
    want = jax_odeint(theirs_f, Y0, T, K)
    np.testing.assert_allclose(odeint(ours_f, Y0, T, K), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(yax.jit(lambda y: odeint(ours_f, y, T, K))(Y0), want,
                               rtol=1e-5, atol=1e-5)
    # against the closed form of y' = -k y (no forcing)
    exact = Y0[None] * np.exp(-K * T)[:, None]
    np.testing.assert_allclose(odeint(lambda y, t, k: -k * y, Y0, T, K), exact, rtol=1e-5)


def test_adjoint_gradients_match_jax():
    ours = yax.grad(lambda y0, k, t: odeint(ours_f, y0, t, k).sum(), (0, 1, 2))(Y0, K, T)
    theirs = jax.grad(lambda y0, k, t: jax_odeint(theirs_f, y0, t, k).sum(), (0, 1, 2))(Y0, K, T)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5)


def test_pytree_state_and_args():
    def f(state, t, params):
        return {"x": state["v"], "v": -params["w"] ** 2 * state["x"]}

    y0 = {"x": np.float32(1.0), "v": np.float32(0.0)}
    out = odeint(f, y0, T, {"w": np.float32(2.0)})
    assert set(out) == {"x", "v"} and out["x"].shape == (5,)
    np.testing.assert_allclose(out["x"], np.cos(2.0 * T), rtol=1e-4, atol=1e-5)
    g = yax.grad(lambda w: odeint(f, y0, T, {"w": w})["x"][-1])(np.float32(2.0))
    np.testing.assert_allclose(g, -2.0 * np.sin(4.0), rtol=1e-3)  # d/dw cos(w t) at t=2
