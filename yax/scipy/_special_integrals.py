"""scipy.special's exponential, error-function and oscillatory integrals: erfcx, expi, exp1,
expn, dawsn, sici, fresnel, spence and owens_t.

Series and continued fractions run in a `while_loop` (until every element converged); those
functions carry their derivative as a `custom_jvp` (the loop itself has no reverse mode), with
the closed forms JAX uses. Fixed-length expansions (spence, owens_t) differentiate directly.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import lax
from yax.primitives.special import iterate_while_active
from yax.scipy._special_gamma import _bernoulli_numbers, _promoted
from yax.scipy._special_normal import ndtr
from yax.transforms.custom_derivatives import custom_jvp

__all__ = ["erfcx", "expi", "exp1", "expn", "dawsn", "sici", "fresnel", "spence", "owens_t"]

_EULER = 0.5772156649015329
_PI = float(np.pi)


def _eps(x) -> float:
    return float(np.finfo(x.dtype).eps)


def _tiny(x) -> float:
    return float(np.finfo(x.dtype).tiny) * 1e3


# --- erfcx ---------------------------------------------------------------------------------------

def _erfcx_asymptotic(x, terms: int):
    """erfcx(x) ~ 1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2 x^2)^k, for large x."""
    inv = 1 / (2 * x * x)
    term, total = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(1, terms + 1):
        term = term * -(2 * k - 1) * inv
        total = total + term
    return total / (x * float(np.sqrt(np.pi)))


@custom_jvp
def _erfcx(x):
    large = 26.0 if x.dtype == np.float64 else 9.0
    far = x > large
    xd = jnp.where(far, 0.0, x)
    direct = jnp.exp(xd * xd) * lax.erfc(xd)
    return jnp.where(far, _erfcx_asymptotic(jnp.where(far, x, large), 10), direct)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = _erfcx(x)
    return out, t * (2 * x * out - float(2 / np.sqrt(np.pi)))


def erfcx(x, /):
    """The scaled complementary error function exp(x^2) erfc(x), accurate for large x."""
    (x,) = _promoted("erfcx", x)
    return _erfcx(x)


# --- exponential integrals ---------------------------------------------------------------------

def _expn_fraction(n, x):
    """E_n(x) for x > 1 by its continued fraction (modified Lentz)."""
    b0 = x + n

    def body(c):
        i, b, cc, d, h, active = c
        i = i + 1
        an = -i * (n - 1 + i)
        b = b + 2
        d = 1 / (an * d + b)
        cc = b + an / cc
        delta = cc * d
        return i, b, cc, d, h * delta, active & (jnp.abs(delta - 1) > _eps(x))
    zero = jnp.zeros_like(x)
    init = (zero, b0, zero + 1 / _tiny(x), 1 / b0, 1 / b0, zero == 0)
    h = iterate_while_active(body, init, 5)[4]
    return h * jnp.exp(-x)


def _expn_series(n, x):
    """E_n(x) for 0 < x <= 1 by its power series (the n - 1 term involves digamma(n))."""
    n_is_one = n == 1
    first = jnp.where(n_is_one, -jnp.log(x) - _EULER, 1 / jnp.where(n_is_one, 2.0, n - 1))
    psi = lax.digamma(jnp.maximum(n, 1.0))

    def body(c):
        i, fact, ans, active = c
        i = i + 1
        fact = fact * -x / i
        special = i == n - 1
        delta = jnp.where(special, fact * (psi - jnp.log(x)),
                          -fact / jnp.where(special, 1.0, i - n + 1))
        ans = ans + delta
        return i, fact, ans, active & (jnp.abs(delta) > jnp.abs(ans) * _eps(x))
    zero = jnp.zeros_like(x)
    return iterate_while_active(body, (zero, zero + 1, first, zero == 0), 3)[2]


@custom_jvp
def _expn(n, x):
    positive = x > 0
    frac_side = x > 1
    xf = jnp.where(frac_side, x, 2.0)
    xs = jnp.where(positive & ~frac_side, x, 0.5)
    n_pos = jnp.maximum(n, 1.0)
    value = jnp.where(frac_side, _expn_fraction(n_pos, xf), _expn_series(n_pos, xs))
    value = jnp.where(n == 0, jnp.exp(-x) / x, value)
    at_zero = jnp.where(n > 1, 1 / jnp.maximum(n - 1, 1.0), jnp.inf)
    value = jnp.where(x == 0, at_zero, value)
    return jnp.where((x < 0) | (n < 0), jnp.nan, value)


@_expn.defjvp
def _expn_jvp(primals, tangents):
    (n, x), (_, t) = primals, tangents
    return _expn(n, x), t * -_expn(n - 1, x)


def expn(n, x, /):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt
    (n a non-negative integer)."""
    n, x = _promoted("expn", n, x)
    return _expn(n, x)


def exp1(x, /):
    """The exponential integral E_1(x) = int_x^inf exp(-t) / t dt."""
    (x,) = _promoted("exp1", x)
    return _expn(jnp.ones_like(x), x)


def _expi_positive(x):
    """Ei(x) for x > 0: the series gamma + log x + sum x^k / (k k!) below 40, the asymptotic
    expansion exp(x) / x sum_k k! / x^k above."""
    near = x < 40
    xs = jnp.where(near, x, 1.0)

    def body(c):
        k, term, s, active = c
        k = k + 1
        term = term * xs / k
        s = s + term / k
        return k, term, s, active & (term / k > s * _eps(x))
    zero = jnp.zeros_like(x)
    total = iterate_while_active(body, (zero, zero + 1, zero, zero == 0), 3)[2]
    series = total + _EULER + jnp.log(xs)
    xa = jnp.where(near, 40.0, x)
    term, total = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(1, 40):
        term = term * k / xa
        total = total + term
    return jnp.where(near, series, jnp.exp(xa) / xa * total)


@custom_jvp
def _expi(x):
    positive = x > 0
    pos = _expi_positive(jnp.where(positive, x, 1.0))
    neg = -_expn(jnp.ones_like(x), jnp.where(positive, 1.0, -x))
    return jnp.where(positive, pos, jnp.where(x == 0, -jnp.inf, neg))


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _expi(x), t * jnp.exp(x) / x


def expi(x, /):
    """The exponential integral Ei(x) = -int_{-x}^inf exp(-t) / t dt (principal value)."""
    (x,) = _promoted("expi", x)
    return _expi(x)


# --- Dawson's integral ---------------------------------------------------------------------------

@custom_jvp
def _dawsn(x):
    """F(x) = exp(-x^2) sum_k x^(2k+1) / (k! (2k + 1)) (positive terms) near 0; the asymptotic
    expansion 1 / (2x) sum_k (2k - 1)!! / (2 x^2)^k for large |x|."""
    limit = 10.0 if x.dtype == np.float64 else 6.0
    near = jnp.abs(x) < limit
    xs = jnp.where(near, x, 0.0)
    xsq = xs * xs

    def body(c):
        k, term, s, active = c
        k = k + 1
        term = term * xsq / k
        s = s + term / (2 * k + 1)
        return k, term, s, active & (jnp.abs(term) > jnp.abs(s) * _eps(x) * (2 * k + 1))
    zero = jnp.zeros_like(x)
    total = iterate_while_active(body, (zero, zero + 1, zero + 1, zero == 0), 3)[2]
    series = total * xs * jnp.exp(-xsq)
    xa = jnp.where(near, limit, x)
    inv = 1 / (2 * xa * xa)
    term, total = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(1, 30):
        term = term * (2 * k - 1) * inv
        total = total + term
    return jnp.where(near, series, total / (2 * xa))


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = _dawsn(x)
    return out, t * (1 - 2 * x * out)


def dawsn(x, /):
    """Dawson's integral F(x) = exp(-x^2) int_0^x exp(t^2) dt."""
    (x,) = _promoted("dawsn", x)
    return _dawsn(x)


# --- sine/cosine and Fresnel integrals -----------------------------------------------------------

def _complex_lentz(b_re, b_im, coef_fn, x, step: float = 2.0):
    """h = 1 / (b_1 + a_2 / (b_2 + a_3 / ...)) with complex b_k = b_re + step (k-1) + i b_im, real
    a_k = coef_fn(k), evaluated by the modified Lentz method in real arithmetic."""
    big = 1 / _tiny(x)

    def inv(re, im):
        den = re * re + im * im
        return re / den, -im / den

    def mul(ar, ai, br, bi):
        return ar * br - ai * bi, ar * bi + ai * br

    def body(c):
        k, br, cr, ci, dr, di, hr, hi, active = c
        k = k + 1
        a = coef_fn(k)
        br = br + step
        dr, di = inv(a * dr + br, a * di + b_im)
        cinv_r, cinv_i = inv(cr, ci)
        cr, ci = br + a * cinv_r, b_im + a * cinv_i
        delr, deli = mul(cr, ci, dr, di)
        hr, hi = mul(hr, hi, delr, deli)
        return k, br, cr, ci, dr, di, hr, hi, active & (
            jnp.abs(delr - 1) + jnp.abs(deli) > _eps(x))
    zero = jnp.zeros_like(x)
    dr, di = inv(b_re, b_im)
    init = (zero + 1, b_re, zero + big, zero, dr, di, dr, di, zero == 0)
    out = iterate_while_active(body, init, 8)
    return out[6], out[7]


@custom_jvp
def _sici(x):
    ax = jnp.abs(x)
    near = ax <= 2
    xs = jnp.where(near, ax, 1.0)

    def body(c):  # term_k = (-1)^k x^k / k!, split by parity into Si (odd k) and Ci (even k)
        k, term, si, ci, active = c
        k = k + 1
        term = term * xs / k
        odd = jnp.remainder(k, 2) == 1
        sign = jnp.where(jnp.remainder(k, 4) < 2, 1.0, -1.0)
        si = si + jnp.where(odd, sign * term / k, 0.0)
        ci = ci + jnp.where(odd, 0.0, sign * term / k)
        return k, term, si, ci, active & (term / k > _eps(x) * (jnp.abs(si) + jnp.abs(ci)))
    zero = jnp.zeros_like(x)
    _, _, si_s, ci_s, _ = iterate_while_active(body, (zero, zero + 1, zero, zero, zero == 0), 4)
    ci_s = ci_s + _EULER + jnp.log(xs)
    xf = jnp.where(near, 3.0, ax)
    # E1(i x) by its continued fraction: b_k = 2k - 1 + i x, a_k = -(k - 1)^2
    hr, hi = _complex_lentz(jnp.ones_like(x), xf, lambda k: -(k - 1) ** 2, x)
    cos_x, sin_x = jnp.cos(xf), jnp.sin(xf)
    er, ei = cos_x * hr + sin_x * hi, cos_x * hi - sin_x * hr  # (cos x - i sin x) h
    si = jnp.where(near, si_s, _PI / 2 + ei)
    ci = jnp.where(near, ci_s, -er)
    si = jnp.where(x < 0, -si, si)
    ci = jnp.where(x == 0, -jnp.inf, ci)
    return si, ci


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    si, ci = _sici(x)
    return (si, ci), (t * jnp.sinc(x / _PI), t * jnp.cos(x) / x)


def sici(x, /):
    """The sine and cosine integrals (Si(x), Ci(x)); for x < 0, Ci is the real part
    Ci(|x|) (as scipy)."""
    (x,) = _promoted("sici", x)
    return _sici(x)


@custom_jvp
def _fresnel(x):
    ax = jnp.abs(x)
    near = ax < 1.5
    xs = jnp.where(near, ax, 1.0)
    t = _PI / 2 * xs * xs

    def body(c):  # sum_k (-1)^.. t^k / (k! (2k + 1)), split by parity into C (even) and S (odd)
        k, term, s, cc, active = c
        k = k + 1
        term = term * t / k
        odd = jnp.remainder(k, 2) == 1
        sign = jnp.where(jnp.remainder(k, 4) < 2, 1.0, -1.0)
        s = s + jnp.where(odd, sign * term / (2 * k + 1), 0.0)
        cc = cc + jnp.where(odd, 0.0, sign * term / (2 * k + 1))
        return k, term, s, cc, active & (term / (2 * k + 1) > _eps(x) * (jnp.abs(s) + cc))
    zero = jnp.zeros_like(x)
    _, _, s_s, c_s, _ = iterate_while_active(body, (zero, zero + 1, zero, zero + 1, zero == 0), 4)
    s_s, c_s = s_s * xs, c_s * xs
    xf = jnp.where(near, 2.0, ax)
    # the continued fraction of erfc at z = (sqrt(pi)/2)(1 - i) x: b_k = 1 + 4(k-1) - i pi x^2,
    # a_k = -(2k - 3)(2k - 2); then (C + i S) = (1 + i)/2 (1 - exp(i pi x^2 / 2) (1 - i) x h)
    pix2 = _PI * xf * xf
    hr, hi = _complex_lentz(jnp.ones_like(x), -pix2, lambda k: -(2 * k - 3) * (2 * k - 2), x,
                            step=4.0)
    hr, hi = xf * (hr + hi), xf * (hi - hr)
    cos_a, sin_a = jnp.cos(pix2 / 2), jnp.sin(pix2 / 2)
    wr, wi = cos_a * hr - sin_a * hi, cos_a * hi + sin_a * hr
    c_f = 0.5 * (1 - wr + wi)
    s_f = 0.5 * (1 - wr - wi)
    s = jnp.where(near, s_s, s_f)
    c = jnp.where(near, c_s, c_f)
    sign = jnp.where(x < 0, -1.0, 1.0)
    return sign * s, sign * c


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s, c = _fresnel(x)
    ang = _PI / 2 * x * x
    return (s, c), (t * jnp.sin(ang), t * jnp.cos(ang))


def fresnel(x, /):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt (scipy's order)."""
    (x,) = _promoted("fresnel", x)
    return _fresnel(x)


# --- Spence's function (the dilogarithm) ---------------------------------------------------------

def _li2_coefficients(terms: int) -> list[float]:
    b = _bernoulli_numbers(2 * terms)
    fact, out = 1, []
    for k in range(1, terms + 1):
        fact_k = 1
        for j in range(1, 2 * k + 2):
            fact_k *= j
        out.append(float(b[2 * k] / fact_k))
    del fact
    return out


_LI2_COEFFS = _li2_coefficients(12)


def _li2_near(y):
    """Li2(y) for -1 <= y <= 1/2 by the series in u = -log(1 - y):
    u - u^2/4 + sum_k B_2k u^(2k+1) / (2k+1)!."""
    u = -jnp.log1p(-y)
    u2 = u * u
    total = u - u2 / 4
    power = u
    for c in _LI2_COEFFS:
        power = power * u2
        total = total + c * power
    return total


def spence(x, /):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x), for x >= 0 (NaN below)."""
    (x,) = _promoted("spence", x)
    pi2_6 = _PI ** 2 / 6
    low = x < 0.5
    high = x > 2
    xl = jnp.where(low & (x > 0), x, 0.25)
    xm = jnp.where(low | high, 1.0, x)
    xh = jnp.where(high, x, 3.0)
    value_low = pi2_6 - jnp.log(xl) * jnp.log1p(-xl) - _li2_near(xl)
    value_mid = _li2_near(1 - xm)
    value_high = -pi2_6 - 0.5 * jnp.log(xh - 1) ** 2 - _li2_near(1 / (1 - xh))
    value = jnp.where(low, jnp.where(x == 0, pi2_6, value_low),
                      jnp.where(high, value_high, value_mid))
    return jnp.where(x < 0, jnp.nan, value)


# --- Owen's T function ---------------------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _owens_t_small_a(h, a):
    """T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt by Gauss-Legendre,
    for 0 <= a <= 1 (the integrand is smooth there)."""
    nodes = (jnp.asarray(_GL_NODES, dtype=h.dtype) + 1) / 2
    weights = jnp.asarray(_GL_WEIGHTS, dtype=h.dtype) / 2
    t = a[..., None] * nodes
    one_t2 = 1 + t * t
    f = jnp.exp(-0.5 * (h * h)[..., None] * one_t2) / one_t2
    return a * jnp.sum(f * weights, axis=-1) / (2 * _PI)


def owens_t(h, a, /):
    """Owen's T function T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx.
    For |a| > 1 it uses T(h, a) = (Phi(h) + Phi(a h)) / 2 - Phi(h) Phi(a h) - T(a h, 1/a)."""
    h, a = _promoted("owens_t", h, a)
    sign = jnp.where(a < 0, -1.0, 1.0)
    h, a = jnp.abs(h), jnp.abs(a)
    small = a <= 1
    a_small = jnp.where(small, a, 0.5)
    a_big = jnp.where(small, 2.0, a)
    direct = _owens_t_small_a(h, a_small)
    ah = a_big * h
    phi_h, phi_ah = ndtr(h), ndtr(ah)
    reflected = 0.5 * (phi_h + phi_ah) - phi_h * phi_ah - _owens_t_small_a(ah, 1 / a_big)
    reflected = jnp.where(jnp.isinf(a), 0.5 * (1 - phi_h), reflected)  # T(h, inf) = ndtr(-h)/2
    return sign * jnp.where(small, direct, reflected)
