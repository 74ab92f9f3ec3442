"""Gamma-family draws: gamma, loggamma, beta, dirichlet.

Gamma variates use Marsaglia and Tsang's method ("A simple method for generating gamma
variables", ACM TOMS 2000): for shape a >= 1, with d = a - 1/3 and c = 1/sqrt(9d), draw a normal
x until v = (1 + c x)^3 > 0, then accept d*v with a uniform u when u < 1 - 0.0331 x^4 or
log u < x^2/2 + d (1 - v + log v). Shapes a < 1 sample Gamma(a + 1) and multiply by u^(1/a).

The key for element i of the result is `split(key, n)[i]`; inside each element's loop the keys
are split in the same pattern as jax's, and the per-element loops run under `vmap` (a batched
`while_loop`, where each lane stops when it is accepted), so draws are bit-identical to
`jax.random.gamma`. Gradients with respect to `a` are implicit-reparameterisation gradients
(gamma_grad.py), for gamma, loggamma, beta and dirichlet alike.
"""

from __future__ import annotations

import math

import numpy as np

from yax import errors, lax
from yax import numpy as jnp
from yax.lax._util import out_sharding_param
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random._opaque import opaque
from yax.random.continuous import _const, _exponential, _normal, _uniform
from yax.random.gamma_grad import reparameterized
from yax.transforms.vmap import vmap


def _split(key, n: int) -> list:
    keys = threefry.split(key, (n,))
    return [keys[i] for i in range(n)]


def _normal_until_positive_cube(key, c, dtype):
    """(x, v) with x standard normal and v = 1 + c x > 0, redrawn from fresh subkeys."""
    zero = _const(0.0, dtype)

    def body(state):
        key, _, _ = state
        key, subkey = _split(key, 2)
        # The barrier stops XLA from reassociating (sqrt(2) * erfinv(u)) * c into
        # erfinv(u) * (sqrt(2) * c), which it does when c is shared by a batch (an ulp off).
        x = lax.optimization_barrier(_normal(subkey, (), dtype))
        return key, x, lax.add(_const(1.0, dtype), lax.mul(x, c))

    init = (key, zero, _const(-1.0, dtype))
    _, x, v = lax.while_loop(lambda s: lax.le(s[2], zero), body, init)
    return x, v


def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) draw (or its log) for a scalar alpha; see the module docstring."""
    dtype = alpha.dtype
    one = _const(1.0, dtype)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, _const(1.0 / 3.0, dtype))
    c = lax.div(_const(1.0 / 3.0, dtype), lax.sqrt(d))

    def rejected(state):
        _, x2, v3, u = state
        squeeze = lax.sub(one, lax.mul(_const(0.0331, dtype), lax.mul(x2, x2)))
        log_bound = lax.add(lax.mul(x2, _const(0.5, dtype)),
                            lax.mul(d, lax.add(lax.sub(one, v3), lax.log(v3))))
        return lax.bitwise_and(lax.ge(u, squeeze), lax.ge(lax.log(u), log_bound))

    def propose(state):
        key, x_key, u_key = _split(state[0], 3)
        x, v = _normal_until_positive_cube(x_key, c, dtype)
        u = _uniform(u_key, (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _split(key, 2)
    # The initial state is rejected (u = 2 > 1), so at least one proposal is drawn.
    init = (key, _const(0.0, dtype), one, _const(2.0, dtype))
    _, _, v3, _ = lax.while_loop(rejected, propose, init)
    if log_space:
        log_u = lax.neg(_exponential(subkey, (), dtype))
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_u, _const(0.0, dtype))),
                               _const(0.0, dtype), lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v3)), log_boost)
    u = lax.sub(one, _uniform(subkey, (), dtype))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v3), boost)


def _gamma_flat(key, flat_a, log_space):
    keys = threefry.split(key, (flat_a.shape[0],))
    return vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, flat_a)


# Per-element draws with the implicit-reparameterisation derivative in `a` (gamma_grad.py).
_gamma_draws = reparameterized(lambda key, a: _gamma_flat(key, a, False), log_space=False)
_loggamma_draws = reparameterized(lambda key, a: _gamma_flat(key, a, True), log_space=True)


def _gamma(key, a, shape, dtype, log_space=False):
    # Opaque: XLA must not fold log(a - 1/3) etc. of a constant `a` on the host.
    a = jnp.broadcast_to(opaque(lax.convert_element_type(a, dtype), key), shape)
    flat = jnp.reshape(a, (math.prod(shape),))
    samples = (_loggamma_draws if log_space else _gamma_draws)(flat, key)
    return jnp.reshape(samples, shape)


def _beta(key, a, b, shape, dtype):
    key_a, key_b = _split(key, 2)
    log_ga = _gamma(key_a, a, shape, dtype, log_space=True)
    log_gb = _gamma(key_b, b, shape, dtype, log_space=True)
    # ga / (ga + gb) computed from logs, scaled by the larger one so nothing under/overflows.
    log_max = lax.max(log_ga, log_gb)
    ga = lax.exp(lax.sub(log_ga, log_max))
    gb = lax.exp(lax.sub(log_gb, log_max))
    return lax.div(ga, lax.add(ga, gb))


def _dirichlet(key, alpha, shape, dtype):
    alpha = lax.convert_element_type(alpha, dtype)
    log_g = _gamma(key, alpha, shape + alpha.shape[-1:], dtype, log_space=True)
    # Normalise in log space (a softmax) so tiny concentrations do not underflow to 0/0.
    shifted = log_g - lax.stop_gradient(jnp.max(log_g, axis=-1, keepdims=True))
    unnormalized = jnp.exp(shifted)
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


_gamma_kernel = Kernel(_gamma)
_beta_kernel = Kernel(_beta)
_dirichlet_kernel = Kernel(_dirichlet)


@out_sharding_param("gamma")
def gamma(key, a, shape=None, dtype=None, out_sharding=None):
    """Gamma(a, 1) draws (density x^(a-1) e^(-x) / Gamma(a)), bit-identical to
    `jax.random.gamma`. Divide by a rate (or multiply by a scale) for other scales.

    Args:
      key: a PRNG key.
      a: shape parameter(s) > 0, a float or array broadcastable to `shape`.
      shape: static result shape (default: the shape of `a`).
      dtype: float dtype (default float64 with x64 on, else float32).

    Example:
      >>> g = yax.random.gamma(yax.random.PRNGKey(0), 2.0, (3,))
    """
    key = _checks.as_key("gamma", key)
    dtype = _checks.float_dtype("gamma", dtype)
    shape = _checks.param_shape("gamma", shape, a)
    return _gamma_kernel(key, _checks.operand("gamma", a), shape=shape, dtype=dtype,
                         log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) draws, computed in log space (accurate for tiny `a`)."""
    key = _checks.as_key("loggamma", key)
    dtype = _checks.float_dtype("loggamma", dtype)
    return _gamma_kernel(key, _checks.operand("loggamma", a),
                         shape=_checks.param_shape("loggamma", shape, a), dtype=dtype,
                         log_space=True)


@out_sharding_param("beta")
def beta(key, a, b, shape=None, dtype=None, out_sharding=None):
    """Beta(a, b) draws on [0, 1] (from two log-gamma draws with the keys of `split(key)`).

    `shape` defaults to the broadcast shape of `a` and `b`.
    """
    key = _checks.as_key("beta", key)
    dtype = _checks.float_dtype("beta", dtype)
    shape = _checks.param_shape("beta", shape, a, b)
    return _beta_kernel(key, _checks.operand("beta", a), _checks.operand("beta", b),
                        shape=shape, dtype=dtype)


@out_sharding_param("dirichlet")
def dirichlet(key, alpha, shape=None, dtype=None, out_sharding=None):
    """Dirichlet(alpha) draws: vectors on the simplex, of shape `shape + alpha.shape[-1:]`
    (`shape` defaults to `alpha.shape[:-1]`)."""
    key = _checks.as_key("dirichlet", key)
    dtype = _checks.float_dtype("dirichlet", dtype)
    alpha_shape = _checks.shape_of(alpha)
    if len(alpha_shape) < 1:
        raise errors.ShapeError(
            "yax.random.dirichlet: alpha must have rank >= 1 (the last axis holds the "
            f"concentrations), got a scalar of shape {alpha_shape}.")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = _checks.static_shape("dirichlet", shape)
        _checks.check_shape("dirichlet", shape, alpha_shape[:-1])
    if not isinstance(alpha, np.ndarray) and not hasattr(alpha, "aval"):
        alpha = np.asarray(alpha)
    return _dirichlet_kernel(key, alpha, shape=tuple(shape), dtype=dtype)
