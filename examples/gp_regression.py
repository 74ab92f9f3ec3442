"""Gaussian-process regression with an RBF kernel; the hyperparameters (length scale, signal
amplitude, noise level) are fitted by gradient descent (Adam) on the negative log marginal
likelihood, differentiated through a Cholesky factorisation and triangular solves.

Data: noisy samples of a smooth 1-D function; the fit should recover the noise level used to
generate them (0.1), and the posterior mean should predict the noise-free function at held-out
points with an RMSE below that noise level.

Run with `python examples/gp_regression.py`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402
import yax.scipy.linalg as sla  # noqa: E402

# Kernel matrices are badly conditioned; float64 keeps the Cholesky factorisation accurate.
yax.config.update("enable_x64", True)

NOISE = 0.1


def target(x):
    return np.sin(3 * x) + 0.5 * np.cos(7 * x)


def make_data(n_train: int = 60, n_test: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2, 2, n_train))
    y = target(x) + NOISE * rng.normal(size=n_train)
    xt = np.linspace(-1.9, 1.9, n_test)
    return x, y, xt, target(xt)


def rbf(a, b, log_ls, log_amp):
    """amp^2 exp(-|a - b|^2 / (2 ls^2)) for 1-D inputs."""
    d2 = (a[:, None] - b[None, :]) ** 2
    return jnp.exp(2 * log_amp - 0.5 * d2 * jnp.exp(-2 * log_ls))


def neg_log_marginal_likelihood(theta, x, y):
    """-log p(y | x, theta) for theta = (log length scale, log amplitude, log noise)."""
    k = rbf(x, x, theta[0], theta[1]) + jnp.exp(2 * theta[2]) * jnp.eye(x.shape[0])
    chol = jnp.linalg.cholesky(k)
    alpha = sla.solve_triangular(chol, y, lower=True)
    return (0.5 * jnp.dot(alpha, alpha) + jnp.sum(jnp.log(jnp.diagonal(chol)))
            + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi))


@yax.jit
def predict(theta, x, y, xt):
    """Posterior mean and standard deviation at xt."""
    k = rbf(x, x, theta[0], theta[1]) + jnp.exp(2 * theta[2]) * jnp.eye(x.shape[0])
    factor = sla.cho_factor(k, lower=True)
    ks = rbf(xt, x, theta[0], theta[1])
    mean = ks @ sla.cho_solve(factor, y)
    v = sla.solve_triangular(factor[0], ks.T, lower=True)
    var = jnp.exp(2 * theta[1]) - jnp.sum(v * v, axis=0)
    return mean, jnp.sqrt(jnp.maximum(var, 0.0))


@yax.jit
def adam_step(theta, m, v, t, x, y, lr=0.05):
    value, g = yax.value_and_grad(neg_log_marginal_likelihood)(theta, x, y)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    theta = theta - lr * (m / (1 - 0.9 ** t)) / (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return theta, m, v, value


def main(steps: int = 200, verbose: bool = True) -> dict:
    """Fit the hyperparameters; return them with the test RMSE."""
    x, y, xt, yt = (jnp.asarray(a) for a in make_data())
    theta = jnp.asarray([0.0, 0.0, np.log(0.5)])  # length scale 1, amplitude 1, noise 0.5
    m = v = jnp.zeros(3)
    for t in range(1, steps + 1):
        theta, m, v, value = adam_step(theta, m, v, jnp.asarray(float(t)), x, y)
        if verbose and (t == 1 or t % 50 == 0):
            print(f"step {t:4d}  -log marginal likelihood {float(value):9.4f}")
    ls, amp, noise = (float(z) for z in jnp.exp(theta))
    mean, std = predict(theta, x, y, xt)
    rmse = float(jnp.sqrt(jnp.mean((mean - yt) ** 2)))
    coverage = float(jnp.mean((jnp.abs(mean - yt) < 2 * std).astype(jnp.float64)))
    if verbose:
        print(f"fitted: length scale {ls:.3f}  amplitude {amp:.3f}  noise {noise:.3f} "
              f"(true noise {NOISE})")
        print(f"test RMSE {rmse:.4f} on {xt.shape[0]} points; "
              f"{coverage:.0%} of targets within 2 posterior std")
    return {"length_scale": ls, "amplitude": amp, "noise": noise, "rmse": rmse}


if __name__ == "__main__":
    main()
