"""Reparameterised gradients of Gamma draws with respect to the shape parameter a.

A draw x = F^-1(u; a) of Gamma(a, 1) moves with a at fixed u (implicit reparameterisation,
Figurnov et al., "Implicit Reparameterization Gradients", 2018):

    dx/da = -(dP(a, x)/da) / p(x; a)

with P the regularised lower incomplete gamma function and p the density. The derivative is
`lax.random_gamma_grad` (yax/primitives/special.py), the same primitive jax uses for it. Used by
`gamma`, `loggamma`, `beta` and `dirichlet` (and what is built on them) through a custom JVP on
the per-element draws.
"""

from __future__ import annotations

from yax import lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.transforms.custom_derivatives import custom_jvp


def sample_grad(a, x):
    """dx/da for Gamma(a, 1) draws x (elementwise, a and x of one shape)."""
    return lax.random_gamma_grad(a, x)


def reparameterized(draw, log_space: bool):
    """`f(a, key) = draw(key, a)` (Gamma(a) draws, or their logs when `log_space`) with the
    implicit-reparameterisation derivative in `a` (the key gets none)."""
    @custom_jvp
    def draws(a, key):
        return draw(key, a)

    @draws.defjvp
    def draws_jvp(primals, tangents):
        a, key = primals
        out = draw(key, a)
        a = lax.stop_gradient(a)
        if log_space:
            # d log x / da = (dx/da) / x, with x = exp(log x) kept away from 0.
            sample = jnp.exp(out)
            tiny = jnp.full_like(sample, float(dtypes.finfo(sample.dtype).tiny))
            sample = jnp.where(sample == 0, tiny, sample)
            grad = sample_grad(a, sample) / sample
        else:
            grad = sample_grad(a, out)
        return out, grad * tangents[0]
    return draws
