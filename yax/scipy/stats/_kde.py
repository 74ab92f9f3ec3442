"""Gaussian kernel density estimation (scipy.stats.gaussian_kde, as jax.scipy.stats has it).

The estimate at a point is the weighted mean of Gaussian kernels centred on the data, with
covariance `factor^2 * cov(data)`; the bandwidth factor is Scott's (n_eff^(-1/(d+4))),
Silverman's, a scalar or a callable of the estimator.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import random, tree_util
from yax.scipy import linalg, special
from yax.scipy.stats import multivariate_normal

__all__ = ["gaussian_kde"]


class gaussian_kde:
    """Kernel density estimate of `dataset` (shape (d, n), or (n,) for d = 1) with optional
    `weights` (n,). Methods: evaluate/__call__/pdf, logpdf, integrate_box_1d,
    integrate_gaussian, integrate_kde, resample(key, shape), set_bandwidth. A pytree."""

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if not jnp.issubdtype(dataset.dtype, jnp.inexact):
            dataset = dataset.astype(jnp.zeros(()).dtype)
        self.dataset = dataset
        self.d, self.n = dataset.shape
        if weights is None:
            weights = jnp.full((self.n,), 1.0 / self.n, dtype=dataset.dtype)
        else:
            weights = jnp.asarray(weights, dtype=dataset.dtype)
            weights = weights / jnp.sum(weights)
        self.weights = weights
        self.neff = 1 / jnp.sum(weights ** 2)
        self.set_bandwidth(bw_method)

    def set_bandwidth(self, bw_method=None):
        """Set the bandwidth rule ('scott' default, 'silverman', a scalar or a callable)."""
        if bw_method is None or bw_method == "scott":
            self.factor = self.neff ** (-1.0 / (self.d + 4))
        elif bw_method == "silverman":
            self.factor = (self.neff * (self.d + 2) / 4.0) ** (-1.0 / (self.d + 4))
        elif callable(bw_method):
            self.factor = bw_method(self)
        else:
            self.factor = jnp.asarray(bw_method, dtype=self.dataset.dtype)
        self._compute_covariance()

    def _compute_covariance(self):
        mean = jnp.sum(self.dataset * self.weights, axis=1, keepdims=True)
        centred = self.dataset - mean
        data_cov = (centred * self.weights) @ centred.T / (1 - jnp.sum(self.weights ** 2))
        self.covariance = data_cov * self.factor ** 2
        self.inv_cov = jnp.linalg.inv(self.covariance)
        self._chol = jnp.linalg.cholesky(self.covariance)

    def _log_kernels(self, points):
        points = jnp.atleast_2d(jnp.asarray(points, dtype=self.dataset.dtype))
        if points.shape[0] != self.d:
            if points.shape == (1, self.d):
                points = points.T
            else:
                raise ValueError(f"gaussian_kde: points have dimension {points.shape[0]}, the "
                                 f"data {self.d}")
        diff = self.dataset[:, :, None] - points[:, None, :]  # (d, n, m)
        white = linalg.solve_triangular(self._chol, jnp.reshape(diff, (self.d, -1)), lower=True)
        maha = jnp.reshape(jnp.sum(white ** 2, axis=0), diff.shape[1:])
        log_det = 2 * jnp.sum(jnp.log(jnp.diagonal(self._chol)))
        return -0.5 * (maha + log_det + self.d * float(np.log(2 * np.pi)))

    def evaluate(self, points):
        """The density estimate at `points` (shape (d, m) or (m,) for d = 1)."""
        return jnp.sum(jnp.exp(self._log_kernels(points)) * self.weights[:, None], axis=0)

    __call__ = evaluate

    def pdf(self, x):
        """The density estimate at `x` (the same as evaluate)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """log of the density estimate, by logsumexp over the kernels."""
        return special.logsumexp(self._log_kernels(x), axis=0, b=self.weights[:, None])

    def integrate_box_1d(self, low, high):
        """The estimate's mass on [low, high] (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d needs one-dimensional data")
        sd = jnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sd
        hi = (high - self.dataset[0]) / sd
        return jnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the Gaussian density N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.asarray(mean, self.dataset.dtype))
        cov = jnp.atleast_2d(jnp.asarray(cov, self.dataset.dtype))
        dens = multivariate_normal.pdf(self.dataset.T, mean, cov + self.covariance)
        return jnp.sum(dens * self.weights)

    def integrate_kde(self, other):
        """The integral of the product of two estimates."""
        cov = self.covariance + other.covariance
        diff = self.dataset.T[:, None, :] - other.dataset.T[None, :, :]
        dens = multivariate_normal.pdf(diff, jnp.zeros(self.d, self.dataset.dtype), cov)
        return jnp.sum(dens * self.weights[:, None] * other.weights[None, :])

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("gaussian_kde.integrate_box is not supported (as in JAX)")

    def resample(self, key, shape=()):
        """Draw samples (shape (d, *shape)): pick data points by weight, add kernel noise."""
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        pick_key, noise_key = random.split(key)
        idx = random.choice(pick_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, jnp.zeros(self.d, self.dataset.dtype),
                                           self.covariance, shape=shape)
        return self.dataset[:, idx] + jnp.moveaxis(noise, -1, 0)

    def tree_flatten(self):
        return (self.dataset, self.weights, self.factor), (self.d, self.n)

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.dataset, obj.weights, obj.factor = children
        obj.d, obj.n = aux
        obj.neff = 1 / jnp.sum(obj.weights ** 2)
        obj._compute_covariance()
        return obj


tree_util.register_pytree_node(gaussian_kde, gaussian_kde.tree_flatten,
                               gaussian_kde.tree_unflatten)
