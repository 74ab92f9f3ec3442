"""Multivariate normal draws: mean + factor @ z with z standard normal and factor @ factor.T = cov.

The factor comes from yax.numpy.linalg: a Cholesky factor (default), or u * sqrt(s) from an SVD,
or v * sqrt(w) from an eigendecomposition (these two also work for singular covariances).
"""

from __future__ import annotations

from yax import errors
from yax import numpy as jnp
from yax.core import dtypes
from yax.lax._util import out_sharding_param
from yax.numpy import linalg
from yax.random import _checks
from yax.random._kernel import Kernel
from yax.random.continuous import _normal

_METHODS = ("svd", "eigh", "cholesky")


def _factor(cov, method: str):
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        return u * jnp.sqrt(s[..., None, :])
    if method == "eigh":
        w, v = linalg.eigh(cov)
        return v * jnp.sqrt(w[..., None, :])
    return linalg.cholesky(cov)


def _multivariate_normal(key, mean, cov, shape, dtype, method):
    factor = _factor(cov, method)
    z = _normal(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


_mvn_kernel = Kernel(_multivariate_normal)


def _promote_inexact(mean, cov):
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    dt = jnp.result_type(mean, cov)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    return mean.astype(dt), cov.astype(dt)


@out_sharding_param("multivariate_normal")
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky",
                        out_sharding=None):
    """Multivariate normal draws of shape `shape + mean.shape[-1:]`.

    Args:
      key: a PRNG key.
      mean: mean vector(s), shape (..., n).
      cov: positive (semi-)definite covariance(s), shape (..., n, n); its batch shape must
        broadcast with mean's.
      shape: static batch shape of the result (default: the broadcast batch shape of mean
        and cov).
      dtype: float dtype (default: the promoted dtype of mean and cov).
      method: 'cholesky' (default), 'svd' or 'eigh' (use the latter two for singular cov).

    Example:
      >>> x = yax.random.multivariate_normal(key, jnp.zeros(2), jnp.eye(2), (5,))
    """
    key = _checks.as_key("multivariate_normal", key)
    if method not in _METHODS:
        raise _checks.RandomArgumentError(
            f"yax.random.multivariate_normal: method must be one of {_METHODS}, got "
            f"{method!r}.")
    mean, cov = _promote_inexact(mean, cov)
    dtype = mean.dtype if dtype is None else _checks.float_dtype("multivariate_normal", dtype)
    if not dtypes.is_float(dtype):
        raise errors.DTypeError(
            f"yax.random.multivariate_normal: dtype must be a float dtype, got {dtype}.")
    if mean.ndim < 1 or cov.ndim < 2:
        raise errors.ShapeError(
            f"yax.random.multivariate_normal needs mean of rank >= 1 and cov of rank >= 2, "
            f"got {mean.aval.str_short()} and {cov.aval.str_short()}.")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise errors.ShapeError(
            f"yax.random.multivariate_normal: cov must have shape (..., {n}, {n}) to match "
            f"mean {mean.aval.str_short()}, got {cov.aval.str_short()}.")
    if shape is None:
        shape = _checks.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = _checks.static_shape("multivariate_normal", shape)
        _checks.check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    return _mvn_kernel(key, mean, cov, shape=shape, dtype=dtype, method=method)
