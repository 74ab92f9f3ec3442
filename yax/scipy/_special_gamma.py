"""scipy.special's gamma and beta families: gamma, its sign and logarithm, incomplete gamma and
beta functions, factorials and binomial coefficients, Pochhammer symbols, polygamma, zeta,
the multivariate log-gamma function and Bernoulli numbers.

All are compositions of yax.lax (the incomplete functions are the primitives of
yax/primitives/special.py), so they differentiate and batch; inputs are promoted to an inexact
dtype as JAX does.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.numpy._promote import promote_arrays_inexact

__all__ = ["gamma", "gammasgn", "loggamma", "gammainc", "gammaincc", "betainc", "beta",
           "polygamma", "zeta", "factorial", "comb", "poch", "multigammaln", "bernoulli"]


def _promoted(name, *args):
    """Promote to one inexact dtype and broadcast to one shape (lax operands must agree)."""
    args = promote_arrays_inexact(name, *args)
    return jnp.broadcast_arrays(*args) if len(args) > 1 else args


def gammasgn(x, /):
    """The sign of Gamma(x): 1 for x > 0; (-1)^ceil(-x) between the poles; NaN at the poles
    (non-positive integers) except 0, where it is 1 (as JAX)."""
    (x,) = _promoted("gammasgn", x)
    floor_x = jnp.floor(x)
    alternating = jnp.where(jnp.equal(jnp.remainder(floor_x, 2), 0), 1.0, -1.0).astype(x.dtype)
    pole = jnp.logical_and(x < 0, jnp.equal(x, floor_x))
    return jnp.where(x >= 0, jnp.ones_like(x), jnp.where(pole, jnp.nan, alternating))


def gamma(x, /):
    """The gamma function, gammasgn(x) * exp(gammaln(x))."""
    (x,) = _promoted("gamma", x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def loggamma(x, /):
    """log(Gamma(x)) for real x: gammaln(x) for x >= 0, NaN for negative x (the principal
    branch of the complex log-gamma is not real there; scipy gives NaN for real input too)."""
    (x,) = _promoted("loggamma", x)
    return jnp.where(x < 0, jnp.nan, lax.lgamma(x))


def gammainc(a, x, /):
    """The regularized lower incomplete gamma function P(a, x) (lax.igamma)."""
    a, x = _promoted("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x, /):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (lax.igammac)."""
    a, x = _promoted("gammaincc", a, x)
    return lax.igammac(a, x)


def betainc(a, b, x, /):
    """The regularized incomplete beta function I_x(a, b) (differentiable in x only, as JAX)."""
    a, b, x = _promoted("betainc", a, b, x)
    return lax.betainc(a, b, x)


def beta(a, b, /):
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b), through log-gamma (no overflow)."""
    a, b = _promoted("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b))


def polygamma(n, x, /):
    """The n-th derivative of digamma. `n` holds non-negative integers (of any dtype)."""
    n, x = _promoted("polygamma", n, x)
    return lax.polygamma(n, x)


def zeta(x, q=None, /):
    """The Hurwitz zeta function sum_k (k + q)^-x. JAX requires `q`; here `q=None` gives the
    Riemann zeta function (q = 1)."""
    if q is None:
        q = 1.0
    x, q = _promoted("zeta", x, q)
    return lax.zeta(x, q)


def factorial(n, exact: bool = False):
    """n! = Gamma(n + 1) for real n, 0 for n < 0 (as scipy). `exact=True` is not supported
    (as in JAX: exact integers of arbitrary size have no array dtype)."""
    if exact:
        raise NotImplementedError("factorial with exact=True is not supported; use exact=False")
    (n,) = _promoted("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(lax.lgamma(n + 1))).astype(n.dtype)


def comb(N, k, *, repetition: bool = False):
    """The binomial coefficient N choose k for real N, k (through log-gamma); 0 outside
    0 <= k <= N. With `repetition`, the number of multisets: comb(N + k - 1, k)."""
    N, k = _promoted("comb", N, k)
    if repetition:
        N = N + k - 1
    valid = (k >= 0) & (N >= 0) & (k <= N)
    safe_n, safe_k = jnp.where(valid, N, 1.0), jnp.where(valid, k, 0.0)
    log_c = lax.lgamma(safe_n + 1) - lax.lgamma(safe_k + 1) - lax.lgamma(safe_n - safe_k + 1)
    return jnp.where(valid, jnp.exp(log_c), 0.0).astype(N.dtype)


def poch(z, m, /):
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z)."""
    z, m = _promoted("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    return jnp.where(m == 0, 1.0, sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z)))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension `d` (a static int):
    d (d - 1) / 4 log(pi) + sum_{j=1}^d gammaln(a + (1 - j) / 2)."""
    d = int(d)
    if d < 1:
        raise ValueError(f"multigammaln needs a dimension d >= 1, got {d}")
    (a,) = _promoted("multigammaln", a)
    total = d * (d - 1) / 4 * float(np.log(np.pi))
    for j in range(1, d + 1):
        total = total + lax.lgamma(a + (1 - j) / 2)
    return total


def _bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0..B_n by the recurrence sum_{k<=m} C(m+1, k) B_k = 0 (B_1 = -1/2, as scipy)."""
    numbers = [Fraction(1)]
    for m in range(1, n + 1):
        acc = Fraction(0)
        binom = 1
        for k in range(m):
            acc += binom * numbers[k]
            binom = binom * (m + 1 - k) // (k + 1)
        numbers.append(-acc / (m + 1))
    return numbers


def bernoulli(n: int):
    """The Bernoulli numbers B_0, ..., B_n (n a static int) as a float array."""
    n = int(n)
    if n < 0:
        raise ValueError(f"bernoulli needs n >= 0, got {n}")
    return jnp.asarray(np.array([float(b) for b in _bernoulli_numbers(n)]),
                       dtype=jnp.zeros(()).dtype)
