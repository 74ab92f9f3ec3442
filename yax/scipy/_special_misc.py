"""scipy.special's Bessel functions, information-theory functions, Box-Cox transforms,
softmax, hypergeometric functions and spherical harmonics."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax import lax, nn
from yax.primitives.special import iterate_while_active
from yax.scipy._special_gamma import _promoted
from yax.transforms.custom_derivatives import custom_jvp

__all__ = ["i0", "i0e", "i1", "i1e", "bessel_jn", "entr", "rel_entr", "kl_div", "boxcox",
           "boxcox1p", "softmax", "log_softmax", "hyp1f1", "hyp2f1", "sph_harm_y", "wofz"]


# --- modified Bessel functions -------------------------------------------------------------------

def i0e(x, /):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    (x,) = _promoted("i0e", x)
    return lax.bessel_i0e(x)


def i1e(x, /):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    (x,) = _promoted("i1e", x)
    return lax.bessel_i1e(x)


def i0(x, /):
    """The modified Bessel function of order 0, I0(x) = exp(|x|) i0e(x)."""
    (x,) = _promoted("i0", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x, /):
    """The modified Bessel function of order 1, I1(x) = exp(|x|) i1e(x)."""
    (x,) = _promoted("i1", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """Bessel functions of the first kind J_0(z), ..., J_v(z), stacked along a new leading axis
    (shape (v + 1, *z.shape)), by Miller's backward recurrence started at order
    max(v, n_iter), run on the ratios r_k = J_k / J_{k-1} = z / (2k - z r_{k+1}) (which neither
    overflow nor divide by z) and normalised by J_0 + 2 sum_k J_2k = 1. Accurate while |z| is
    well below the starting order (JAX uses the same scheme)."""
    v, n_iter = int(v), int(n_iter)
    (z,) = _promoted("bessel_jn", z)
    start = max(v, n_iter) + 1
    ratio = jnp.zeros_like(z)
    ratios = {}
    for k in range(start, 0, -1):
        ratio = z / (2 * k - z * ratio)
        ratios[k] = ratio
    product, norm = jnp.ones_like(z), jnp.ones_like(z)
    products = [product]
    for k in range(1, start + 1):
        product = product * ratios[k]
        if k <= v:
            products.append(product)
        if k % 2 == 0:
            norm = norm + 2 * product
    return jnp.stack(products) / norm


# --- information theory --------------------------------------------------------------------------

def entr(x, /):
    """-x log(x) for x > 0, 0 at x = 0, -inf for x < 0."""
    (x,) = _promoted("entr", x)
    safe = jnp.where(x > 0, x, 1.0)
    return jnp.where(x > 0, -safe * jnp.log(safe), jnp.where(x == 0, 0.0, -jnp.inf))


def rel_entr(x, y, /):
    """x log(x / y) for x, y > 0; 0 where x = 0 and y >= 0; inf otherwise."""
    x, y = _promoted("rel_entr", x, y)
    both = (x > 0) & (y > 0)
    sx, sy = jnp.where(both, x, 1.0), jnp.where(both, y, 1.0)
    return jnp.where(both, sx * jnp.log(sx / sy), jnp.where((x == 0) & (y >= 0), 0.0, jnp.inf))


def kl_div(x, y, /):
    """x log(x / y) - x + y for x, y > 0; y where x = 0 and y >= 0; inf otherwise."""
    x, y = _promoted("kl_div", x, y)
    both = (x > 0) & (y > 0)
    sx, sy = jnp.where(both, x, 1.0), jnp.where(both, y, 1.0)
    return jnp.where(both, sx * jnp.log(sx / sy) - sx + sy,
                     jnp.where((x == 0) & (y >= 0), y, jnp.inf))


# --- Box-Cox -------------------------------------------------------------------------------------

def boxcox(x, lmbda, /):
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda = 0."""
    x, lmbda = _promoted("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda, /):
    """The Box-Cox transform of 1 + x: ((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda = 0."""
    x, lmbda = _promoted("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def _boxcox_of_log(log_x, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, 1.0, lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


# --- softmax (scipy's default axis is all axes) -----------------------------------------------

def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (None: all axes, as scipy and jax.scipy)."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) over `axis` (None: all axes, as scipy and jax.scipy)."""
    return nn.log_softmax(x, axis=axis)


# --- hypergeometric functions --------------------------------------------------------------------

def _hyp_series(coef, x, n_params):
    """sum_k t_k with t_0 = 1, t_k = t_{k-1} coef(k - 1) x / k, until the terms are negligible."""
    eps = float(np.finfo(x.dtype).eps)

    def body(c):
        k, term, s, active = c
        term = term * coef(k) * x / (k + 1)
        s = s + term
        return k + 1, term, s, active & (jnp.abs(term) > eps * jnp.abs(s))
    zero = jnp.zeros_like(x)
    return iterate_while_active(body, (zero, zero + 1, zero + 1, zero == 0), 3)[2]


@custom_jvp
def _hyp1f1(a, b, x):
    # Kummer's transformation M(a, b, x) = e^x M(b - a, b, -x) keeps the series' terms from
    # cancelling for negative x
    neg = x < 0
    aa = jnp.where(neg, b - a, a)
    series = _hyp_series(lambda k: (aa + k) / (b + k), jnp.abs(x), 2)
    return jnp.where(neg, jnp.exp(x) * series, series)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (_, _, t) = primals, tangents
    out = _hyp1f1(a, b, x)
    return out, t * a / b * _hyp1f1(a + 1, b + 1, x)


def hyp1f1(a, b, x, /):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!.
    Differentiable in x (as JAX)."""
    a, b, x = _promoted("hyp1f1", a, b, x)
    return _hyp1f1(a, b, x)


@custom_jvp
def _hyp2f1(a, b, c, x):
    # Pfaff's transformation maps x < 0 into [0, 1/2): (1 - x)^-a 2F1(a, c - b; c; x / (x - 1))
    neg = x < 0
    bb = jnp.where(neg, c - b, b)
    xx = jnp.where(neg, x / (x - 1), x)
    series = _hyp_series(lambda k: (a + k) * (bb + k) / (c + k), xx, 3)
    return jnp.where(neg, (1 - x) ** -a * series, series)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    (a, b, c, x), (_, _, _, t) = primals, tangents
    out = _hyp2f1(a, b, c, x)
    return out, t * a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x)


def hyp2f1(a, b, c, x, /):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for x < 1 by its series (with Pfaff's
    transformation for x < 0); it converges slowly as x approaches 1 and is NaN for x >= 1
    (unlike scipy, which continues analytically). Differentiable in x."""
    a, b, c, x = _promoted("hyp2f1", a, b, c, x)
    value = _hyp2f1(a, b, c, jnp.where(x < 1, x, 0.0))
    return jnp.where(x < 1, value, jnp.nan)


# --- spherical harmonics -------------------------------------------------------------------------

def _normalized_legendre(n_max: int, m_abs, cos_t, sin_t):
    """P_n^|m|(cos t) normalised so that Y = P * exp(i m phi), for n = 0..n_max, by the stable
    recurrences: diagonal P_m^m, then P_{m+1}^m, then upward in n (a list indexed by n)."""
    four_pi = 4 * np.pi
    pmm = jnp.full_like(cos_t, float(np.sqrt(1 / four_pi)))
    rows = {}
    for m in range(n_max + 1):
        if m > 0:  # P_m^m = -sqrt((2m + 1) / 2m) sin(t) P_{m-1}^{m-1}
            pmm = -float(np.sqrt((2 * m + 1) / (2 * m))) * sin_t * pmm
        rows[(m, m)] = pmm
        if m + 1 <= n_max:
            rows[(m + 1, m)] = float(np.sqrt(2 * m + 3)) * cos_t * pmm
        for n in range(m + 2, n_max + 1):
            a = np.sqrt((4 * n * n - 1) / (n * n - m * m))
            b = np.sqrt(((n - 1) ** 2 - m * m) / (4 * (n - 1) ** 2 - 1))
            rows[(n, m)] = float(a) * (cos_t * rows[(n - 1, m)] - float(b) * rows[(n - 2, m)])
    return rows


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi) (scipy's `sph_harm_y` convention: theta is the
    polar angle, phi the azimuth; Condon-Shortley phase included). `n_max` (static) bounds the
    degree; when omitted it is read from the concrete `n`. Derivatives (`diff_n`) beyond 0 are
    not supported."""
    if diff_n not in (None, 0):
        raise NotImplementedError("sph_harm_y: only diff_n=0 is supported")
    n, m = jnp.asarray(n), jnp.asarray(m)
    if n_max is None:
        n_max = int(np.max(np.asarray(n)))
    theta, phi = _promoted("sph_harm_y", theta, phi)
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    m_abs = jnp.abs(m)
    rows = _normalized_legendre(int(n_max), m_abs, jnp.cos(theta), jnp.sin(theta))
    p = jnp.zeros_like(theta)
    for (degree, order), val in rows.items():
        p = jnp.where((n == degree) & (m_abs == order), val, p)
    # Y_n^{-m} = (-1)^m conj(Y_n^m)
    p = jnp.where((m < 0) & (jnp.remainder(m_abs, 2) == 1), -p, p)
    complex_dtype = jnp.result_type(theta.dtype, np.complex64)
    phase = jnp.exp(1j * (m.astype(theta.dtype) * phi).astype(complex_dtype))
    return p.astype(complex_dtype) * phase


# --- the Faddeeva function -----------------------------------------------------------------------

def _weideman_coefficients(n: int):
    """Coefficients of Weideman's rational approximation of w(z) (SIAM J. Numer. Anal. 31,
    1994): the Fourier coefficients of exp(-t^2) (L^2 + t^2) on the map t = L tan(theta / 2)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    scale = np.sqrt(n / np.sqrt(2))
    t = scale * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t ** 2) * (scale ** 2 + t ** 2)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return np.flipud(a[1:n + 1]), float(scale)


_WEIDEMAN = _weideman_coefficients(40)


def wofz(z, /):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-i z), by Weideman's 40-term rational
    approximation in the upper half plane (relative error ~1e-14) and w(z) = 2 exp(-z^2) - w(-z)
    below it. Real input is promoted to complex."""
    z = jnp.asarray(z)
    complex_dtype = jnp.result_type(z.dtype, np.complex64)
    if jnp.issubdtype(z.dtype, jnp.integer) or z.dtype == np.float16:
        complex_dtype = jnp.result_type(jnp.zeros(()).dtype, np.complex64)
    z = z.astype(complex_dtype)
    coeffs, scale = _WEIDEMAN
    upper = jnp.imag(z) >= 0
    zz = jnp.where(upper, z, -z)
    iz = 1j * zz
    denominator = scale - iz
    ratio = (scale + iz) / denominator
    poly = jnp.zeros_like(z)
    for c in coeffs:  # Horner
        poly = poly * ratio + float(c)
    value = 2 * poly / (denominator * denominator) + float(1 / np.sqrt(np.pi)) / denominator
    return jnp.where(upper, value, 2 * jnp.exp(-z * z) - value)
