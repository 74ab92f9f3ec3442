"""yax.scipy.cluster.vq: assign observations to their nearest code (as scipy's `vq`)."""

from __future__ import annotations

import yax.numpy as jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """`(code, dist)`: for each row of `obs` (N x D, or N values), the index of the nearest
    row of `code_book` (K x D) and the Euclidean distance to it."""
    del check_finite  # values are traced; a NaN simply propagates (as jax)
    obs, code_book = jnp.asarray(obs), jnp.asarray(code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[..., None], code_book[..., None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    # all N x K distances at once: one pass, differentiable in obs and code_book
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    return jnp.argmin(dist, axis=-1), jnp.min(dist, axis=-1)
