"""Reparameterised gradients of Gamma draws with respect to the shape parameter a.

A draw x = F^-1(u; a) of Gamma(a, 1) moves with a at fixed u (implicit reparameterisation,
Figurnov et al., "Implicit Reparameterization Gradients", 2018):

    dx/da = -(dP(a, x)/da) / p(x; a)

with P the regularised lower incomplete gamma function and p the density. From the series
P(a, x) = x^a e^-x sum_n x^n / Gamma(a + n + 1), dividing by p = x^(a-1) e^-x / Gamma(a):

    dx/da = -x sum_n exp(n log x + lgamma(a) - lgamma(a + n + 1)) (log x - digamma(a + n + 1))

summed here over a fixed number of terms (the terms fall off once n exceeds x - a; `_TERMS`
covers draws up to a few hundred). This is yax's own version of jax's `random_gamma_grad`
(which the integrator may replace by a shared lax primitive); values agree with jax's to float
rounding for moderate draws. Used by `gamma`, `loggamma`, `beta` and `dirichlet` (and what is
built on them) through a custom JVP on the per-element draws.
"""

from __future__ import annotations

from yax import lax_like as lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.transforms.custom_derivatives import custom_jvp

_TERMS = 512


def sample_grad(a, x):
    """dx/da for Gamma(a, 1) draws x (elementwise, a and x of one shape)."""
    safe_x = jnp.where(x > 0, x, jnp.ones_like(x))
    n = jnp.arange(_TERMS, dtype=x.dtype)
    a_, x_ = a[..., None], safe_x[..., None]
    log_x = jnp.log(x_)
    log_terms = n * log_x + lax.lgamma(a_) - lax.lgamma(a_ + n + 1)
    terms = jnp.exp(log_terms) * (log_x - lax.digamma(a_ + n + 1))
    grad = -safe_x * jnp.sum(terms, axis=-1)
    return jnp.where(x > 0, grad, jnp.zeros_like(grad))


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
