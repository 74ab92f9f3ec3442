"""Poisson draws, following jax: Knuth's multiplication method for rates below 10 and Hormann's
transformed rejection ("The transformed rejection method for generating Poisson random
variables", 1993) otherwise; as in jax, both loops run over the whole array and the result is
selected per element.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax import numpy as jnp
from yax.lax._util import out_sharding_param
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random._opaque import opaque
from yax.random.continuous import _uniform

__all__ = ["poisson"]


def _poisson_knuth(key, lam, shape, dtype):
    """Count uniforms until their product drops below exp(-lam) (one draw per element per
    step, all elements stepping together)."""
    def cond(state):
        return jnp.any(state[2] > -lam)

    def body(state):
        rng, k, log_prod = state
        keys = threefry.split(rng, (2,))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(keys[1], shape, np.dtype(np.float32))
        return keys[0], k, log_prod + jnp.log(u)

    init = (key, jnp.zeros(shape, dtype), jnp.zeros(shape, np.float32))
    return (lax.while_loop(cond, body, init)[1] - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype):
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(state):
        k_out, accepted, rng = state
        keys = threefry.split(rng, (3,))
        u = _uniform(keys[1], shape, lam.dtype) - 0.5
        v = _uniform(keys[2], shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return lax.select(accept, k, k_out), accepted | accept, keys[0]

    init = (jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, bool), key)
    return lax.while_loop(lambda s: jnp.any(~s[1]), body, init)[0].astype(dtype)


def _poisson(key, lam, shape, dtype):
    lam = opaque(lam, key)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    # Rejection's acceptance rate approaches 89% for large rates: 1e5 keeps unused lanes cheap.
    lam_rejection = lax.select(use_knuth, jnp.full_like(lam, 1e5), lam)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype),
                        _poisson_rejection(key, lam_rejection, shape, dtype))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_poisson_kernel = Kernel(_poisson)


@out_sharding_param("poisson")
def poisson(key, lam, shape=None, dtype=None, out_sharding=None):
    """Poisson draws with rate(s) `lam` >= 0 (computed in float32, as jax does; default dtype
    int). `shape` defaults to the shape of `lam`."""
    key = _checks.as_key("poisson", key)
    dtype = _checks.int_dtype("poisson", dtype)
    lam_shape = _checks.shape_of(lam)
    if shape is None:
        shape = lam_shape
    else:
        shape = _checks.static_shape("poisson", shape)
        _checks.check_shape("poisson", shape, lam_shape)
    lam = jnp.broadcast_to(jnp.asarray(lam), shape).astype(np.float32)
    return _poisson_kernel(key, lam, shape=shape, dtype=dtype)
